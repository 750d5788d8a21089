"""Feed storages: where a feed's bytes go (the storage classes of Scrapy 1.2's
``scrapy.extensions.feedexport``; :mod:`crawlfw.extensions.feedexport`, that public
path, names them too).

A *feed storage* says where a feed goes. It is built from the feed URI (``FEED_URI``
after templating) and used in two calls: :meth:`~IFeedStorage.open` returns a binary file
the exporter writes into, :meth:`~IFeedStorage.store` puts that file in its final place.
Storages are picked by URI scheme from ``FEED_STORAGES`` / ``FEED_STORAGES_BASE``:

=========  ==========================  =============================================
scheme     class                       URI example
=========  ==========================  =============================================
(none)     :class:`FileFeedStorage`    ``items.json``, ``/tmp/out/%(name)s.csv``
``file``   :class:`FileFeedStorage`    ``file:///tmp/items.json``
``stdout`` :class:`StdoutFeedStorage`  ``stdout:``
``ftp``    :class:`FTPFeedStorage`     ``ftp://user:pass@ftp.example.com/path/items.xml``
``s3``     :class:`S3FeedStorage`      ``s3://bucket/path/items.jl`` (boto3)
=========  ==========================  =============================================

They live in ``core/`` beside :class:`crawlfw.core.feeds.feeds.FeedWriter`, which needs
:class:`FileFeedStorage` to know which feeds it can cut back, so that ``core/`` imports
nothing from ``extensions/`` (the layers of ``tests/test_layers.py``).
"""

from __future__ import annotations

import os
import posixpath
import sys
from tempfile import NamedTemporaryFile
from typing import IO, TYPE_CHECKING, Any, Protocol, runtime_checkable
from urllib.parse import unquote, urlparse

from w3lib.url import file_uri_to_path

from crawlfw.exceptions import NotConfigured

if TYPE_CHECKING:
    import ftplib

    from crawlfw.core._types import CrawlerLike
    from crawlfw.settings import BaseSettings
    from crawlfw.spiders import Spider

__all__ = [
    "IFeedStorage",
    "BlockingFeedStorage",
    "StdoutFeedStorage",
    "FileFeedStorage",
    "FTPFeedStorage",
    "S3FeedStorage",
]


@runtime_checkable
class IFeedStorage(Protocol):
    """What a feed storage class provides (Scrapy 1.2's zope ``IFeedStorage`` interface).

    The constructor takes the feed URI (``cls(uri)``); a storage may instead offer
    ``from_crawler(crawler, uri)`` or ``from_settings(settings, uri)``, which are
    preferred in that order. It may raise :class:`~crawlfw.exceptions.NotConfigured`
    to say it cannot work (a missing library), which disables its scheme.

    Optionally a storage has ``discard(file)``: called instead of ``store`` when the feed
    is not stored (an empty feed with ``FEED_STORE_EMPTY = False``), to remove what
    ``open`` created.
    """

    def open(self, spider: Spider | None) -> IO[bytes]:
        """Open the storage for ``spider`` and return a binary file to write the feed into.

        Args:
            spider: the :class:`~crawlfw.spiders.Spider` whose items are exported.

        Returns:
            A file object accepting ``bytes``.
        """

    def store(self, file: IO[bytes]) -> None:
        """Put the finished feed ``file`` (as returned by ``open``) in its final place.

        Raises:
            Exception: any error the back end raises; the caller logs it.
        """


