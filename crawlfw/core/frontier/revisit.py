"""Continuous crawling: the revisit schedule (issue 32, ``REVISIT_*`` settings).

With ``REVISIT_ENABLED`` every page fetched successfully (a 2xx answer; after redirects,
the final URL) is due again after its *interval*. The schedule is one small record per
page (:class:`RevisitRecord`: its fingerprint, the request in a compact stored form,
its due time, its interval, the validators the last answer carried, a digest of its
content, how many times it was answered 404/410 in a row); it grows with pages, never
with visits. It lives beside the frontier, owned by the Scheduler actor:

The stores are in :mod:`crawlfw.core.frontier.revisit_schedule`:

- ``MemoryRevisitSchedule`` (no ``JOBDIR``): a dict by fingerprint and a heap by due
  time (stale heap entries are skipped and compacted away).
- ``SqliteRevisitSchedule`` (``JOBDIR``): the ``revisits`` table of the job's
  ``frontier.sqlite``, written inside the frontier's open transaction, so it is
  committed with the frontier's checkpoint (``kill -9`` loses nothing; a resumed crawl
  continues the schedule where it was). Nothing of it is kept in memory.

When records are due the Scheduler takes them (:meth:`take_due`: their due time moves
one interval on at once, so a revisit that never comes back, a download error or a
request a middleware dropped, is tried again an interval later instead of being lost)
and pushes them into the frontier as requests built by :func:`revisit_request`:
``dont_filter`` (the dupefilter lets revisits through; new URLs are filtered as
usual), the conditional-GET headers ``If-None-Match`` / ``If-Modified-Since`` from the
validators, and the record's state in ``meta['_revisit']`` (a tuple: see
:data:`REVISIT_META`). The SpiderRunner classifies the answer (:func:`classify`: 304 or
the same digest means unchanged, 404/410 gone), skips the callback of an unchanged page
and tells the Scheduler (``revisit_visited``), which applies the outcome
(:meth:`visited`) and the interval rule (:func:`adapt_interval`).

Times in records are wall-clock seconds (``time.time()``), so a stored schedule means
the same after a restart.
"""

from __future__ import annotations

import hashlib
import marshal
import math
import pickle
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from crawlfw.core.frontier.api import REVISIT_META as _REVISIT_META
from crawlfw.core.transport.slot import url_host
from crawlfw.http.request import Request as _Request
from crawlfw.utils.reqser import _get_method, request_from_dict, request_to_dict

if TYPE_CHECKING:
    from crawlfw.http import Request, Response
    from crawlfw.settings import BaseSettings
    from crawlfw.spiders import Spider

__all__ = [
    "ADAPTIVE_DEC_RATE",
    "ADAPTIVE_INC_RATE",
    "REVISIT_META",
    "RevisitConfig",
    "RevisitRecord",
    "adapt_interval",
    "classify",
    "content_digest",
    "failed_visit",
    "middleware_defaults",
    "revisit_request",
    "stored_request",
]

#: ``meta`` key of a revisit request (:data:`crawlfw.core.frontier.api.REVISIT_META`,
#: where the frontiers read it: they queue revisits in the start lane): the record's
#: state as a tuple ``(fingerprint hex, etag or None, last_modified or None, digest hex
#: or None, claim)`` (``claim``: the shared schedule's claim number the revisit was made
#: under, 0 elsewhere; a request queued by an older crawlfw has no fifth item). A tuple
#: of immutable values, so the in-memory frontier still keeps the request as a compact
#: record.
REVISIT_META = _REVISIT_META

#: Nutch's ``db.fetch.schedule.adaptive.inc_rate``: an unchanged page's interval grows
#: by this fraction.
ADAPTIVE_INC_RATE = 0.4
#: Nutch's ``db.fetch.schedule.adaptive.dec_rate``: a changed page's interval shrinks by
#: this fraction.
ADAPTIVE_DEC_RATE = 0.2

