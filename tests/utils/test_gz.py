"""crawlfw.utils.gz: tolerant gunzip and is_gzipped."""

import gzip

import pytest

from crawlfw.http import Response
from crawlfw.utils.gz import DecompressionMaxSizeExceeded, gunzip, is_gzipped

DATA = b"".join(b"line %d of some text\n" % i for i in range(5000))
GZ = gzip.compress(DATA, mtime=0)  # no time in the header: the same test ids each run


@pytest.mark.parametrize(
    "compressed, expected",
    [
        (GZ, DATA),
        (GZ + GZ, DATA + DATA),  # concatenated members (RFC 1952 §2.2)
        (GZ + b"trailing junk", DATA),
        (GZ + b"\x00" * 16, DATA),  # zero padding some servers add
        (gzip.compress(b"", mtime=0), b""),
        (b"", b""),
    ],
)
def test_gunzip(compressed, expected):
    assert gunzip(compressed) == expected


@pytest.mark.parametrize("cut", [0.25, 0.5, 0.9, -4, -8])
def test_truncated_keeps_decoded_prefix(cut):
    end = int(len(GZ) * cut) if isinstance(cut, float) else cut
    result = gunzip(GZ[:end])
    assert result and DATA.startswith(result)


@pytest.mark.parametrize("data", [b"not gzip at all", GZ[:5], b"\x1f\x8b\x08\x00garbage" * 3])
def test_invalid_raises_oserror(data):
    with pytest.raises(OSError):
        gunzip(data)


def test_max_size():
    assert gunzip(GZ, max_size=len(DATA)) == DATA
    with pytest.raises(DecompressionMaxSizeExceeded):
        gunzip(GZ, max_size=len(DATA) - 1)
    with pytest.raises(DecompressionMaxSizeExceeded):
        gunzip(GZ + GZ, max_size=len(DATA) + 10)


def test_real_sitemap_truncated_like_a_dropped_connection(sites_dir):
    """aegisub.org's sitemap index, gzip'd, cut mid-stream: the decoded prefix is the
    start of the real file."""
    xml = (sites_dir / "aegisub.org" / "sitemap.xml").read_bytes()
    compressed = gzip.compress(xml, compresslevel=6)
    assert gunzip(compressed) == xml
    partial = gunzip(compressed[: len(compressed) * 2 // 3])
    assert partial and xml.startswith(partial) and len(partial) < len(xml)


@pytest.mark.parametrize(
    "headers, expected",
    [
        ({"Content-Type": "application/x-gzip"}, True),
        ({"Content-Type": "application/gzip"}, True),
        ({"Content-Type": "application/gzip;charset=utf-8"}, True),
        ({"Content-Type": "Application/X-Gzip"}, True),
        ({"Content-Type": "application/octet-stream", "Content-Encoding": "gzip"}, True),
        ({"Content-Type": "binary/octet-stream", "Content-Encoding": "x-gzip"}, True),
        ({"Content-Type": "application/octet-stream"}, False),
        ({"Content-Type": "text/html", "Content-Encoding": "gzip"}, False),
        ({"Content-Type": "application/gzipped"}, False),
        ({}, False),
    ],
)
def test_is_gzipped(headers, expected):
    assert is_gzipped(Response("http://example.com/", headers=headers)) is expected
