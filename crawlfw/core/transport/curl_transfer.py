"""One transfer's side of :class:`crawlfw.core.transport.curl.MultiDriver`: its state
(``_Transfer``), the request header lines given to curl, the parsing of the response's
header lines, the body writer that enforces ``DOWNLOAD_MAXSIZE``/``DOWNLOAD_WARNSIZE``,
and Scrapy 2's ``headers_received``/``bytes_received`` stream signals
(:class:`StreamSignals`); split from :mod:`crawlfw.core.transport.curl` (issue 19).
Thread-free, like the driver: every function runs on the driver's thread."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol
from urllib.parse import urlsplit

import pycurl

from crawlfw.exceptions import (
    DownloadCancelled,
    DownloadError,
)
from crawlfw.http import Headers

if TYPE_CHECKING:
    from crawlfw.exceptions import StopDownload
    from crawlfw.http import Request, Response

logger = logging.getLogger(__name__)

__all__ = ["Result", "StreamSignals"]

# Request headers curl would add on its own unless told not to ("Name:" with no
# value removes an internal header): lower-case name -> suppressing line.
_SUPPRESS = {
    b"accept": b"Accept:",  # curl adds "Accept: */*"
    b"expect": b"Expect:",  # curl adds "Expect: 100-continue" for bodies > 1 MiB
    b"content-type": b"Content-Type:",  # curl adds a form content type with POSTFIELDS
}
_SUPPRESS_ALL = list(_SUPPRESS.values())

class StreamSignals(Protocol):
    """What :attr:`~crawlfw.core.transport.curl.MultiDriver.stream_signals` is: Scrapy 2's ``headers_received`` and
    ``bytes_received`` signals, sent on the driver's thread."""

    def wanted(self) -> bool:
        """True when a handler is connected (checked once per transfer)."""

    def headers_received(self, headers: Headers, body_length: int,
                         request: Request) -> StopDownload | None:
        """The final header block is complete; a StopDownload stops the transfer."""

    def bytes_received(self, data: bytes, request: Request) -> StopDownload | None:
        """A body chunk was kept; a StopDownload stops the transfer."""


class Result(NamedTuple):
    """One finished transfer, returned by :meth:`MultiDriver.perform`.

    Exactly one of ``response`` and ``error`` is not None.

    Attributes:
        request: the :class:`crawlfw.http.Request` given to :meth:`MultiDriver.add`.
        response: the :class:`crawlfw.http.Response` (or subclass chosen by
            ``crawlfw.responsetypes``) on success, whatever the HTTP status; else None.
        error: a :class:`crawlfw.exceptions.DownloadError` subclass instance (not
            raised) when the transfer failed below HTTP or was cancelled, or the
            :class:`crawlfw.exceptions.StopDownload` a ``headers_received`` /
            ``bytes_received`` handler raised with ``fail=True`` (its ``response`` set);
            else None.
        download_latency_s: seconds from the start of the transfer to the first
            response byte (curl's ``STARTTRANSFER_TIME``; ``TOTAL_TIME`` when no byte
            arrived). Also stored in ``request.meta['download_latency']`` on success,
            as Scrapy does.
        total_time_s: seconds the whole transfer took (curl's ``TOTAL_TIME``).
        bytes_received: body bytes received (after chunked transfer-decoding, before
            any content decoding); on failure, the bytes received before it.
        remote_ip: the IP address connected to (the proxy's when proxied), or None
            (``file://``, or no connection made).
        resolved_ip: with a ``resolver``, the address that stands for the URL's host in
            its answer (:attr:`crawlfw.core.transport.dns.Answer.ip`; the literal for
            an IP literal), whether or not a connection was made; None without a
            resolver, through a proxy, or for ``localhost`` names.
    """

    request: Request
    response: Response | None
    error: DownloadError | StopDownload | None
    download_latency_s: float
    total_time_s: float
    bytes_received: int
    remote_ip: str | None
    resolved_ip: str | None = None

    @property
    def ok(self) -> bool:
        """True when the transfer produced a response (any HTTP status)."""
        return self.error is None