#: Outcomes of a visit (``revisit_visited``): a first visit, a revisit that found the
#: page changed, unchanged (304 or the same digest), gone (404/410), the page opted
#: out (``meta['revisit'] = False``: its record is removed), or the revisit failed (no
#: answer that says anything of the page: see :func:`failed_visit`).
OUTCOMES = ("new", "changed", "unchanged", "gone", "forget", "failed")

#: ``meta`` keys that belong to one download, not to the page: left out of the stored
#: request (a revisit starts without them).
_TRANSIENT_META = frozenset({
    REVISIT_META, "redirect_urls", "redirect_times", "redirect_ttl", "redirect_reasons",
    "retry_times", "download_latency", "is_start_request",
})

_GONE_STATUSES = (404, 410)

_marshal_dumps = marshal.dumps
_marshal_loads = marshal.loads


@dataclass(frozen=True)
class RevisitConfig:
    """The ``REVISIT_*`` settings, checked.

    Attributes:
        enabled: ``REVISIT_ENABLED``.
        interval_s: ``REVISIT_INTERVAL``, a new page's interval (seconds, > 0; fractions
            allowed).
        min_s, max_s: ``REVISIT_INTERVAL_MIN`` / ``REVISIT_INTERVAL_MAX``, the bounds of
            an adapted interval (seconds).
        adaptive: ``REVISIT_ADAPTIVE``.
        gone_limit: ``REVISIT_GONE_LIMIT``, 404/410 answers in a row after which a page
            is no longer revisited (at least 1).
    """

    enabled: bool = False
    interval_s: float = 86400.0
    min_s: float = 3600.0
    max_s: float = 2592000.0
    adaptive: bool = True
    gone_limit: int = 3

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> RevisitConfig:
        """The checked configuration of ``settings``.

        Raises:
            ValueError: an interval that is not a positive number, ``MIN`` above
                ``MAX``, or a gone limit below 1 (the message names the setting).
        """
        def seconds(name: str) -> float:
            try:
                value = float(settings.get(name))
            except (TypeError, ValueError):
                raise ValueError(f"{name} must be a number of seconds, got "
                                 f"{settings.get(name)!r}") from None
            if not value > 0 or math.isinf(value):
                raise ValueError(f"{name} must be a positive number of seconds, got "
                                 f"{settings.get(name)!r}")
            return value

        enabled = settings.getbool("REVISIT_ENABLED", False)
        if not enabled:
            return cls()
        config = cls(enabled=True, interval_s=seconds("REVISIT_INTERVAL"),
                     min_s=seconds("REVISIT_INTERVAL_MIN"),
                     max_s=seconds("REVISIT_INTERVAL_MAX"),
                     adaptive=settings.getbool("REVISIT_ADAPTIVE", True),
                     gone_limit=settings.getint("REVISIT_GONE_LIMIT", 3))
        if config.min_s > config.max_s:
            raise ValueError(f"REVISIT_INTERVAL_MIN ({config.min_s:g}) is above "
                             f"REVISIT_INTERVAL_MAX ({config.max_s:g})")
        if config.gone_limit < 1:
            raise ValueError(f"REVISIT_GONE_LIMIT must be 1 or more, got "
                             f"{settings.get('REVISIT_GONE_LIMIT')!r}")
        return config


def adapt_interval(interval_s: float, changed: bool, min_s: float, max_s: float) -> float:
    """Nutch's ``AdaptiveFetchSchedule`` rule: a page that changed since the last visit
    is revisited sooner (its interval times ``1 - ADAPTIVE_DEC_RATE``, 0.8), one that did
    not later (times ``1 + ADAPTIVE_INC_RATE``, 1.4), always within ``[min_s, max_s]``.

    Args:
        interval_s: the page's interval so far (seconds).
        changed: the page changed since the last visit.
        min_s, max_s: the bounds (seconds).

    Returns:
        the new interval in seconds.
    """
    if changed:
        interval_s *= 1.0 - ADAPTIVE_DEC_RATE
    else:
        interval_s *= 1.0 + ADAPTIVE_INC_RATE
    return min(max(interval_s, min_s), max_s)


