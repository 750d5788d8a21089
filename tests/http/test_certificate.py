"""Response.certificate's object (crawlfw.http._certificate): the part of Twisted's
``Certificate`` interface Scrapy spiders use, built from curl's CERTINFO fields."""

import pytest

from crawlfw.http._certificate import Certificate, DistinguishedName


@pytest.mark.parametrize("text, expected", [
    ("CN = 127.0.0.1", {"commonName": b"127.0.0.1"}),
    ("C = US, O = Let's Encrypt, CN = R3",
     {"countryName": b"US", "organizationName": b"Let's Encrypt", "commonName": b"R3"}),
    # OpenSSL's one-line form (curl's, checked against a real certificate): a value with
    # a special character quoted whole, a quote escaped, non-ASCII as \\XX UTF-8 bytes,
    # " + " inside a multi-valued RDN
    ('CN = 127.0.0.1, O = "Foo, Inc. \\"Q\\"", OU = R&D + serialNumber = 7, L = Z\\C3\\BCrich',
     {"commonName": b"127.0.0.1", "organizationName": b'Foo, Inc. "Q"',
      "organizationalUnitName": b"R&D", "serialNumber": b"7",
      "localityName": "Z\xfcrich".encode()}),
    ("ST = Some-State, emailAddress = a@b.c",
     {"stateOrProvinceName": b"Some-State", "emailAddress": b"a@b.c"}),
    ("", {}),
])
def test_distinguished_name_parse(text, expected):
    dn = DistinguishedName.parse(text)
    assert dict(dn) == expected
    for name, value in expected.items():
        assert getattr(dn, name) == value
    assert dn.organizationalUnitName == expected.get("organizationalUnitName")


def test_certificate_fields_and_errors():
    chain = [
        [("Subject", "CN = leaf"), ("Issuer", "CN = ca"), ("Serial Number", "0a:1b")],
        [("Subject", "CN = ca"), ("Issuer", "CN = ca")],
    ]
    cert = Certificate(chain)
    assert cert.serialNumber() == 0x0A1B
    assert [c["Subject"] for c in cert.chain] == ["CN = leaf", "CN = ca"]
    assert repr(cert) == "<Certificate Subject=b'leaf' Issuer=b'ca'>"
    with pytest.raises(ValueError, match="no PEM"):
        cert.dumpPEM()
    with pytest.raises(ValueError, match="got none"):
        Certificate([])
