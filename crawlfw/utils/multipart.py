"""``multipart/form-data`` encoding (Scrapy 1.2's ``scrapy.utils.multipart``, a
transitional module re-exporting ``w3lib.form``, which w3lib 2 removed; crawlfw keeps
its one function)."""

import uuid

__all__ = ["encode_multipart"]


def encode_multipart(data):
    """Encode form fields as a ``multipart/form-data`` body (RFC 7578).

    Args:
        data: a mapping of field name (``str``) to a value or a list of values; a value
            is ``str`` (sent UTF-8 encoded), ``bytes``, or a ``(filename, content)``
            tuple for a file (``content`` ``str`` or ``bytes``).

    Returns:
        ``(body, boundary)``: the body (``bytes``) and the boundary (``str``) to put in
        ``Content-Type: multipart/form-data; boundary=<boundary>``.

    Raises:
        TypeError: a value has another type (the message names the field).
    """
    boundary = f"----------crawlfw-{uuid.uuid4().hex}"
    delimiter = f"--{boundary}".encode("ascii")
    parts = []
    for name, values in data.items():
        if not isinstance(values, list):
            values = [values]
        for value in values:
            disposition = f'form-data; name="{_quote(name)}"'
            if isinstance(value, tuple):
                filename, value = value
                disposition += f'; filename="{_quote(filename)}"'
            if isinstance(value, str):
                value = value.encode("utf-8")
            elif not isinstance(value, bytes):
                raise TypeError(
                    f"multipart field {name!r}: value must be str, bytes or "
                    f"(filename, content), got {type(value).__name__}"
                )
            header = f"Content-Disposition: {disposition}\r\n\r\n".encode()
            parts.append(delimiter + b"\r\n" + header + value + b"\r\n")
    return b"".join(parts) + delimiter + b"--\r\n", boundary


def _quote(text: str) -> str:
    """Escape a name for a quoted header parameter, as browsers do (WHATWG HTML,
    "multipart/form-data encoding algorithm")."""
    return str(text).replace('"', "%22").replace("\r", "%0D").replace("\n", "%0A")