class BlockingFeedStorage:
    """Base for storages that upload a finished local temporary file (FTP, S3).

    :meth:`open` returns a named temporary file (prefix ``feed-``) in ``FEED_TEMPDIR``
    (read from ``spider.crawler.settings``; the system temporary directory when unset).
    :meth:`store` calls :meth:`_store_in_thread`, the method subclasses implement (the
    name is Scrapy's, where it ran in a thread pool; here it runs in the caller's
    thread, which in the crawlfw runtime is the Exporter actor's). The temporary file is
    deleted once stored; if storing fails it is kept, so the data survives, and its
    path is in ``file.name`` (the feed writer logs it).
    """

    def open(self, spider: Spider | None) -> IO[bytes]:
        """Create and return the local temporary file (opened ``w+b``).

        Raises:
            OSError: ``FEED_TEMPDIR`` is set but is not a directory (message names it).
        """
        path = _setting_of(spider, "FEED_TEMPDIR")
        if path and not os.path.isdir(path):
            raise OSError(f"Not a Directory: {path} (FEED_TEMPDIR)")
        return NamedTemporaryFile(prefix="feed-", dir=path, delete=False)

    def store(self, file: IO[bytes]) -> None:
        """Upload ``file`` with :meth:`_store_in_thread`, then delete it.

        Raises:
            Exception: whatever the upload raises; the local file is then closed but kept.
        """
        file.flush()
        file.seek(0)
        try:
            self._store_in_thread(file)
        finally:
            file.close()
        _remove_quietly(file.name)

    def discard(self, file: IO[bytes]) -> None:
        """Close and delete the temporary file without uploading it."""
        file.close()
        _remove_quietly(file.name)

    def _store_in_thread(self, file: IO[bytes]) -> None:
        """Upload the finished temporary ``file`` (positioned at 0). Subclasses implement it.

        Raises:
            NotImplementedError: in this base class.
        """
        raise NotImplementedError


class StdoutFeedStorage:
    """Write the feed to the standard output (``stdout:`` URIs, ``-o -`` on the command line).

    Args:
        uri (str): the feed URI (unused).
        _stdout: a binary file to use instead of ``sys.stdout.buffer`` (for tests).
    """

    def __init__(self, uri: str, _stdout: IO[bytes] | None = None) -> None:
        self._stdout = _stdout

    def open(self, spider: Spider | None) -> IO[bytes]:
        """Return the binary standard output (looked up now, so redirections apply)."""
        if self._stdout is not None:
            return self._stdout
        stdout: Any = sys.stdout  # a TextIO, or a binary file a test put there
        out: IO[bytes] = getattr(stdout, "buffer", stdout)
        return out

    def store(self, file: IO[bytes]) -> None:
        """Flush the standard output (it is never closed)."""
        file.flush()

    def discard(self, file: IO[bytes]) -> None:
        """Nothing to undo: nothing was written (the feed writer starts exporting lazily)."""


class FileFeedStorage:
    """Write the feed to a local file, creating its parent directories.

    By default the file is opened in append mode (``'ab'``), as Scrapy 1.2 does: running
    a crawl twice with the same ``FEED_URI`` (or ``-o``) adds to the file (for JSON and
    XML that gives a file holding two documents). Template the URI with ``%(time)s`` to
    get one file per run, or set the feed option ``overwrite`` (``-O FILE``, Scrapy 2) to
    replace the file (``'wb'``).

    Args:
        uri (str): a ``file://`` URI (RFC 8089) or a plain path, absolute or relative to
            the working directory (also Windows paths with a drive letter).
        feed_options (dict | None): the feed's options; ``overwrite`` (bool) is read.
    """

    def __init__(self, uri: str, *, feed_options: dict[str, Any] | None = None) -> None:
        if urlparse(uri).scheme == "file":
            self.path = file_uri_to_path(uri)
        else:
            self.path = uri
        self.write_mode = "wb" if (feed_options or {}).get("overwrite") else "ab"
        self._created = False
        self._initial_size = 0

    def open(self, spider: Spider | None) -> IO[bytes]:
        """Create the parent directories if needed and open the file for appending (or,
        with ``overwrite``, for writing it anew).

        Returns:
            The file, opened ``'ab'`` (or ``'wb'``).

        Raises:
            OSError: the directories or the file cannot be created (permissions, a file
                in the way...).
        """
        dirname = os.path.dirname(self.path)
        if dirname and not os.path.exists(dirname):
            os.makedirs(dirname, exist_ok=True)
        try:
            self._initial_size = os.path.getsize(self.path) if self.write_mode == "ab" else 0
            self._created = not os.path.exists(self.path)
        except OSError:
            self._initial_size = 0
            self._created = True
        return open(self.path, self.write_mode)

    def store(self, file: IO[bytes]) -> None:
        """Close the file: its data is already in place."""
        file.close()

    def discard(self, file: IO[bytes]) -> None:
        """Close the file and undo ``open``: delete it if ``open`` created it, else cut it
        back to its size before ``open``."""
        file.close()
        if self._created:
            _remove_quietly(self.path)
        else:
            os.truncate(self.path, self._initial_size)