def content_digest(response: Response, spider: Spider | None = None) -> str:
    """The digest (hex) that says whether a page changed: BLAKE2b (16 bytes) of what
    ``spider.revisit_content(response)`` returns (bytes, or str encoded as UTF-8) when
    the spider has that method (to leave out timestamps, ads, session tokens...), else
    of the response body.

    Raises:
        TypeError: ``revisit_content`` returned something else than bytes or str.
    """
    hook = getattr(spider, "revisit_content", None)
    if hook is not None:
        content = hook(response)
        if isinstance(content, str):
            content = content.encode("utf-8")
        elif not isinstance(content, (bytes, bytearray, memoryview)):
            raise TypeError(f"{type(spider).__name__}.revisit_content() must return bytes "
                            f"or str, got {type(content).__name__}")
    else:
        content = response.body
    return hashlib.blake2b(content, digest_size=16).hexdigest()


def classify(request: Request, response: Response, spider: Spider | None,
             fingerprint: str) -> dict[str, Any] | None:
    """What a response means for the schedule (the SpiderRunner calls it before the
    callback).

    Args:
        request: the request the response answers (after redirects: the last one).
        response: the response.
        spider: the spider (its ``revisit_content`` hook).
        fingerprint: ``request``'s fingerprint (hex).

    Returns:
        a ``revisit_visited`` visit dict (``fp``, ``outcome``, ``etag``,
        ``last_modified``, ``digest``, ``interval``, ``moved_from``, ``request``,
        ``claim``: the revisit's claim number, 0 for a first visit), or
        None when the response does not touch the schedule (not a 2xx answer and not a
        revisit's 304/404/410, or a first visit that opted out).
    """
    meta = request.meta
    state = meta.get(REVISIT_META)
    status = response.status
    opted_out = meta.get("revisit") is False
    if state is None:
        if opted_out or not 200 <= status < 300:
            return None
        outcome = "new"
    elif opted_out:
        outcome = "forget"
    elif status == 304:
        outcome = "unchanged"
    elif status in _GONE_STATUSES:
        outcome = "gone"
    elif 200 <= status < 300:
        outcome = "changed"  # decided below by the digest
    else:
        return None  # a server error...: the record keeps its (moved) due time
    headers = response.headers
    etag = headers.get(b"ETag")
    last_modified = headers.get(b"Last-Modified")
    visit: dict[str, Any] = {
        "fp": fingerprint, "outcome": outcome,
        "etag": etag.decode("latin-1") if etag else None,
        "last_modified": last_modified.decode("latin-1") if last_modified else None,
        "digest": None, "interval": _meta_interval(meta), "moved_from": None,
        "request": request, "claim": 0,
    }
    if state is not None:
        old_fp = state[0]
        if len(state) > 4:
            visit["claim"] = state[4]
        if old_fp != fingerprint:
            visit["moved_from"] = old_fp
        if outcome == "unchanged":  # a 304 repeats the validators or says nothing new
            visit["etag"] = visit["etag"] or state[1]
            visit["last_modified"] = visit["last_modified"] or state[2]
            visit["digest"] = state[3]
    if outcome in ("new", "changed"):
        digest = content_digest(response, spider)
        visit["digest"] = digest
        if outcome == "changed" and state is not None and state[3] == digest:
            visit["outcome"] = "unchanged"
    return visit


def failed_visit(request: Request) -> dict[str, Any] | None:
    """The ``failed`` visit of a revisit that got no answer saying anything of the page
    (a download error, a 5xx, a request a middleware dropped, a raising
    ``revisit_content`` hook): it changes nothing in the schedule (the record keeps the
    due time :meth:`take_due` gave it, an interval on) but tells the Scheduler the
    revisit is over (``revisit/due_now`` counts revisits not answered yet). None for a
    request that is not a revisit.

    Args:
        request: the request (after redirects: the last one).

    Returns:
        a visit dict as :func:`classify` gives (``fp``: the record's fingerprint).
    """
    meta = request._meta
    state = meta.get(REVISIT_META) if meta else None
    if state is None:
        return None
    return {"fp": state[0], "outcome": "failed", "etag": None, "last_modified": None,
            "digest": None, "interval": None, "moved_from": None, "request": request,
            "claim": state[4] if len(state) > 4 else 0}


