"""libcurl error codes -> crawlfw download exceptions, in one table.

libcurl reports a failed transfer with a ``CURLE_*`` code (``curl/curl.h``; the
numbers below are libcurl's ABI and never change) plus a human-readable error
buffer. :func:`exception_for` turns the pair into the matching subclass of
:class:`crawlfw.exceptions.DownloadError`, so retry logic and user errbacks see
``DownloadTimeoutError`` / ``DNSLookupError`` / ``ConnectionRefusedError``... the way
Scrapy 1.2's ``RetryMiddleware`` sees Twisted's ``TimeoutError`` / ``DNSLookupError`` /
``ConnectionRefusedError``.

The rules are tried in order, the most specific first; the first match wins:

====================  =========================================================
exception             libcurl codes
====================  =========================================================
ConnectionRefused     7 (``COULDNT_CONNECT``) whose OS errno is ``ECONNREFUSED``
DownloadTimeoutError  28 (``OPERATION_TIMEDOUT``: connect or total timeout)
DNSLookupError        5 (``COULDNT_RESOLVE_PROXY``), 6 (``COULDNT_RESOLVE_HOST``)
ConnectError          7 (other errno), 15 (``FTP_CANT_GET_HOST``),
                      45 (``INTERFACE_FAILED``: bind address), 96
                      (``QUIC_CONNECT_ERROR``), 97 (``PROXY``: proxy handshake)
ConnectionLostError   52 (``GOT_NOTHING``), 55 (``SEND_ERROR``), 56 (``RECV_ERROR``)
TLSError              35, 53, 54, 58, 59, 60, 64, 66, 77, 80, 82, 83, 90, 91, 98, 101
ResponseHeaders-      100 (``TOO_LARGE``: a response header over 100 KiB, or over
TooLarge              5000 headers) and 56 whose text is "Too large response
                      headers" (over 300 KiB in all), labelled "Response headers
                      too large" (a ``ResponseFailed`` never retried)
ResponseFailed        8 (``WEIRD_SERVER_REPLY``), 16 (``HTTP2``), 18
                      (``PARTIAL_FILE``: body shorter than Content-Length), 61
                      (``BAD_CONTENT_ENCODING``), 92 (``HTTP2_STREAM``), 95
                      (``HTTP3``)
DownloadCancelled     23 (``WRITE_ERROR``: a write callback refused data), 42
                      (``ABORTED_BY_CALLBACK``), 63 (``FILESIZE_EXCEEDED``)
DownloadError         every other code (e.g. 1 unsupported protocol, 3 malformed
                      URL, 37 ``file://`` not readable, 67 FTP login denied)
====================  =========================================================
"""

from __future__ import annotations

import errno as _errno

import pycurl

from crawlfw.exceptions import (
    ConnectError,
    ConnectionLostError,
    ConnectionRefusedError,
    DNSLookupError,
    DownloadCancelled,
    DownloadError,
    DownloadTimeoutError,
    ResponseFailed,
    ResponseHeadersTooLarge,
    TLSError,
)

__all__ = ["exception_for", "CURL_CODE_TABLE"]

#: OS errno values meaning "the peer refused the connection" (POSIX, and Winsock's
#: WSAECONNREFUSED for a libcurl built on Windows).
_REFUSED_ERRNOS = frozenset({_errno.ECONNREFUSED, 10061})

_CURLE_COULDNT_CONNECT = 7

#: ``(exception class, label, codes)`` in priority order (see the module docstring).
#: The label starts the exception message: ``"<label>: <url> (curl <code>: <text>)"``.
CURL_CODE_TABLE: tuple[tuple[type[DownloadError], str, frozenset[int]], ...] = (
    (DownloadTimeoutError, "Download timed out", frozenset({28})),
    (DNSLookupError, "Proxy DNS lookup failed", frozenset({5})),
    (DNSLookupError, "DNS lookup failed", frozenset({6})),
    (ConnectError, "Connection failed", frozenset({7, 15, 45, 96, 97})),
    (ConnectionLostError, "Connection lost", frozenset({52, 55, 56})),
    (
        TLSError,
        "TLS error",
        frozenset({35, 53, 54, 58, 59, 60, 64, 66, 77, 80, 82, 83, 90, 91, 98, 101}),
    ),
    (ResponseFailed, "Response failed", frozenset({8, 16, 18, 61, 92, 95, 100})),
    (DownloadCancelled, "Download cancelled", frozenset({23, 42, 63})),
)

#: Label of the header-size errors (code 100, and 56 with a header text).
_HEADERS_TOO_LARGE = (ResponseHeadersTooLarge, "Response headers too large")

#: Texts for codes pycurl has no name for, used when curl left its error buffer empty
#: (libcurl's ``curl_easy_strerror`` wording, with the limits of ``lib/http.c``).
_CODE_TEXTS = {
    100: "a response header is larger than libcurl accepts (100 KiB for one header, "
         "300 KiB for all of them)",
}

_BY_CODE: dict[int, tuple[type[DownloadError], str]] = {}
for _cls, _label, _codes in CURL_CODE_TABLE:
    for _code in _codes:
        _BY_CODE.setdefault(_code, (_cls, _label))

#: libcurl code -> pycurl constant name (``E_COULDNT_CONNECT``...), used when curl
#: left its error buffer empty.
_CODE_NAMES: dict[int, str] = {}
for _name in dir(pycurl):
    if _name.startswith("E_") and not _name.startswith(("E_MULTI_", "E_OK")):
        _CODE_NAMES.setdefault(getattr(pycurl, _name), _name)


def exception_for(curl_code: int, curl_message: str, url: str, os_errno: int = 0) -> DownloadError:
    """Build the crawlfw exception for a failed libcurl transfer.

    Args:
        curl_code: the libcurl ``CURLE_*`` code of the failed transfer (non-zero).
        curl_message: libcurl's error buffer for the transfer (may be empty; the
            code's name is used then).
        url: the URL that was being fetched; named in the message and stored in
            the exception's ``url``.
        os_errno: the OS errno libcurl saw (``pycurl.OS_ERRNO``), 0 when unknown.
            Only used to tell ``ECONNREFUSED`` apart for code 7.

    Returns:
        A new (not raised) instance of the most specific
        :class:`~crawlfw.exceptions.DownloadError` subclass, with ``curl_code``
        and ``url`` set and a message such as
        ``"Connection refused: http://127.0.0.1:1/ (curl 7: Failed to connect to
        127.0.0.1 port 1 after 0 ms: Couldn't connect to server)"``.
    """
    text = (curl_message or _CODE_TEXTS.get(curl_code)
            or _CODE_NAMES.get(curl_code, "unknown error"))
    cls: type[DownloadError]
    label: str
    if curl_code == _CURLE_COULDNT_CONNECT and os_errno in _REFUSED_ERRNOS:
        cls, label = ConnectionRefusedError, "Connection refused"
    elif curl_code == 100 or (curl_code == 56 and text.startswith("Too large response headers")):
        cls, label = _HEADERS_TOO_LARGE
    else:
        cls, label = _BY_CODE.get(curl_code, (DownloadError, "Download failed"))
    return cls(f"{label}: {url} (curl {curl_code}: {text})", url, curl_code)
