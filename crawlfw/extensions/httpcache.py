"""HTTP cache policies and storages for :mod:`crawlfw.downloadermiddlewares.httpcache`.

Policies decide what is cached and whether a cached response can be used:

* :class:`DummyPolicy` (default): cache every response (except
  ``HTTPCACHE_IGNORE_HTTP_CODES`` and ``HTTPCACHE_IGNORE_SCHEMES``) and always use
  it: good for replaying a crawl offline.
* :class:`RFC2616Policy`: obey HTTP caching headers like a browser (RFC 2616 §13/§14.9,
  now RFC 9111 - RFC 7234 in Scrapy 1.2's time), following Firefox's heuristics.

Storages keep the responses, keyed by
:func:`crawlfw.utils.request.request_fingerprint`:

* :class:`FilesystemCacheStorage` (default): one directory per request,
  ``<HTTPCACHE_DIR>/<spider name>/<fp[:2]>/<fp>/`` with ``pickled_meta``, ``meta``
  (``repr``), ``response_headers``, ``response_body``, ``request_headers``,
  ``request_body`` (each gzip-compressed with ``HTTPCACHE_GZIP``);
* :class:`DbmCacheStorage`: one DBM database per spider,
  ``<HTTPCACHE_DIR>/<spider name>.db``, module ``HTTPCACHE_DBM_MODULE`` (``dbm``).

``HTTPCACHE_DIR`` is relative to the project data directory
(``crawlfw.utils.project.data_path``: ``.crawlfw/`` in the project). Entries older than
``HTTPCACHE_EXPIRATION_SECS`` seconds (0: never) count as absent.

A storage has ``open_spider(spider)``, ``close_spider(spider)``,
``retrieve_response(spider, request) -> Response | None`` and
``store_response(spider, request, response)``; a policy has
``should_cache_request(request)``, ``should_cache_response(response, request)``,
``is_cached_response_fresh(cachedresponse, request)`` and
``is_cached_response_valid(cachedresponse, response, request)``. Both are built with
``cls(settings)``; set ``HTTPCACHE_POLICY``/``HTTPCACHE_STORAGE`` to your own class.
"""

import gzip
import logging
import os
import pickle
from email.utils import mktime_tz, parsedate_tz
from importlib import import_module
from time import time
from weakref import WeakKeyDictionary

from w3lib.http import headers_dict_to_raw, headers_raw_to_dict

from crawlfw.http import Headers, Response
from crawlfw.responsetypes import responsetypes
from crawlfw.utils.httpobj import urlparse_cached
from crawlfw.utils.project import data_path
from crawlfw.utils.python import to_bytes, to_unicode
from crawlfw.utils.request import request_fingerprint

__all__ = [
    "DummyPolicy",
    "RFC2616Policy",
    "FilesystemCacheStorage",
    "DbmCacheStorage",
    "parse_cachecontrol",
    "rfc1123_to_epoch",
]

logger = logging.getLogger(__name__)


class DummyPolicy:
    """Cache everything, never revalidate.

    Args:
        settings: reads ``HTTPCACHE_IGNORE_SCHEMES`` (list of URL schemes) and
            ``HTTPCACHE_IGNORE_HTTP_CODES`` (list of statuses not stored).
    """

    def __init__(self, settings):
        self.ignore_schemes = settings.getlist("HTTPCACHE_IGNORE_SCHEMES")
        self.ignore_http_codes = [int(x) for x in settings.getlist("HTTPCACHE_IGNORE_HTTP_CODES")]

    def should_cache_request(self, request) -> bool:
        return urlparse_cached(request).scheme not in self.ignore_schemes

    def should_cache_response(self, response, request) -> bool:
        return response.status not in self.ignore_http_codes

    def is_cached_response_fresh(self, cachedresponse, request) -> bool:
        return True

    def is_cached_response_valid(self, cachedresponse, response, request) -> bool:
        return True