def _meta_interval(meta: dict[str, Any]) -> float | None:
    value = meta.get("revisit_interval")
    if value is None:
        return None
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"meta['revisit_interval'] must be a number of seconds, got "
                         f"{value!r}") from None
    if not value > 0:
        raise ValueError(f"meta['revisit_interval'] must be a positive number of seconds, "
                         f"got {value!r}")
    return value


#: The default downloader middlewares that put the same header or ``meta`` key on every
#: request (``setdefault``): :func:`middleware_defaults` reads what they put.
_DEFAULTS_MIDDLEWARES = {
    "headers": "crawlfw.downloadermiddlewares.defaultheaders.DefaultHeadersMiddleware",
    "user_agent": "crawlfw.downloadermiddlewares.useragent.UserAgentMiddleware",
    "compression": "crawlfw.downloadermiddlewares.httpcompression.HttpCompressionMiddleware",
    "timeout": "crawlfw.downloadermiddlewares.downloadtimeout.DownloadTimeoutMiddleware",
}


def middleware_defaults(settings: BaseSettings,
                        spider: Spider | None) -> tuple[dict[bytes, list[bytes]], dict[str, Any]]:
    """What the default downloader middlewares enabled in ``settings`` put on every
    request that lacks it: ``DEFAULT_REQUEST_HEADERS`` (``DefaultHeadersMiddleware``),
    ``User-Agent`` (``UserAgentMiddleware``: the spider's ``user_agent``, else
    ``USER_AGENT``), ``Accept-Encoding`` (``HttpCompressionMiddleware``, with
    ``COMPRESSION_ENABLED``) and ``meta['download_timeout']``
    (``DownloadTimeoutMiddleware``: the spider's ``download_timeout``, else
    ``DOWNLOAD_TIMEOUT``). A stored request leaves out a header or key whose value is
    this one (:func:`stored_request`): its revisit gets it again from the same
    middleware, so the request downloaded is the same (and a resumed ``JOBDIR`` crawl's
    revisits take the settings it runs with).

    Returns:
        ``({header name (Title-Case bytes): [values (bytes)]}, {meta key: value})``.
    """
    from crawlfw.http.headers import Headers
    from crawlfw.utils._decompression import ACCEPTED_ENCODINGS
    from crawlfw.utils.conf import build_component_list

    enabled = {m if isinstance(m, str) else f"{m.__module__}.{m.__qualname__}"
               for m in build_component_list(settings.getwithbase("DOWNLOADER_MIDDLEWARES"))}
    norm = Headers()
    headers: dict[bytes, list[bytes]] = {}
    meta: dict[str, Any] = {}
    if _DEFAULTS_MIDDLEWARES["headers"] in enabled:
        for name, value in (settings.getdict("DEFAULT_REQUEST_HEADERS") or {}).items():
            if value is not None:
                headers.setdefault(norm.normkey(name), norm.normvalue(value))
    if _DEFAULTS_MIDDLEWARES["user_agent"] in enabled:
        agent = getattr(spider, "user_agent", settings.get("USER_AGENT"))
        if agent:
            headers.setdefault(b"User-Agent", norm.normvalue(agent))
    if (_DEFAULTS_MIDDLEWARES["compression"] in enabled
            and settings.getbool("COMPRESSION_ENABLED")):
        headers.setdefault(b"Accept-Encoding", [b",".join(ACCEPTED_ENCODINGS)])
    if _DEFAULTS_MIDDLEWARES["timeout"] in enabled:
        timeout = getattr(spider, "download_timeout", settings.getfloat("DOWNLOAD_TIMEOUT"))
        if timeout:
            meta["download_timeout"] = timeout
    return headers, meta


