"""FilesPipeline: download the files an item links to and store them on disk or in S3
(Scrapy 1.2's ``scrapy.pipelines.files``).

Enable it with ``ITEM_PIPELINES = {'crawlfw.pipelines.files.FilesPipeline': 1}`` and
``FILES_STORE`` (a directory, a ``file://`` URI, or ``s3://bucket/prefix/``). Each item's
``file_urls`` (``FILES_URLS_FIELD``) are downloaded; ``files`` (``FILES_RESULT_FIELD``)
receives one ``{'url', 'path', 'checksum'}`` dict per stored file, in order (failed
downloads are left out). ``path`` is relative to the store: ``full/<SHA1 of the URL><ext>``.

A file stored less than ``FILES_EXPIRES`` days (default 90) ago is not downloaded again
("uptodate"). A download that fails, answers a status other than 200 or an empty body is
logged at WARNING and left out; the item still goes on.

Settings: ``FILES_STORE``, ``FILES_EXPIRES``, ``FILES_URLS_FIELD``, ``FILES_RESULT_FIELD``
(a subclass ``MyPipeline`` may use ``MYPIPELINE_FILES_EXPIRES`` etc.),
``FILES_STORE_S3_ACL``, ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, and (crawlfw
additions, as the S3 feed storage) ``AWS_ENDPOINT_URL``, ``AWS_REGION_NAME``.
Stats: ``file_count``, ``file_status_count/<downloaded|uptodate|cached>``.
"""

import hashlib
import logging
import mimetypes
import os
import os.path
import time
import warnings
from collections import defaultdict
from io import BytesIO
from urllib.parse import urlparse

from crawlfw.exceptions import CrawlfwDeprecationWarning, IgnoreRequest, NotConfigured
from crawlfw.http import Request
from crawlfw.pipelines.media import MediaPipeline, _init_takes_crawler
from crawlfw.settings import Settings
from crawlfw.utils.datatypes import CaselessDict
from crawlfw.utils.misc import md5sum
from crawlfw.utils.python import to_bytes
from crawlfw.utils.request import referer_str

logger = logging.getLogger(__name__)

__all__ = ["FileException", "FSFilesStore", "S3FilesStore", "FilesPipeline"]


class FileException(Exception):
    """A media file could not be downloaded or processed (the message says why:
    ``'download-error'``, ``'empty-content'``, ...)."""


class FSFilesStore:
    """Store files under a directory of the local file system.

    Args:
        basedir: the directory (created if missing); a ``file://`` prefix is removed.
    """

    def __init__(self, basedir):
        if "://" in basedir:
            basedir = basedir.split("://", 1)[1]
        self.basedir = basedir
        self._mkdir(self.basedir)
        self.created_directories = defaultdict(set)

    def persist_file(self, path, buf, info, meta=None, headers=None):
        """Write ``buf`` (a ``BytesIO``) to ``<basedir>/<path>`` (``/``-separated),
        creating directories; ``meta`` and ``headers`` are ignored here."""
        absolute_path = self._get_filesystem_path(path)
        self._mkdir(os.path.dirname(absolute_path), info)
        with open(absolute_path, "wb") as f:
            f.write(buf.getvalue())

    def stat_file(self, path, info):
        """Return ``{'last_modified': epoch seconds, 'checksum': MD5 hex}`` of a stored
        file, or ``{}`` when it is not stored (or unreadable)."""
        absolute_path = self._get_filesystem_path(path)
        try:
            last_modified = os.path.getmtime(absolute_path)
            with open(absolute_path, "rb") as f:
                checksum = md5sum(f)
        except OSError:
            return {}
        return {"last_modified": last_modified, "checksum": checksum}

    def _get_filesystem_path(self, path):
        return os.path.join(self.basedir, *path.split("/"))

    def _mkdir(self, dirname, domain=None):
        seen = self.created_directories[domain] if domain else set()
        if dirname not in seen:
            os.makedirs(dirname, exist_ok=True)
            seen.add(dirname)