class FTPFeedStorage(BlockingFeedStorage):
    """Upload the feed to an FTP server (RFC 959) with :mod:`ftplib`.

    The URI gives everything: ``ftp://user:password@host:port/dir/file``. User and
    password are percent-decoded (no user: anonymous login); the path is relative to the
    FTP root and missing directories are created (``MKD``). The file is sent with
    ``STOR``, replacing any file of that name. Passive mode is used unless
    ``FEED_STORAGE_FTP_ACTIVE`` is true (a later Scrapy setting).

    Args:
        uri (str): the ``ftp://`` URI.
        use_active_mode (bool): use active mode (``PORT``) instead of passive (``PASV``).
        timeout_s (float): socket timeout for the control and data connections, seconds.

    Raises:
        ValueError: the URI has no host or no file name.
    """

    def __init__(self, uri: str, use_active_mode: bool = False, timeout_s: float = 60.0) -> None:
        u = urlparse(uri)
        if not u.hostname:
            raise ValueError(f"FTP feed URI {_redact_uri(uri)!r} has no host name")
        self.host = u.hostname
        self.port = int(u.port or 21)
        self.username = unquote(u.username) if u.username else None
        self.password = unquote(u.password) if u.password else None
        self.path = unquote(u.path)
        if not posixpath.basename(self.path):
            raise ValueError(f"FTP feed URI {_redact_uri(uri)!r} has no file name in its path")
        self.use_active_mode = use_active_mode
        self.timeout_s = timeout_s
        # ftplib is imported by FTP feeds only, here, as the crawl starts: imported when
        # the file is stored, in a process out of file descriptors, it would fail the upload
        import ftplib  # noqa: F401

    @classmethod
    def from_crawler(cls, crawler: CrawlerLike, uri: str) -> FTPFeedStorage:
        """Build from the crawler's settings (see :meth:`from_settings`)."""
        return cls.from_settings(crawler.settings, uri)

    @classmethod
    def from_settings(cls, settings: BaseSettings, uri: str) -> FTPFeedStorage:
        """Build with ``use_active_mode`` from the ``FEED_STORAGE_FTP_ACTIVE`` setting."""
        return cls(uri, use_active_mode=settings.getbool("FEED_STORAGE_FTP_ACTIVE"))

    def _store_in_thread(self, file: IO[bytes]) -> None:
        """Connect, log in, create and enter the directory, ``STOR`` the file, quit.

        Raises:
            ftplib.Error: the server refused a command (bad login: ``error_perm``).
            OSError: the connection failed or timed out.
        """
        import ftplib

        file.seek(0)
        with ftplib.FTP(timeout=self.timeout_s) as ftp:
            ftp.connect(self.host, self.port)
            ftp.login(self.username or "", self.password or "")
            ftp.set_pasv(not self.use_active_mode)
            dirname, filename = posixpath.split(self.path)
            _ftp_makedirs_cwd(ftp, dirname or "/")
            ftp.storbinary(f"STOR {filename}", file)


