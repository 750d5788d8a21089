"""The server certificate of an HTTPS response: :attr:`crawlfw.http.Response.certificate`.

Scrapy 2 gives a ``twisted.internet.ssl.Certificate`` there; crawlfw has no Twisted, so
:class:`Certificate` offers the part of its interface that spiders use
(``getSubject()``, ``getIssuer()``, ``dumpPEM()``, ``digest()``, ``serialNumber()``),
built from what curl reports with ``CURLOPT_CERTINFO`` (``CURLINFO_CERTINFO``: per
certificate of the chain the server sent, leaf first, ``(field, text)`` pairs with
OpenSSL's one-line names, ``"CN = example.com, O = Example"``, and the PEM under
``Cert``). Everything is parsed on first use: a crawl that never reads a certificate
pays for none.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Sequence

__all__ = ["Certificate", "DistinguishedName"]

#: OpenSSL short names -> the attribute names of Twisted's DistinguishedName.
_LONG_NAMES = {
    "CN": "commonName",
    "O": "organizationName",
    "OU": "organizationalUnitName",
    "C": "countryName",
    "L": "localityName",
    "ST": "stateOrProvinceName",
    "emailAddress": "emailAddress",
}

# One "SN = value" of OpenSSL's XN_FLAG_ONELINE form, then its separator: ", " between
# RDNs, " + " inside a multi-valued one. A value holding a special character is quoted
# whole; a backslash escapes one character or, with two hex digits, a byte.
_ATTRIBUTE = re.compile(
    r'\s*(?P<name>[^=,+]+?)\s*=\s*(?P<value>"(?:[^"\\]|\\.)*"|(?:[^,+\\]|\\.)*?)\s*(?:,|\+|$)'
)
_ESCAPE = re.compile(r"\\([0-9A-Fa-f]{2}|.)")


def _unescape(value: str) -> bytes:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
    out = bytearray()
    pos = 0
    for match in _ESCAPE.finditer(value):
        out += value[pos:match.start()].encode("utf-8")
        escaped = match.group(1)
        out += bytes([int(escaped, 16)]) if len(escaped) == 2 else escaped.encode("utf-8")
        pos = match.end()
    out += value[pos:].encode("utf-8")
    return bytes(out)


class DistinguishedName(dict):
    """A certificate's subject or issuer: ``{name: bytes value}`` whose names are also
    attributes (``dn.commonName``), as Twisted's ``DistinguishedName``: ``commonName``,
    ``organizationName``, ``organizationalUnitName``, ``countryName``,
    ``localityName``, ``stateOrProvinceName``, ``emailAddress``, other attributes
    under OpenSSL's short name. A name absent from the certificate reads as None.
    """

    __slots__ = ()

    @classmethod
    def parse(cls, text: str) -> DistinguishedName:
        """Build one from OpenSSL's one-line text (``"CN = a.example, O = A"``); the
        last value of a repeated name wins."""
        dn = cls()
        for match in _ATTRIBUTE.finditer(text):
            name = match.group("name")
            if name:
                dn[_LONG_NAMES.get(name, name)] = _unescape(match.group("value"))
        return dn

    def __getattr__(self, name: str) -> bytes | None:
        if name.startswith("__"):
            raise AttributeError(name)
        return self.get(name)

    def __repr__(self) -> str:
        return "<DN " + ", ".join(f"{k!r}: {v!r}" for k, v in self.items()) + ">"


class Certificate:
    """The server certificate of an HTTPS response (the first of the chain).

    Args:
        chain: what curl's ``CURLINFO_CERTINFO`` gives: one sequence of
            ``(field, text)`` pairs per certificate, the server's first.

    Attributes:
        chain: ``[{field: text}, ...]``, every certificate curl reported, leaf first
            (``"Subject"``, ``"Issuer"``, ``"Serial Number"``, ``"Start date"``,
            ``"Expire date"``, ``"Cert"`` (PEM), ...).

    Raises:
        ValueError: ``chain`` is empty.
    """

    __slots__ = ("_raw", "_chain")

    def __init__(self, chain: Sequence[Sequence[tuple[str, str]]]):
        if not chain:
            raise ValueError("Certificate needs the certificate chain curl reported, got none")
        self._raw = chain
        self._chain: list[dict[str, str]] | None = None

    @property
    def chain(self) -> list[dict[str, str]]:
        if self._chain is None:
            self._chain = [dict(fields) for fields in self._raw]
        return self._chain

    @property
    def fields(self) -> dict[str, str]:
        """The server certificate's fields (``chain[0]``)."""
        return self.chain[0]

    def getSubject(self) -> DistinguishedName:  # noqa: N802 (Twisted's name)
        """The subject's names (``.commonName``...: bytes)."""
        return DistinguishedName.parse(self.fields.get("Subject", ""))

    def getIssuer(self) -> DistinguishedName:  # noqa: N802 (Twisted's name)
        """The issuer's names (``.commonName``...: bytes)."""
        return DistinguishedName.parse(self.fields.get("Issuer", ""))

    def dumpPEM(self) -> bytes:  # noqa: N802 (Twisted's name)
        """The certificate in PEM (RFC 7468), ASCII bytes ending with a newline.

        Raises:
            ValueError: curl reported no PEM (a TLS backend without it).
        """
        pem = self.fields.get("Cert")
        if not pem:
            raise ValueError("curl reported no PEM for this certificate")
        pem = pem.strip() + "\n"
        return pem.encode("ascii")

    def dump(self) -> bytes:
        """The certificate in DER (ASN.1), bytes.

        Raises:
            ValueError: curl reported no PEM.
        """
        lines = self.dumpPEM().decode("ascii").splitlines()
        return base64.b64decode("".join(line for line in lines if not line.startswith("-----")))

    def digest(self, method: str = "md5") -> bytes:
        """The DER's digest with ``method`` (a :mod:`hashlib` name), as Twisted gives it:
        upper-case hex bytes joined by ``:`` (``b"07:4A:..."``).

        Raises:
            ValueError: an unknown ``method``, or no PEM.
        """
        hexdigest = hashlib.new(method, self.dump()).hexdigest().upper()
        return ":".join(hexdigest[i:i + 2] for i in range(0, len(hexdigest), 2)).encode("ascii")

    def serialNumber(self) -> int:  # noqa: N802 (Twisted's name)
        """The serial number, an int.

        Raises:
            ValueError: curl reported none.
        """
        serial = self.fields.get("Serial Number", "").replace(":", "").strip()
        if not serial:
            raise ValueError("curl reported no serial number for this certificate")
        return int(serial, 16)

    def __repr__(self) -> str:
        return (f"<Certificate Subject={self.getSubject().commonName!r} "
                f"Issuer={self.getIssuer().commonName!r}>")