class RFC2616Policy:
    """Cache like a browser: honour ``Cache-Control``, ``Expires``, validators.

    * Requests with ``Cache-Control: no-store`` are not cached.
    * A response is stored unless it has ``no-store`` or is a 304; with
      ``HTTPCACHE_ALWAYS_STORE`` always; otherwise when it has ``max-age`` or
      ``Expires``, or is a 300/301/308, or is a 200/203/401 with ``Last-Modified`` or
      ``ETag`` (RFC 2616 §13.4).
    * Freshness lifetime (RFC 2616 §13.2.4, Firefox's ``ComputeFreshnessLifetime``):
      ``max-age``; else ``Expires - Date``; else 10 % of ``Date - Last-Modified``;
      else one year for 300/301/308; else 0. Current age: ``now - Date`` or ``Age``,
      whichever is larger (§13.2.3). A request's ``max-age`` lowers the lifetime,
      its ``max-stale`` accepts stale responses unless ``must-revalidate``;
      ``no-cache`` on either side forces revalidation.
    * A stale response is revalidated: ``If-Modified-Since``/``If-None-Match`` are added
      to the request; a 304 answer (or a 5xx one, unless ``must-revalidate``) makes the
      cached response be used (§10.3.5, §14.9.4).
    * ``HTTPCACHE_IGNORE_RESPONSE_CACHE_CONTROLS``: response directives to ignore
      (e.g. ``['no-cache', 'no-store']``).

    Args:
        settings: the crawler's settings.
    """

    #: Lifetime in seconds given to permanent redirects without expiry information.
    MAXAGE = 3600 * 24 * 365  # one year

    def __init__(self, settings):
        self.always_store = settings.getbool("HTTPCACHE_ALWAYS_STORE")
        self.ignore_schemes = settings.getlist("HTTPCACHE_IGNORE_SCHEMES")
        self.ignore_response_cache_controls = [
            to_bytes(cc) for cc in settings.getlist("HTTPCACHE_IGNORE_RESPONSE_CACHE_CONTROLS")
        ]
        self._cc_parsed = WeakKeyDictionary()

    def _parse_cachecontrol(self, r) -> dict:
        if r not in self._cc_parsed:
            cch = r.headers.get(b"Cache-Control", b"") or b""
            parsed = parse_cachecontrol(cch)
            if isinstance(r, Response):
                for key in self.ignore_response_cache_controls:
                    parsed.pop(key, None)
            self._cc_parsed[r] = parsed
        return self._cc_parsed[r]

    def should_cache_request(self, request) -> bool:
        if urlparse_cached(request).scheme in self.ignore_schemes:
            return False
        cc = self._parse_cachecontrol(request)
        # obey the user agent's "Cache-Control: no-store"
        return b"no-store" not in cc

    def should_cache_response(self, response, request) -> bool:
        # RFC 2616 §13.4; 206 is left out: partial content cannot be cached here
        cc = self._parse_cachecontrol(response)
        if b"no-store" in cc:
            return False
        if response.status == 304:
            return False
        if self.always_store:
            return True
        if b"max-age" in cc or b"Expires" in response.headers:
            return True
        # Firefox gives these a one-year lifetime when none is set
        if response.status in (300, 301, 308):
            return True
        # other statuses without expiry need a validator
        if response.status in (200, 203, 401):
            return b"Last-Modified" in response.headers or b"ETag" in response.headers
        return False

    def is_cached_response_fresh(self, cachedresponse, request) -> bool:
        cc = self._parse_cachecontrol(cachedresponse)
        ccreq = self._parse_cachecontrol(request)
        if b"no-cache" in cc or b"no-cache" in ccreq:
            return False
        now = time()
        freshnesslifetime = self._compute_freshness_lifetime(cachedresponse, request, now)
        currentage = self._compute_current_age(cachedresponse, request, now)
        reqmaxage = self._get_max_age(ccreq)
        if reqmaxage is not None:
            freshnesslifetime = min(freshnesslifetime, reqmaxage)
        if currentage < freshnesslifetime:
            return True
        if b"max-stale" in ccreq and b"must-revalidate" not in cc:
            # RFC 2616 §14.9.3: a max-stale without value accepts any staleness
            staleage = ccreq[b"max-stale"]
            if staleage is None:
                return True
            try:
                if currentage < freshnesslifetime + max(0, int(staleage)):
                    return True
            except ValueError:
                pass
        # stale: revalidate with the validators we have
        self._set_conditional_validators(request, cachedresponse)
        return False

    def is_cached_response_valid(self, cachedresponse, response, request) -> bool:
        # a server error: use the cached response unless it said must-revalidate
        if response.status >= 500:
            cc = self._parse_cachecontrol(cachedresponse)
            if b"must-revalidate" not in cc:
                return True
        # 304 Not Modified: the cached response is still good
        return response.status == 304

    def _set_conditional_validators(self, request, cachedresponse):
        if b"Last-Modified" in cachedresponse.headers:
            request.headers[b"If-Modified-Since"] = cachedresponse.headers[b"Last-Modified"]
        if b"ETag" in cachedresponse.headers:
            request.headers[b"If-None-Match"] = cachedresponse.headers[b"ETag"]

    def _get_max_age(self, cc) -> int | None:
        try:
            return max(0, int(cc[b"max-age"]))
        except (KeyError, ValueError, TypeError):
            return None

    def _compute_freshness_lifetime(self, response, request, now) -> float:
        # Firefox's nsHttpResponseHead::ComputeFreshnessLifetime
        cc = self._parse_cachecontrol(response)
        maxage = self._get_max_age(cc)
        if maxage is not None:
            return maxage
        date = rfc1123_to_epoch(response.headers.get(b"Date")) or now
        if b"Expires" in response.headers:
            expires = rfc1123_to_epoch(response.headers[b"Expires"])
            # RFC 2616 §14.21: an unparsable Expires means "already expired"
            return max(0, expires - date) if expires else 0
        # heuristic from Last-Modified (not in the RFC; Firefox does it)
        lastmodified = rfc1123_to_epoch(response.headers.get(b"Last-Modified"))
        if lastmodified and lastmodified <= date:
            return (date - lastmodified) / 10
        if response.status in (300, 301, 308):
            return self.MAXAGE
        return 0

    def _compute_current_age(self, response, request, now) -> float:
        # Firefox's nsHttpResponseHead::ComputeCurrentAge; no Date: assume clocks agree
        currentage = 0
        date = rfc1123_to_epoch(response.headers.get(b"Date")) or now
        if now > date:
            currentage = now - date
        if b"Age" in response.headers:
            try:
                age = int(response.headers[b"Age"])
                currentage = max(currentage, age)
            except ValueError:
                pass
        return currentage