class _Transfer:
    """Per-transfer state, reachable from the easy handle's callbacks."""

    __slots__ = ("request", "url", "scheme", "chunks", "header_lines", "error", "maxsize", "dirty",
                 "stopped", "resolve_no", "parked", "waiting", "resolve_lines", "ip",
                 "parked_s", "timeout_s")

    def __init__(self, request: Request, url: str, scheme: str, maxsize: int) -> None:
        self.request = request
        self.url = url
        self.scheme = scheme
        self.chunks: list[bytes] = []
        self.header_lines: list[bytes] = []
        self.error: DownloadError | None = None
        self.maxsize = maxsize
        self.dirty = True  # the handle needs reset() before reuse
        self.stopped: StopDownload | None = None  # the StopDownload a stream signal handler raised
        self.resolve_no = 0  # the number of its name lookup (MultiDriver._on_resolver_start)
        # crawlfw's resolver (MultiDriver's ``resolver``):
        self.parked = False  # waiting for name lookups, not in the multi yet
        self.waiting = 0  # lookups it waits for
        self.resolve_lines: list[str] | None = None  # its CURLOPT_RESOLVE entries
        self.ip: str | None = None  # the address standing for its host (PER_IP)
        self.parked_s = 0.0  # time.monotonic() when it parked
        self.timeout_s = 0.0  # DOWNLOAD_TIMEOUT (0: none)

# -- helpers --------------------------------------------------------------------------


def _host_of(url: str) -> str:
    """The host name of ``url`` (``''`` when it has none): what a lookup resolves."""
    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""


def _header_lines(headers: Headers, separate_proxy_auth: bool) -> tuple[list[bytes], list[bytes]]:
    """``CURLOPT_HTTPHEADER`` lines for ``headers`` (+ suppressors), and proxy-only lines.

    Returns:
        ``(lines, proxy_lines)``: ``proxy_lines`` holds ``Proxy-Authorization`` when
        ``separate_proxy_auth`` (it then goes on the CONNECT, not to the origin).

    Raises:
        ValueError: a header name or value contains CR or LF (header injection).
    """
    lines: list[bytes] = []
    proxy_lines: list[bytes] = []
    present = set()
    if headers:
        for name, values in headers.items():
            lname = name.lower()
            if lname in _SUPPRESS:
                present.add(lname)
            target = lines
            if separate_proxy_auth and lname == b"proxy-authorization":
                target = proxy_lines
            for value in values:
                # curl: "Name;" sends a header with an empty value ("Name:" would remove it)
                line = name + b": " + value if value else name + b";"
                # find(), not "in": bytes.__contains__ first tries its argument as an
                # int and raises and clears a TypeError, twice per header line
                if line.find(b"\n") >= 0 or line.find(b"\r") >= 0:
                    raise ValueError(f"Header contains CR or LF: {name!r}: {value!r}")
                target.append(line)
    if not present:
        lines.extend(_SUPPRESS_ALL)
    elif len(present) < len(_SUPPRESS):
        lines.extend(line for lname, line in _SUPPRESS.items() if lname not in present)
    return lines, proxy_lines


def _parse_header_lines(lines: list[bytes]) -> list[tuple[bytes, bytes]]:
    """Header ``(name, value)`` pairs of the LAST response block curl reported.

    Earlier blocks (``100 Continue``, a proxy's ``CONNECT`` reply) and trailers after
    the final blank line are skipped. Obsolete line folding (RFC 7230 §3.2.4) is
    joined with a space.
    """
    start = 0
    for i in range(len(lines) - 1, -1, -1):
        if lines[i][:5] == b"HTTP/":
            start = i + 1
            break
    pairs: list[tuple[bytes, bytes]] = []
    for line in lines[start:] if start else lines:
        if line == b"\r\n" or line == b"\n":
            break
        if line[:1] in (b" ", b"\t"):
            if pairs:
                name, value = pairs[-1]
                pairs[-1] = (name, value + b" " + line.strip())
            continue
        name, sep, value = line.partition(b":")
        if sep:
            pairs.append((name.strip(), value.strip()))
    return pairs


_dict_get = dict.get
_dict_setitem = dict.__setitem__
_dict_clear = dict.clear
_FOLD = (b" ", b"\t")


def _headers_from_lines(lines: list[bytes]) -> Headers:
    """``Headers.from_raw_pairs(_parse_header_lines(lines))`` in one pass: the fields of
    the LAST response block (a line starting ``HTTP/`` starts a block over), up to its
    blank line, obsolete folding joined with a space, lines without a colon skipped;
    names title-cased, names and values stripped, repeated names accumulated.

    Args:
        lines: the header lines curl reported (``HEADERFUNCTION``), line ends included.

    Returns:
        A new :class:`~crawlfw.http.Headers` (``encoding`` utf-8).
    """
    headers = Headers.__new__(Headers)
    headers.encoding = "utf-8"
    last = None  # the value list of the last field, for a folded line
    done = False  # the block's blank line was seen
    for line in lines:
        if line[:5] == b"HTTP/":  # a (next) block's status line: start over
            _dict_clear(headers)
            last = None
            done = False
        elif done:
            continue
        elif line[:1] in _FOLD:
            if last is not None:
                last[-1] = last[-1] + b" " + line.strip()
        else:
            name, sep, value = line.partition(b":")
            if sep:
                key = name.strip().title()
                last = _dict_get(headers, key)
                if last is None:
                    last = [value.strip()]
                    _dict_setitem(headers, key, last)
                else:
                    last.append(value.strip())
            elif line == b"\r\n" or line == b"\n":
                done = True
    return headers