class S3FilesStore:
    """Store files in an S3 bucket (or an S3-compatible server), with boto3.

    Class attributes set by ``FilesPipeline.from_settings`` (as in Scrapy):
    ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``POLICY`` (the canned ACL,
    ``FILES_STORE_S3_ACL``), and the crawlfw additions ``AWS_ENDPOINT_URL`` and
    ``AWS_REGION_NAME``. ``HEADERS`` are sent with every upload.

    Args:
        uri: ``s3://bucket/prefix`` (the prefix is prepended to each path as is, so
            end it with ``/``).

    Raises:
        NotConfigured: boto3 is not installed.
        ValueError: ``uri`` is not an ``s3://bucket/...`` URI.
    """

    AWS_ACCESS_KEY_ID = None
    AWS_SECRET_ACCESS_KEY = None
    AWS_ENDPOINT_URL = None
    AWS_REGION_NAME = None

    #: Canned ACL of uploaded objects; ``FilesPipeline.from_settings`` sets it from
    #: ``FILES_STORE_S3_ACL``.
    POLICY = "private"
    HEADERS = {
        "Cache-Control": "max-age=172800",
    }

    def __init__(self, uri):
        try:
            import boto3.session
        except ImportError:
            raise NotConfigured("S3 files store needs boto3: pip install boto3") from None
        if not uri.startswith("s3://") or "/" not in uri[5:]:
            raise ValueError(f"S3 files store URI {uri!r} is not of the form s3://bucket/prefix")
        self.bucket, self.prefix = uri[5:].split("/", 1)
        if not self.bucket:
            raise ValueError(f"S3 files store URI {uri!r} has no bucket name")
        self.s3_client = boto3.session.Session().client(
            "s3",
            aws_access_key_id=self.AWS_ACCESS_KEY_ID,
            aws_secret_access_key=self.AWS_SECRET_ACCESS_KEY,
            endpoint_url=self.AWS_ENDPOINT_URL,
            region_name=self.AWS_REGION_NAME,
        )

    def stat_file(self, path, info):
        """Return ``{'checksum': ETag without quotes, 'last_modified': epoch seconds}``
        of a stored object, or ``{}`` when there is none.

        Raises:
            botocore.exceptions.ClientError: any other S3 error (the pipeline logs it
                and downloads the file).
        """
        from botocore.exceptions import ClientError

        try:
            head = self.s3_client.head_object(Bucket=self.bucket, Key=self.prefix + path)
        except ClientError as e:
            if e.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                return {}
            raise
        return {"checksum": head["ETag"].strip('"'),
                "last_modified": head["LastModified"].timestamp()}

    def persist_file(self, path, buf, info, meta=None, headers=None):
        """Upload ``buf`` (a ``BytesIO``) as ``<prefix><path>`` with ``meta`` as object
        metadata (values made ``str``) and ``HEADERS`` updated by ``headers``.

        Raises:
            TypeError: a header has no S3 upload equivalent (see
                :meth:`_headers_to_botocore_kwargs`).
            botocore.exceptions.ClientError: the upload failed.
        """
        buf.seek(0)
        extra = self._headers_to_botocore_kwargs(self.HEADERS)
        if headers:
            extra.update(self._headers_to_botocore_kwargs(headers))
        kwargs = {}
        if self.POLICY:
            kwargs["ACL"] = self.POLICY
        self.s3_client.put_object(
            Bucket=self.bucket,
            Key=self.prefix + path,
            Body=buf,
            Metadata={k: str(v) for k, v in (meta or {}).items()},
            **kwargs,
            **extra,
        )

    def _headers_to_botocore_kwargs(self, headers):
        """Map HTTP headers to ``put_object`` keyword arguments.

        Raises:
            TypeError: a header has no equivalent (the message names it).
        """
        mapping = CaselessDict({
            "Content-Type": "ContentType",
            "Cache-Control": "CacheControl",
            "Content-Disposition": "ContentDisposition",
            "Content-Encoding": "ContentEncoding",
            "Content-Language": "ContentLanguage",
            "Content-Length": "ContentLength",
            "Content-MD5": "ContentMD5",
            "Expires": "Expires",
            "X-Amz-Grant-Full-Control": "GrantFullControl",
            "X-Amz-Grant-Read": "GrantRead",
            "X-Amz-Grant-Read-ACP": "GrantReadACP",
            "X-Amz-Grant-Write-ACP": "GrantWriteACP",
        })
        extra = {}
        for key, value in headers.items():
            try:
                kwarg = mapping[key]
            except KeyError:
                raise TypeError(f'Header "{key}" is not supported by botocore') from None
            extra[kwarg] = value
        return extra


def _safe_extension(url: str) -> str:
    """The URL's extension if ``mimetypes`` knows it, else its guess for the URL, else ''.

    ``mimetypes.types_map`` holds the system's types (``/etc/mime.types``...) only once
    ``mimetypes.init()`` has read them: read first, the first call in a process would
    answer otherwise than the next ones (``a.tar.gz``: ``.tar`` then ``.gz``)."""
    if not mimetypes.inited:
        try:
            mimetypes.init()
        except OSError:  # out of file descriptors: the built-in table (see responsetypes)
            pass
    media_ext = os.path.splitext(url)[1]
    if media_ext in mimetypes.types_map:
        return media_ext
    media_type = mimetypes.guess_type(url)[0]
    return (mimetypes.guess_extension(media_type) or "") if media_type else ""