class DbmCacheStorage:
    """Store responses in one DBM database per spider.

    Args:
        settings: reads ``HTTPCACHE_DIR``, ``HTTPCACHE_EXPIRATION_SECS`` and
            ``HTTPCACHE_DBM_MODULE`` (a module with ``open(path, 'c')``, default ``dbm``).
    """

    def __init__(self, settings):
        self.cachedir = data_path(settings["HTTPCACHE_DIR"], createdir=True)
        self.expiration_secs = settings.getint("HTTPCACHE_EXPIRATION_SECS")
        self.dbmodule = import_module(settings["HTTPCACHE_DBM_MODULE"])
        self.db = None

    def open_spider(self, spider):
        dbpath = os.path.join(self.cachedir, f"{spider.name}.db")
        self.db = self.dbmodule.open(dbpath, "c")
        logger.debug(
            "Using DBM cache storage in %(cachepath)s",
            {"cachepath": dbpath},
            extra={"spider": spider},
        )

    def close_spider(self, spider):
        self.db.close()

    def retrieve_response(self, spider, request):
        data = self._read_data(spider, request)
        if data is None:
            return None  # not cached
        url = data["url"]
        status = data["status"]
        headers = Headers(data["headers"])
        body = data["body"]
        respcls = responsetypes.from_args(headers=headers, url=url, body=body)
        return respcls(url=url, headers=headers, status=status, body=body)

    def store_response(self, spider, request, response):
        key = request_fingerprint(request)
        data = {
            "status": response.status,
            "url": response.url,
            "headers": dict(response.headers),
            "body": response.body,
        }
        self.db[f"{key}_data"] = pickle.dumps(data, protocol=4)
        self.db[f"{key}_time"] = str(time())

    def _read_data(self, spider, request):
        key = request_fingerprint(request)
        db = self.db
        tkey = f"{key}_time"
        if tkey not in db:
            return None  # not found
        ts = db[tkey]
        if 0 < self.expiration_secs < time() - float(ts):
            return None  # expired
        return pickle.loads(db[f"{key}_data"])