def stored_request(request: Request, spider: Spider | None,
                   dumps: Any = None, defaults: Any = None,
                   priority: int | None = None) -> bytes:
    """``request`` as a record stores it: its compact
    :func:`~crawlfw.utils.reqser.request_to_dict`, without the ``meta`` of one download
    (redirects, retries, the revisit state, the download slot when it is the URL's host,
    as the downloader set it), without the conditional-GET headers a revisit added and,
    with ``defaults`` (:func:`middleware_defaults`), without the headers and ``meta``
    the default downloader middlewares put there with the values they put (the revisit
    gets them again), pickled (or written by ``dumps``: a dict -> bytes function).
    ``priority``, when given, is stored instead of the request's (a page's revisits keep
    the priority it was first queued with, not what a retry or a redirect made of it).

    Raises:
        ValueError: the callback or errback is not a method of the spider.
        pickle.PicklingError, TypeError, AttributeError: a ``meta`` or ``cb_kwargs``
            value cannot be pickled.
    """
    d = request_to_dict(request, spider, compact=True)
    meta = d.get("meta")
    default_headers, default_meta = defaults if defaults is not None else ({}, {})
    if meta:
        meta = {k: v for k, v in meta.items() if k not in _TRANSIENT_META
                and not (k in default_meta and v == default_meta[k])}
        slot = meta.get("download_slot")
        if slot is not None and slot == url_host(d["url"]):
            del meta["download_slot"]  # what the downloader sets again
        if meta:
            d["meta"] = meta
        else:
            del d["meta"]
    headers = d.get("headers")
    if headers:
        headers = {k: v for k, v in headers.items()
                   if (k.lower() if isinstance(k, bytes) else k.lower().encode())
                   not in (b"if-none-match", b"if-modified-since")
                   and not _is_default(default_headers, k, v)}
        if headers:
            d["headers"] = headers
        else:
            del d["headers"]
    d.pop("dont_filter", None)
    if priority is not None:
        if priority:
            d["priority"] = priority
        else:
            d.pop("priority", None)
    # A copy of exactly its size: pickle.dumps() writes into a 4 KiB buffer and shrinks
    # it in place, so a blob kept as it comes sits where a 4 KiB block was free, outside
    # Python's small-object allocator, with the rest of the block cut off around it. A
    # record's blob lives for as long as its page is scheduled and is replaced whenever
    # the page changes: each new one took a fresh 4 KiB block at the top of the
    # Scheduler thread's malloc arena, which crept up for as long as the crawl ran
    # (issue 32: ~480 bytes per changed page in the revisit benchmark). The copy is a
    # few hundred bytes, made only for new and changed pages.
    blob = dumps(d) if dumps is not None else pickle.dumps(d, 5)
    return bytes(memoryview(blob))


def _is_default(default_headers: dict[bytes, list[bytes]], name: Any, values: Any) -> bool:
    """True when header ``name`` (as a compact dict stores it) has the value a default
    middleware would put there."""
    if not default_headers:
        return False
    default = default_headers.get(_header_bytes(name).title())
    if default is None:
        return False
    values = values if isinstance(values, (list, tuple)) else [values]
    return [_header_bytes(v) for v in values] == default


