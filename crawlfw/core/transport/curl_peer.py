"""What a downloaded response says of its peer, from curl (Scrapy 2's
``Response.protocol`` and ``Response.certificate``); ``Response.ip_address`` is
``CURLINFO_PRIMARY_IP``, read by :class:`~crawlfw.core.transport.curl.MultiDriver` with
the other timings.

Used on the driver's thread only, like the handles it reads.
"""

from __future__ import annotations

import pycurl

from crawlfw.http._certificate import Certificate

__all__ = ["PROTOCOLS", "ConnectionCertificates"]

#: CURLINFO_HTTP_VERSION -> Response.protocol, spelled as Scrapy 2's handlers spell it
#: (Twisted's HTTP/1.x status line version; httpx's "HTTP/2").
PROTOCOLS = {
    pycurl.CURL_HTTP_VERSION_1_0: "HTTP/1.0",
    pycurl.CURL_HTTP_VERSION_1_1: "HTTP/1.1",
    pycurl.CURL_HTTP_VERSION_2_0: "HTTP/2",
    getattr(pycurl, "CURL_HTTP_VERSION_3", 30): "HTTP/3",
}

#: How many connections' certificates are kept: more than the connections a driver can
#: hold open (its maxconnects) in any setting used.
_MAX_CERTIFICATES = 1024


class ConnectionCertificates:
    """The server certificate of each TLS connection of one multi handle
    (``CURLINFO_CONN_ID`` -> :class:`~crawlfw.http._certificate.Certificate`, or None
    when curl gave none), oldest first; connection ids are never reused.

    curl reports the chain (``CURLOPT_CERTINFO``, set on every handle) only on the
    transfer that made the connection: it is read there, once, and the same object is
    given to every response of the connection. A handshake costs curl the chain's text
    form; a reused connection costs two ``getinfo`` calls.
    """

    __slots__ = ("_by_conn",)

    def __init__(self) -> None:
        self._by_conn: dict[int, Certificate | None] = {}

    def __len__(self) -> int:
        return len(self._by_conn)

    def for_transfer(self, c: pycurl.Curl) -> Certificate | None:
        """The certificate of the connection the finished transfer ``c`` used."""
        getinfo = c.getinfo
        conn = getinfo(pycurl.CONN_ID)
        by_conn = self._by_conn
        if not getinfo(pycurl.NUM_CONNECTS):  # a reused connection: curl reports no chain
            return by_conn.get(conn)
        try:
            chain = getinfo(pycurl.INFO_CERTINFO)
        except pycurl.error:  # a TLS backend without CERTINFO
            chain = None
        cert = Certificate(chain) if chain else None
        if len(by_conn) >= _MAX_CERTIFICATES:
            del by_conn[next(iter(by_conn))]
        by_conn[conn] = cert
        return cert