class FilesystemCacheStorage:
    """Store each response in its own directory of plain (or gzip'd) files.

    Args:
        settings: reads ``HTTPCACHE_DIR``, ``HTTPCACHE_EXPIRATION_SECS`` and
            ``HTTPCACHE_GZIP``.
    """

    def __init__(self, settings):
        self.cachedir = data_path(settings["HTTPCACHE_DIR"])
        self.expiration_secs = settings.getint("HTTPCACHE_EXPIRATION_SECS")
        self.use_gzip = settings.getbool("HTTPCACHE_GZIP")
        self._open = gzip.open if self.use_gzip else open

    def open_spider(self, spider):
        logger.debug(
            "Using filesystem cache storage in %(cachedir)s",
            {"cachedir": self.cachedir},
            extra={"spider": spider},
        )

    def close_spider(self, spider):
        pass

    def retrieve_response(self, spider, request):
        """Return the cached response for ``request``, or None when absent or expired."""
        metadata = self._read_meta(spider, request)
        if metadata is None:
            return None  # not cached
        rpath = self._get_request_path(spider, request)
        with self._open(os.path.join(rpath, "response_body"), "rb") as f:
            body = f.read()
        with self._open(os.path.join(rpath, "response_headers"), "rb") as f:
            rawheaders = f.read()
        url = metadata.get("response_url")
        status = metadata["status"]
        headers = Headers(headers_raw_to_dict(rawheaders))
        respcls = responsetypes.from_args(headers=headers, url=url, body=body)
        return respcls(url=url, headers=headers, status=status, body=body)

    def store_response(self, spider, request, response):
        """Write ``response`` (and the request's headers and body) to the cache."""
        rpath = self._get_request_path(spider, request)
        os.makedirs(rpath, exist_ok=True)
        metadata = {
            "url": request.url,
            "method": request.method,
            "status": response.status,
            "response_url": response.url,
            "timestamp": time(),
        }
        with self._open(os.path.join(rpath, "meta"), "wb") as f:
            f.write(to_bytes(repr(metadata)))
        with self._open(os.path.join(rpath, "pickled_meta"), "wb") as f:
            pickle.dump(metadata, f, protocol=4)
        with self._open(os.path.join(rpath, "response_headers"), "wb") as f:
            f.write(headers_dict_to_raw(response.headers))
        with self._open(os.path.join(rpath, "response_body"), "wb") as f:
            f.write(response.body)
        with self._open(os.path.join(rpath, "request_headers"), "wb") as f:
            f.write(headers_dict_to_raw(request.headers))
        with self._open(os.path.join(rpath, "request_body"), "wb") as f:
            f.write(request.body)

    def _get_request_path(self, spider, request) -> str:
        key = request_fingerprint(request)
        return os.path.join(self.cachedir, spider.name, key[0:2], key)

    def _read_meta(self, spider, request):
        rpath = self._get_request_path(spider, request)
        metapath = os.path.join(rpath, "pickled_meta")
        if not os.path.exists(metapath):
            return None  # not found
        mtime = os.stat(metapath).st_mtime
        if 0 < self.expiration_secs < time() - mtime:
            return None  # expired
        with self._open(metapath, "rb") as f:
            return pickle.load(f)


def parse_cachecontrol(header: bytes) -> dict:
    """Parse a ``Cache-Control`` header value (RFC 2616 §14.9) into ``{directive: value}``.

    Directive names are lower-cased bytes; a directive without ``=`` maps to None.

    >>> parse_cachecontrol(b'public, max-age=3600') == {b'public': None, b'max-age': b'3600'}
    True
    >>> parse_cachecontrol(b'') == {}
    True
    """
    directives = {}
    for directive in header.split(b","):
        key, sep, val = directive.strip().partition(b"=")
        if key:
            directives[key.lower()] = val if sep else None
    return directives


def rfc1123_to_epoch(date_str) -> int | None:
    """Seconds since the epoch for an HTTP date (RFC 1123 and the obsolete forms
    RFC 7231 §7.1.1.1 allows), or None when absent or unparsable."""
    try:
        date_str = to_unicode(date_str, encoding="ascii")
        return mktime_tz(parsedate_tz(date_str))
    except Exception:
        return None