class RevisitRecord:
    """One page of the schedule.

    Attributes:
        fp: the request fingerprint (20 bytes).
        request: :func:`stored_request` bytes.
        due: wall-clock time (``time.time()`` seconds) the page is due at.
        interval: seconds between two visits.
        etag, last_modified: the validators of the last answer (str or None).
        digest: :func:`content_digest` of the last content (hex str or None).
        gone: 404/410 answers in a row.
        fixed: the interval was set by ``meta['revisit_interval']`` (not adapted).
        claim: the shared schedule's claim number this copy was taken under
            (:meth:`~crawlfw.core.frontier.redis_revisit.RedisRevisitSchedule.take_due`);
            0 elsewhere.
    """

    __slots__ = ("fp", "request", "due", "interval", "etag", "last_modified", "digest",
                 "gone", "fixed", "claim", "_size")

    def __init__(self, fp: bytes, request: bytes, due: float, interval: float,
                 etag: str | None = None, last_modified: str | None = None,
                 digest: str | None = None, gone: int = 0, fixed: bool = False) -> None:
        self.fp = fp
        self.request = request
        self.due = due
        self.interval = interval
        self.etag = etag
        self.last_modified = last_modified
        self.digest = digest
        self.gone = gone
        self.fixed = fixed
        self.claim = 0
        self._size = 0  # bytes counted by the in-memory schedule

    def __repr__(self) -> str:
        return (f"RevisitRecord(fp={self.fp.hex()[:12]}, due={self.due:.3f}, "
                f"interval={self.interval:g}, gone={self.gone})")


def revisit_request(record: RevisitRecord, spider: Spider | None,
                    loads: Any = pickle.loads) -> Request:
    """The request of a due ``record``: its stored request (read by ``loads``, bytes ->
    dict), ``dont_filter``, with ``If-None-Match`` / ``If-Modified-Since`` from its
    validators and its state in ``meta[REVISIT_META]``.

    A stored request of the usual shape (a ``Request`` with no body, cookies or encoding
    of its own: the keys of :data:`_FAST_KEYS`) is built directly, its headers put in
    as they were stored (names and values already normalised) instead of through
    :func:`~crawlfw.utils.reqser.request_from_dict`'s general path; the same request
    either way (``tests/core/test_revisit.py`` compares them).

    Raises:
        AttributeError: the spider lost a method the stored request names.
        ValueError: the stored callback or errback is not a method of the spider.
    """
    d = loads(record.request)
    meta = d.get("meta")
    meta = dict(meta) if meta else {}
    meta[REVISIT_META] = (record.fp.hex(), record.etag, record.last_modified, record.digest,
                          record.claim)
    if not _FAST_KEYS.issuperset(d):
        d["dont_filter"] = True
        d["meta"] = meta
        if record.etag or record.last_modified:
            headers = dict(d.get("headers") or {})
            if record.etag:
                headers[b"If-None-Match"] = [record.etag.encode("latin-1")]
            if record.last_modified:
                headers[b"If-Modified-Since"] = [record.last_modified.encode("latin-1")]
            d["headers"] = headers
        return request_from_dict(d, spider)
    cb = d.get("callback")
    eb = d.get("errback")
    has_spider = spider is not None
    get_method: Any = _get_method
    request = _Request(d["url"], callback=get_method(spider, cb) if cb and has_spider else None,
                       method=d.get("method", "GET"), meta=meta,
                       priority=d.get("priority", 0), dont_filter=True,
                       errback=get_method(spider, eb) if eb and has_spider else None,
                       flags=d.get("flags") or None, cb_kwargs=d.get("cb_kwargs") or None)
    headers = request.headers  # empty, utf-8: filled as Headers(stored) would be
    stored = d.get("headers")
    if stored:
        for name, values in stored.items():
            _dict_setitem(headers, _header_bytes(name).title(),
                          [_header_bytes(v) for v in
                           (values if isinstance(values, (list, tuple)) else [values])])
    if record.etag:
        _dict_setitem(headers, b"If-None-Match", [record.etag.encode("latin-1")])
    if record.last_modified:
        _dict_setitem(headers, b"If-Modified-Since", [record.last_modified.encode("latin-1")])
    return request


#: The keys of a stored request :func:`revisit_request` builds directly (a compact
#: ``request_to_dict`` without body, cookies, encoding, class or a subclass' attributes).
_FAST_KEYS = frozenset(("url", "callback", "errback", "method", "headers", "meta",
                        "priority", "flags", "cb_kwargs"))

_dict_setitem = dict.__setitem__


def _header_bytes(value: Any) -> bytes:
    """A stored header name or value as bytes (stored as latin-1 text, or bytes)."""
    if value.__class__ is bytes:
        return value
    return str(value).encode("latin-1")
