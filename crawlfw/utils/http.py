"""HTTP helpers (Scrapy 1.2's ``scrapy.utils.http``, a transitional module).

Scrapy 1.2 re-exports ``w3lib.http`` here; new code should import from ``w3lib.http``.
"""

from w3lib.http import basic_auth_header, headers_dict_to_raw, headers_raw_to_dict

__all__ = ["basic_auth_header", "headers_dict_to_raw", "headers_raw_to_dict",
           "decode_chunked_transfer"]


def decode_chunked_transfer(chunked_body: bytes) -> bytes:
    """Decode a body sent with ``Transfer-Encoding: chunked`` (RFC 9112 section 7.1).

    Chunk extensions (``;name=value`` after the size) are ignored, and so is a trailer
    section after the last (zero-size) chunk. libcurl already de-chunks downloaded
    bodies; this is for raw bytes from elsewhere.

    Args:
        chunked_body: the raw body (``bytes``; ``str`` is encoded as Latin-1).

    Returns:
        bytes: the decoded body.

    Raises:
        ValueError: a chunk size is not hexadecimal, or a chunk is shorter than its size.
    """
    if isinstance(chunked_body, str):
        chunked_body = chunked_body.encode("latin-1")
    body = []
    pos = 0
    while pos < len(chunked_body):
        line_end = chunked_body.find(b"\r\n", pos)
        if line_end < 0:
            line_end = len(chunked_body)
        size_field = chunked_body[pos:line_end].split(b";", 1)[0].strip()
        try:
            size = int(size_field, 16)
        except ValueError:
            raise ValueError(
                f"invalid chunk size {size_field[:20]!r} at byte {pos} of a chunked body"
            ) from None
        if size == 0:
            break
        start = line_end + 2
        chunk = chunked_body[start:start + size]
        if len(chunk) != size:
            raise ValueError(f"chunk at byte {start} is {len(chunk)} bytes, its size says {size}")
        body.append(chunk)
        pos = start + size + 2  # the CRLF after the data
    return b"".join(body)