def _set_results(item, field: str, results):
    """Set ``item[field]`` to the successful ``results`` (``[(ok, info), ...]``) of a media
    pipeline, through ``itemadapter`` (any item type; an item class that does not declare
    ``field`` is left as is); return ``item``."""
    from itemadapter import ItemAdapter

    try:
        ItemAdapter(item)[field] = [x for ok, x in results if ok]
    except KeyError:  # an item class without that field
        pass
    return item


#: Modules of the media pipelines' own ``from_settings`` (a subclass overriding it is
#: built by it, Scrapy 1.2's way).
_OWN_MODULES = ("crawlfw.pipelines.files", "crawlfw.pipelines.images")


class FilesPipeline(MediaPipeline):
    """Download the files of ``item['file_urls']`` into a store (see the module
    docstring).

    Files are *new* (never stored: downloaded), *uptodate* (stored less than
    ``expires`` days ago: not downloaded) or *expired* (downloaded again).

    Args:
        store_uri: where to store files: a directory, ``file://...`` or
            ``s3://bucket/prefix/``.
        download_func: see :class:`~crawlfw.pipelines.media.MediaPipeline`.
        settings: a ``Settings`` or dict (``FILES_EXPIRES``, ``FILES_URLS_FIELD``,
            ``FILES_RESULT_FIELD``), or None: ``crawler.settings`` (Scrapy 1.2's
            argument).
        crawler: the Crawler (Scrapy 2.19's keyword argument, which
            :meth:`from_crawler` passes unless a subclass builds Scrapy 1.2's way).

    Raises:
        NotConfigured: ``store_uri`` is empty (``FILES_STORE`` unset); the pipeline is
            disabled with a warning naming the setting.
        ValueError: the store URI's scheme is not one of :attr:`STORE_SCHEMES`.
    """

    MEDIA_NAME = "file"
    EXPIRES = 90
    STORE_SCHEMES = {
        "": FSFilesStore,
        "file": FSFilesStore,
        "s3": S3FilesStore,
    }
    DEFAULT_FILES_URLS_FIELD = "file_urls"
    DEFAULT_FILES_RESULT_FIELD = "files"
    #: The setting naming the store (``ImagesPipeline``: ``IMAGES_STORE``).
    _STORE_SETTING = "FILES_STORE"

    def __init__(self, store_uri, download_func=None, settings=None, *, crawler=None):
        if not store_uri:
            raise NotConfigured(
                f"{self._STORE_SETTING} is not set: {type(self).__name__} needs a directory "
                "or an s3:// URI to store files in"
            )
        if settings is None and crawler is not None:
            settings = crawler.settings
        if isinstance(settings, dict) or settings is None:
            settings = Settings(settings)
        self.store = self._get_store(store_uri)
        resolve = self._resolver("FilesPipeline", settings)
        self.expires = settings.getint(resolve("FILES_EXPIRES"), self.EXPIRES)
        if not hasattr(self, "FILES_URLS_FIELD"):
            self.FILES_URLS_FIELD = self.DEFAULT_FILES_URLS_FIELD
        if not hasattr(self, "FILES_RESULT_FIELD"):
            self.FILES_RESULT_FIELD = self.DEFAULT_FILES_RESULT_FIELD
        self.files_urls_field = settings.get(resolve("FILES_URLS_FIELD"), self.FILES_URLS_FIELD)
        self.files_result_field = settings.get(resolve("FILES_RESULT_FIELD"),
                                               self.FILES_RESULT_FIELD)
        super().__init__(download_func=download_func, crawler=crawler)

    def _resolver(self, base_class_name, settings):
        def resolve(key):
            return self._key_for_pipe(key, base_class_name=base_class_name, settings=settings)
        return resolve

    @classmethod
    def from_settings(cls, settings):
        """Build from ``FILES_STORE``; configures :class:`S3FilesStore` from the AWS
        settings and ``FILES_STORE_S3_ACL``."""
        cls._configure_s3(settings, cls._S3_ACL_SETTING)
        return cls(settings[cls._STORE_SETTING], settings=settings)

    #: The setting of the S3 store's ACL (``ImagesPipeline``: ``IMAGES_STORE_S3_ACL``).
    _S3_ACL_SETTING = "FILES_STORE_S3_ACL"

    @classmethod
    def from_crawler(cls, crawler):
        """Build as Scrapy 2.19 does, ``cls(<FILES_STORE>, crawler=crawler)`` (the S3
        store configured first), so a subclass whose ``__init__`` requires ``crawler``
        works; Scrapy 1.2's way, :meth:`from_settings`, when a subclass overrides
        ``from_settings`` or its ``__init__`` takes no ``crawler``."""
        own = getattr(cls.from_settings, "__module__", None) in _OWN_MODULES
        if not own or not _init_takes_crawler(cls):
            return super().from_crawler(crawler)
        cls._configure_s3(crawler.settings, cls._S3_ACL_SETTING)
        return cls(crawler.settings[cls._STORE_SETTING], crawler=crawler)

    @classmethod
    def _configure_s3(cls, settings, acl_setting):
        s3store = cls.STORE_SCHEMES["s3"]
        s3store.AWS_ACCESS_KEY_ID = settings.get("AWS_ACCESS_KEY_ID")
        s3store.AWS_SECRET_ACCESS_KEY = settings.get("AWS_SECRET_ACCESS_KEY")
        s3store.AWS_ENDPOINT_URL = settings.get("AWS_ENDPOINT_URL")
        s3store.AWS_REGION_NAME = settings.get("AWS_REGION_NAME")
        s3store.POLICY = settings.get(acl_setting) or "private"

    def _get_store(self, uri):
        if os.path.isabs(uri):  # also Windows paths like C:\some\dir
            scheme = "file"
        else:
            scheme = urlparse(uri).scheme
        try:
            store_cls = self.STORE_SCHEMES[scheme]
        except KeyError:
            raise ValueError(
                f"{self._STORE_SETTING} {uri!r}: unsupported scheme {scheme!r} "
                f"(supported: {', '.join(repr(s) for s in self.STORE_SCHEMES)})"
            ) from None
        return store_cls(uri)

    def media_to_download(self, request, info):
        """Return the stored file's result when it is fresh (no download), else None.

        A ``stat_file`` error is logged at ERROR and the file is downloaded."""
        path = self.file_path(request, info=info)
        try:
            result = self.store.stat_file(path, info)
        except Exception:
            logger.error("%s.store.stat_file", type(self).__name__, exc_info=True,
                         extra={"spider": info.spider})
            return None
        if not result:
            return None
        last_modified = result.get("last_modified", None)
        if not last_modified:
            return None
        age_days = (time.time() - last_modified) / 60 / 60 / 24
        if age_days > self.expires:
            return None
        logger.debug(
            "File (uptodate): Downloaded %(medianame)s from %(request)s referred in <%(referer)s>",
            {"medianame": self.MEDIA_NAME, "request": request, "referer": referer_str(request)},
            extra={"spider": info.spider},
        )
        self.inc_stats(info.spider, "uptodate")
        return {"url": request.url, "path": path, "checksum": result.get("checksum", None)}

    def media_failed(self, failure, request, info):
        """Log the download error at WARNING (not for ``IgnoreRequest``) and raise
        :class:`FileException`."""
        if not isinstance(failure.value, IgnoreRequest):
            logger.warning(
                "File (unknown-error): Error downloading %(medianame)s from %(request)s "
                "referred in <%(referer)s>: %(exception)s",
                {"medianame": self.MEDIA_NAME, "request": request,
                 "referer": referer_str(request), "exception": failure.value},
                extra={"spider": info.spider},
            )
        raise FileException(str(failure.value) or type(failure.value).__name__)

    def media_downloaded(self, response, request, info):
        """Store a downloaded file.

        Returns:
            ``{'url': request.url, 'path': store path, 'checksum': MD5 hex}``.

        Raises:
            FileException: status other than 200 (``'download-error'``), empty body
                (``'empty-content'``), or an error while storing (logged at WARNING,
                or ERROR with the traceback for unexpected errors).
        """
        referer = referer_str(request)
        if response.status != 200:
            logger.warning(
                "File (code: %(status)s): Error downloading file from %(request)s "
                "referred in <%(referer)s>",
                {"status": response.status, "request": request, "referer": referer},
                extra={"spider": info.spider},
            )
            raise FileException("download-error")
        if not response.body:
            logger.warning(
                "File (empty-content): Empty file from %(request)s referred in "
                "<%(referer)s>: no-content",
                {"request": request, "referer": referer},
                extra={"spider": info.spider},
            )
            raise FileException("empty-content")
        status = "cached" if "cached" in response.flags else "downloaded"
        logger.debug(
            "File (%(status)s): Downloaded file from %(request)s referred in <%(referer)s>",
            {"status": status, "request": request, "referer": referer},
            extra={"spider": info.spider},
        )
        self.inc_stats(info.spider, status)
        try:
            path = self.file_path(request, response=response, info=info)
            checksum = self.file_downloaded(response, request, info)
        except FileException as exc:
            logger.warning(
                "File (error): Error processing file from %(request)s referred in "
                "<%(referer)s>: %(errormsg)s",
                {"request": request, "referer": referer, "errormsg": str(exc)},
                extra={"spider": info.spider}, exc_info=True,
            )
            raise
        except Exception as exc:
            logger.error(
                "File (unknown-error): Error processing file from %(request)s referred in "
                "<%(referer)s>",
                {"request": request, "referer": referer},
                exc_info=True, extra={"spider": info.spider},
            )
            raise FileException(str(exc)) from exc
        return {"url": request.url, "path": path, "checksum": checksum}

    def inc_stats(self, status, *args, spider=None):
        """Count a file in ``file_count`` and ``file_status_count/<status>``.

        Called ``inc_stats(status)`` (Scrapy 2.19) or ``inc_stats(spider, status)``
        (Scrapy 1.2, as crawlfw's own code calls it, so a subclass overriding it with
        either signature keeps working).

        Args:
            status (str): ``downloaded``, ``uptodate`` or ``cached``.
            spider: the spider (by keyword); None: the crawler's.
        """
        if args:  # inc_stats(spider, status)
            spider, status = status, args[0]
        stats = self._stats(spider)
        if stats is not None:
            stats.inc_value("file_count", spider=spider)
            stats.inc_value(f"file_status_count/{status}", spider=spider)

    def _stats(self, spider):
        crawler = getattr(spider, "crawler", None) or self.crawler
        return getattr(crawler, "stats", None)

    # --- overridable interface ---------------------------------------------------------

    def get_media_requests(self, item, info):
        """One ``Request`` per URL in ``item[files_urls_field]`` (none when missing; any
        item type, read through ``itemadapter``)."""
        from itemadapter import ItemAdapter

        return [Request(x) for x in ItemAdapter(item).get(self.files_urls_field, [])]

    def file_downloaded(self, response, request, info):
        """Store ``response.body`` at :meth:`file_path`; return its MD5 hex digest."""
        path = self.file_path(request, response=response, info=info)
        buf = BytesIO(response.body)
        checksum = md5sum(buf)
        buf.seek(0)
        self.store.persist_file(path, buf, info)
        return checksum

    def item_completed(self, results, item, info):
        """Set ``item[files_result_field]`` to the successful results (when the item is
        a dict or declares that field: any item type, through ``itemadapter``); return the
        item."""
        return _set_results(item, self.files_result_field, results)

    def file_path(self, request, response=None, info=None):
        """Return the store path of a request's file: ``full/<SHA1 hex of the URL><ext>``.

        ``ext`` is the URL's extension (``os.path.splitext``) only if ``mimetypes`` knows
        it (``mimetypes.types_map``); otherwise the extension ``mimetypes`` guesses for
        the URL's type, or none (Scrapy 2's rule: no URL can make the path too long,
        absolute, or climb out of the store; Scrapy 1.2 kept any extension).

        Passing a URL instead of a request, or overriding the deprecated ``file_key``,
        still works with a ``CrawlfwDeprecationWarning``.
        """
        url = _url_of(request, "FilesPipeline.file_key(url)")
        if not hasattr(self.file_key, "_base"):
            _warn_deprecated("FilesPipeline.file_key(url)")
            return self.file_key(url)
        media_guid = hashlib.sha1(to_bytes(url)).hexdigest()
        return f"full/{media_guid}{_safe_extension(url)}"

    def file_key(self, url):
        """Deprecated: use ``file_path(request, response=None, info=None)``."""
        return self.file_path(url)

    file_key._base = True


def _warn_deprecated(old):
    warnings.warn(
        f"{old} is deprecated, please use file_path(request, response=None, info=None) "
        "(thumb_path(request, thumb_id, response=None, info=None) for thumbnails) instead",
        category=CrawlfwDeprecationWarning, stacklevel=3,
    )


def _url_of(request, old):
    """The URL of a Request; a plain URL (the old ``*_key(url)`` calls) warns."""
    if isinstance(request, Request):
        return request.url
    _warn_deprecated(old)
    return request