def _content_length(header_lines: list[bytes]) -> int:
    """The ``Content-Length`` of the last response block, or -1 (cheap: no full parse)."""
    for i in range(len(header_lines) - 1, -1, -1):
        line = header_lines[i]
        if line[:5] == b"HTTP/":
            break
        if line[:15].lower() == b"content-length:":
            try:
                return int(line[15:])  # int() ignores the surrounding whitespace and CRLF
            except ValueError:
                return -1
    return -1


def _maxsize_error(xfer: _Transfer, size: int | None, *, expected: bool) -> DownloadCancelled:
    if expected:
        message = (
            f"Cancelling download of {xfer.url}: expected response size ({size}) "
            f"larger than download max size ({xfer.maxsize})."
        )
    elif size is not None:
        message = (
            f"Cancelling download of {xfer.url}: received ({size}) bytes larger than "
            f"download max size ({xfer.maxsize})."
        )
    else:
        message = (
            f"Cancelling download of {xfer.url}: received more bytes than "
            f"download max size ({xfer.maxsize})."
        )
    # Logged once, as the download error ("Error downloading ..." or the errback's).
    logger.debug(message)
    return DownloadCancelled(message, xfer.url, 63)


def _stream_signals(setopt: Callable[[int, Any], None], xfer: _Transfer, stream: StreamSignals,
                    maxsize: int, warnsize: int) -> None:
    """Install header and write callbacks that report to ``stream`` (see
    ``MultiDriver.stream_signals``): ``headers_received`` once the final header block
    is complete (not after a ``1xx`` block), ``bytes_received`` per body chunk after it
    is kept; a returned StopDownload aborts the transfer (returning 0 to curl) and is
    kept in ``xfer.stopped``. Only installed while a handler is connected."""
    request = xfer.request
    lines = xfer.header_lines
    write = _make_writer(xfer, maxsize, warnsize) if maxsize or warnsize else None
    append = xfer.chunks.append

    def on_header(line: bytes) -> int | None:
        lines.append(line)
        if (line == b"\r\n" or line == b"\n") and xfer.scheme in ("http", "https"):
            status = next((x for x in reversed(lines) if x[:5] == b"HTTP/"), b"")
            if status.split(b" ", 2)[1:2] and status.split(b" ", 2)[1][:1] == b"1":
                return None  # 100 Continue and the like: the real headers follow
            headers = _headers_from_lines(lines)
            stop = stream.headers_received(headers, _content_length(lines), request)
            if stop is not None:
                xfer.stopped = stop
                return 0
        return None

    def on_data(data: bytes) -> int | None:
        if write is not None:
            if write(data) == 0:
                return 0
        else:
            append(data)
        stop = stream.bytes_received(data, request)
        if stop is not None:
            xfer.stopped = stop
            return 0
        return None

    setopt(pycurl.HEADERFUNCTION, on_header)
    setopt(pycurl.WRITEFUNCTION, on_data)


def _make_writer(xfer: _Transfer, maxsize: int, warnsize: int) -> Callable[[bytes], int | None]:
    """A WRITEFUNCTION enforcing ``maxsize`` (abort) and ``warnsize`` (log once).

    Never raises: a failure is recorded in ``xfer.error`` and the transfer aborted by
    returning 0 (curl then reports CURLE_WRITE_ERROR for this transfer only).
    """
    append = xfer.chunks.append
    received = 0
    warned = warnsize == 0

    def write(data: bytes) -> int | None:
        nonlocal received, warned
        try:
            if received == 0 and not warned:
                expected = _content_length(xfer.header_lines)
                if expected > warnsize:
                    warned = True
                    logger.warning(
                        "Expected response size (%d) larger than download warn size (%d) in request %s.",
                        expected,
                        warnsize,
                        xfer.request,
                    )
            received += len(data)
            if maxsize and received > maxsize:
                xfer.error = _maxsize_error(xfer, received, expected=False)
                return 0
            if not warned and received > warnsize:
                warned = True
                logger.warning(
                    "Received (%d) bytes larger than download warn size (%d) in request %s.",
                    received,
                    warnsize,
                    xfer.request,
                )
            append(data)
        except Exception as exc:  # never let an exception reach libcurl
            xfer.error = DownloadError(
                f"Download failed: {xfer.url} (write callback failed: {exc!r})", xfer.url
            )
            return 0
        return None

    return write
