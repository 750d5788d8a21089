"""curl error code -> crawlfw exception mapping."""

import builtins
import errno
import pickle

import pytest

from crawlfw.core.transport._curl_errors import CURL_CODE_TABLE, exception_for
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

URL = "http://example.com/page"


@pytest.mark.parametrize(
    "code, os_errno, cls, label",
    [
        (7, errno.ECONNREFUSED, ConnectionRefusedError, "Connection refused"),
        (7, errno.EHOSTUNREACH, ConnectError, "Connection failed"),
        (7, 0, ConnectError, "Connection failed"),
        (28, 0, DownloadTimeoutError, "Download timed out"),
        (28, errno.ECONNREFUSED, DownloadTimeoutError, "Download timed out"),
        (6, 0, DNSLookupError, "DNS lookup failed"),
        (5, 0, DNSLookupError, "Proxy DNS lookup failed"),
        (45, 0, ConnectError, "Connection failed"),
        (97, 0, ConnectError, "Connection failed"),
        (52, 0, ConnectionLostError, "Connection lost"),
        (55, 0, ConnectionLostError, "Connection lost"),
        (56, errno.ECONNRESET, ConnectionLostError, "Connection lost"),
        (35, 0, TLSError, "TLS error"),
        (60, 0, TLSError, "TLS error"),
        (8, 0, ResponseFailed, "Response failed"),
        (18, 0, ResponseFailed, "Response failed"),
        (61, 0, ResponseFailed, "Response failed"),
        (100, 0, ResponseHeadersTooLarge, "Response headers too large"),
        (23, 0, DownloadCancelled, "Download cancelled"),
        (42, 0, DownloadCancelled, "Download cancelled"),
        (63, 0, DownloadCancelled, "Download cancelled"),
        (1, 0, DownloadError, "Download failed"),
        (3, 0, DownloadError, "Download failed"),
        (37, 0, DownloadError, "Download failed"),
        (9999, 0, DownloadError, "Download failed"),
    ],
)
def test_code_to_exception(code, os_errno, cls, label):
    exc = exception_for(code, "curl says no", URL, os_errno)
    assert type(exc) is cls
    assert isinstance(exc, DownloadError)
    assert str(exc) == f"{label}: {URL} (curl {code}: curl says no)"
    assert exc.url == URL
    assert exc.curl_code == code


def test_message_example_from_the_docs():
    exc = exception_for(
        7,
        "Failed to connect to 127.0.0.1 port 1 after 0 ms: Couldn't connect to server",
        "http://127.0.0.1:1/",
        errno.ECONNREFUSED,
    )
    assert str(exc) == (
        "Connection refused: http://127.0.0.1:1/ (curl 7: Failed to connect to 127.0.0.1 "
        "port 1 after 0 ms: Couldn't connect to server)"
    )


def test_empty_message_uses_the_code_name():
    assert (
        str(exception_for(28, "", URL))
        == f"Download timed out: {URL} (curl 28: E_OPERATION_TIMEDOUT)"
    )
    assert "unknown error" in str(exception_for(9999, "", URL))
    # pycurl has no name for CURLE_TOO_LARGE (100): its meaning is spelled out
    assert str(exception_for(100, "", URL)) == (
        f"Response headers too large: {URL} (curl 100: a response header is larger than "
        "libcurl accepts (100 KiB for one header, 300 KiB for all of them))")


def test_too_large_response_headers_on_code_56():
    exc = exception_for(56, "Too large response headers: 350073 > 307200", URL)
    assert type(exc) is ResponseHeadersTooLarge and isinstance(exc, ResponseFailed)
    assert str(exc) == (f"Response headers too large: {URL} (curl 56: Too large response "
                        "headers: 350073 > 307200)")
    assert type(exception_for(56, "Connection reset by peer", URL)) is ConnectionLostError


@pytest.mark.parametrize(
    "code, os_errno, builtin",
    [
        (28, 0, builtins.TimeoutError),
        (6, 0, builtins.OSError),
        (7, errno.ECONNREFUSED, builtins.ConnectionRefusedError),
        (7, 0, builtins.ConnectionError),
        (56, 0, builtins.ConnectionError),
    ],
)
def test_builtin_bases_for_retry_logic(code, os_errno, builtin):
    assert isinstance(exception_for(code, "x", URL, os_errno), builtin)


def test_pickles():
    exc = exception_for(7, "refused", URL, errno.ECONNREFUSED)
    again = pickle.loads(pickle.dumps(exc))
    assert type(again) is ConnectionRefusedError
    assert (str(again), again.url, again.curl_code) == (str(exc), URL, 7)


def test_table_codes_are_unique():
    seen = [code for _, _, codes in CURL_CODE_TABLE for code in codes]
    assert len(seen) == len(set(seen))