class S3FeedStorage(BlockingFeedStorage):
    """Upload the feed to Amazon S3 or an S3-compatible server, with boto3.

    URI: ``s3://bucket/key``; credentials may be given in it
    (``s3://KEYID:SECRET@bucket/key``, percent-encoded) and override the arguments.

    Args:
        uri (str): the ``s3://`` URI.
        access_key (str | None): AWS access key id; None lets boto3 find credentials
            (environment, config files) unless the URI has them.
        secret_key (str | None): AWS secret access key.
        endpoint_url (str | None): keyword only; the server to talk to instead of AWS
            (``http://127.0.0.1:9000`` for a local S3-compatible server).
        region_name (str | None): keyword only; the AWS region.
        acl (str | None): keyword only; a canned ACL for the object (``'private'``,
            ``'public-read'``...), None for the bucket's default.

    Raises:
        NotConfigured: boto3 is not installed (disables the ``s3`` scheme).
        ValueError: the URI has no bucket.
    """

    def __init__(self, uri: str, access_key: str | None = None, secret_key: str | None = None,
                 *, endpoint_url: str | None = None, region_name: str | None = None,
                 acl: str | None = None) -> None:
        try:
            import boto3.session
        except ImportError:
            raise NotConfigured("missing boto3 library: pip install boto3") from None
        u = urlparse(uri)
        if not u.hostname:
            raise ValueError(f"S3 feed URI {_redact_uri(uri)!r} has no bucket name")
        self.bucketname = u.hostname
        self.keyname = unquote(u.path[1:])
        self.access_key = unquote(u.username) if u.username else access_key
        self.secret_key = unquote(u.password) if u.password else secret_key
        self.endpoint_url = endpoint_url
        self.acl = acl
        session = boto3.session.Session()
        self.s3_client = session.client(
            "s3",
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            endpoint_url=endpoint_url,
            region_name=region_name,
        )

    @classmethod
    def from_crawler(cls, crawler: CrawlerLike, uri: str) -> S3FeedStorage:
        """Build from the crawler's settings (see :meth:`from_settings`)."""
        return cls.from_settings(crawler.settings, uri)

    @classmethod
    def from_settings(cls, settings: BaseSettings, uri: str) -> S3FeedStorage:
        """Build from settings: ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, the
        endpoint from ``FEED_STORAGE_S3_ENDPOINT_URL`` or else ``AWS_ENDPOINT_URL``,
        ``AWS_REGION_NAME`` and ``FEED_STORAGE_S3_ACL``."""
        return cls(
            uri,
            settings.get("AWS_ACCESS_KEY_ID"),
            settings.get("AWS_SECRET_ACCESS_KEY"),
            endpoint_url=(settings.get("FEED_STORAGE_S3_ENDPOINT_URL")
                          or settings.get("AWS_ENDPOINT_URL")),
            region_name=settings.get("AWS_REGION_NAME"),
            acl=settings.get("FEED_STORAGE_S3_ACL") or None,
        )

    def _store_in_thread(self, file: IO[bytes]) -> None:
        """``PutObject`` the file to ``bucketname``/``keyname``.

        Raises:
            botocore.exceptions.ClientError: the server refused (no such bucket, access
                denied...).
            botocore.exceptions.EndpointConnectionError: the server cannot be reached.
        """
        file.seek(0)
        extra = {"ACL": self.acl} if self.acl else {}
        self.s3_client.put_object(Bucket=self.bucketname, Key=self.keyname, Body=file, **extra)


# Helpers


def _redact_uri(uri: str) -> str:
    """Return ``uri`` with the password of its user-info replaced by ``***`` (for logs)."""
    try:
        u = urlparse(uri)
        password = u.password
    except ValueError:
        return uri
    if password is None:
        return uri
    host = u.netloc.rpartition("@")[2]
    return u._replace(netloc=f"{u.username or ''}:***@{host}").geturl()


def _setting_of(spider: Spider | None, name: str) -> Any:
    """Read setting ``name`` from ``spider.crawler.settings`` (or ``spider.settings``)."""
    crawler = getattr(spider, "crawler", None)
    settings = getattr(crawler, "settings", None)
    if settings is None:
        settings = getattr(spider, "settings", None)
    if settings is None:
        return None
    return settings.get(name)


def _remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def _ftp_makedirs_cwd(ftp: ftplib.FTP, path: str, first_call: bool = True) -> None:
    """Enter FTP directory ``path``, creating it and its missing parents (``MKD``)."""
    import ftplib

    try:
        ftp.cwd(path)
    except ftplib.error_perm:
        parent = posixpath.dirname(path)
        if parent == path:  # the root itself cannot be entered: nothing to create
            raise
        _ftp_makedirs_cwd(ftp, parent, False)
        ftp.mkd(path)
        if first_call:
            ftp.cwd(path)
