"""Choose the Response class for a download (Scrapy 1.2's ``scrapy.responsetypes``).

The downloader calls ``responsetypes.from_args(headers=..., url=..., body=...)`` for
every response. Decisions are cached per ``Content-Type`` value and per file
extension, so a crawl pays the string work once per distinct value.

Order of evidence (``from_args``): the ``Content-Type`` header (a ``Content-Encoding``
makes the body binary), ``Content-Disposition``'s filename, the URL's extension, an
explicit filename, then a sniff of the first 5000 bytes of the body.
"""

from __future__ import annotations

import posixpath
from typing import Any

from crawlfw.http import HtmlResponse, JsonResponse, Response, TextResponse, XmlResponse
from crawlfw.utils.python import binary_is_text, to_bytes

__all__ = ["ResponseTypes", "responsetypes"]

# Extensions the stdlib's built-in table lacks (shipped by Scrapy in its mime.types).
_EXTRA_TYPES = {
    ".xhtml": "application/xhtml+xml",
    ".xht": "application/xhtml+xml",
    ".rss": "application/rss+xml",
    ".atom": "application/atom+xml",
    ".rdf": "application/rdf+xml",
    ".jsonld": "application/ld+json",
    ".htm": "text/html",
    ".shtml": "text/html",
}

_CACHE_LIMIT = 1024


class ResponseTypes:
    """Map MIME types, headers, file names and body sniffing to Response classes.

    ``CLASSES`` maps a MIME type (or ``type/*``) to a class path; anything not listed
    is a plain :class:`~crawlfw.http.Response` (binary).
    """

    CLASSES = {
        "text/html": "crawlfw.http.HtmlResponse",
        "application/atom+xml": "crawlfw.http.XmlResponse",
        "application/rdf+xml": "crawlfw.http.XmlResponse",
        "application/rss+xml": "crawlfw.http.XmlResponse",
        "application/xhtml+xml": "crawlfw.http.HtmlResponse",
        "application/vnd.wap.xhtml+xml": "crawlfw.http.HtmlResponse",
        "application/xml": "crawlfw.http.XmlResponse",
        "application/json": "crawlfw.http.JsonResponse",
        "application/x-json": "crawlfw.http.JsonResponse",
        "application/json-amazonui-streaming": "crawlfw.http.JsonResponse",
        "application/javascript": "crawlfw.http.TextResponse",
        "application/x-javascript": "crawlfw.http.TextResponse",
        "text/xml": "crawlfw.http.XmlResponse",
        "text/*": "crawlfw.http.TextResponse",
    }

    _BY_PATH = {
        "crawlfw.http.Response": Response,
        "crawlfw.http.TextResponse": TextResponse,
        "crawlfw.http.HtmlResponse": HtmlResponse,
        "crawlfw.http.XmlResponse": XmlResponse,
        "crawlfw.http.JsonResponse": JsonResponse,
    }

    def __init__(self):
        self.classes = {}
        self._mimetypes: Any = None
        for mimetype, cls in self.CLASSES.items():
            self.classes[mimetype] = self._load(cls)
        self._content_type_cache: dict[tuple[bytes, bool], type[Response]] = {}
        self._ext_cache: dict[str, type[Response]] = {}

    @property
    def mimetypes(self):
        """The ``mimetypes.MimeTypes`` table of file extensions (Python's built-in table
        and Scrapy's extra types), made when a class is first chosen by file name.

        A ``MimeTypes`` instance holds Python's built-in table only, but the first one
        made in a process has the ``mimetypes`` module read the system's files for its
        own module-level table (``mimetypes.init``). In a process out of file descriptors
        (``EMFILE``) that read fails, after ``mimetypes`` has marked itself initialised:
        the table is then simply made again, the same as it would have been."""
        if self._mimetypes is None:
            from mimetypes import MimeTypes

            try:
                table = MimeTypes()
            except OSError:  # mimetypes.init() could not read a system file: see above
                table = MimeTypes()
            for ext, mimetype in _EXTRA_TYPES.items():
                table.add_type(mimetype, ext)
            self._mimetypes = table
        return self._mimetypes

    @mimetypes.setter
    def mimetypes(self, table) -> None:
        self._mimetypes = table

    def _load(self, path):
        if not isinstance(path, str):
            return path
        cls = self._BY_PATH.get(path)
        if cls is None:
            from crawlfw.utils.misc import load_object

            cls = load_object(path)
        return cls

    def from_mimetype(self, mimetype: str | None) -> type[Response]:
        """Return the class for a MIME type like ``'text/html'`` (lower-case, no parameters).

        An unknown ``type/subtype`` falls back to the ``type/*`` entry, then Response.
        """
        if mimetype is None:
            return Response
        cls = self.classes.get(mimetype)
        if cls is not None:
            return cls
        basetype = f"{mimetype.split('/')[0]}/*"
        return self.classes.get(basetype, Response)

    def from_content_type(
        self, content_type: str | bytes, content_encoding: str | bytes | None = None
    ) -> type[Response]:
        """Return the class for a ``Content-Type`` value (parameters ignored, RFC 9110 8.3).

        Args:
            content_type: e.g. ``b'text/html; charset=utf-8'``.
            content_encoding: a ``Content-Encoding`` value; when set the body is still
                encoded (e.g. gzip) and so binary: Response.
        """
        if content_encoding:
            return Response
        key = to_bytes(content_type, "latin-1")
        cls = self._content_type_cache.get(key)
        if cls is None:
            mimetype = key.decode("latin-1").split(";")[0].strip().lower()
            cls = self.from_mimetype(mimetype)
            if len(self._content_type_cache) >= _CACHE_LIMIT:
                self._content_type_cache.clear()
            self._content_type_cache[key] = cls
        return cls

    def from_content_disposition(self, content_disposition: str | bytes) -> type[Response]:
        """Return the class for the ``filename`` of a ``Content-Disposition`` value (RFC 6266).

        Returns Response when no filename can be read.
        """
        try:
            filename = (
                to_bytes(content_disposition, "latin-1")
                .decode("latin-1")
                .split(";")[1]
                .split("=")[1]
            )
            filename = filename.strip("\"' ")
            return self.from_filename(filename)
        except IndexError:
            return Response

    def from_headers(self, headers) -> type[Response]:
        """Return the class for a :class:`~crawlfw.http.Headers` (Content-Type, then
        Content-Disposition); Response when they do not decide."""
        cls = Response
        content_type = headers.get(b"Content-Type")
        if content_type is not None:
            cls = self.from_content_type(
                content_type=content_type, content_encoding=headers.get(b"Content-Encoding")
            )
        if cls is Response:
            content_disposition = headers.get(b"Content-Disposition")
            if content_disposition is not None:
                cls = self.from_content_disposition(content_disposition)
        return cls

    def from_filename(self, filename: str) -> type[Response]:
        """Return the class for a file name or URL, by its extension (``mimetypes``).

        Compressed files (``.gz``, ``.bz2``, ``.tgz``...) are binary: Response.
        """
        if filename.startswith("data:"):
            return self._guess(filename)
        ext = posixpath.splitext(filename)[1]
        cls = self._ext_cache.get(ext)
        if cls is None:
            cls = self._guess("x" + ext)
            if len(self._ext_cache) >= _CACHE_LIMIT:
                self._ext_cache.clear()
            self._ext_cache[ext] = cls
        return cls

    def _guess(self, filename: str) -> type[Response]:
        mimetype, encoding = self.mimetypes.guess_type(filename)
        if mimetype and not encoding:
            return self.from_mimetype(mimetype)
        return Response

    def from_body(self, body: bytes) -> type[Response]:
        """Guess the class from the first 5000 bytes of ``body``.

        Binary control characters -> Response; ``<html>`` -> HtmlResponse; ``<?xml`` ->
        XmlResponse; other text -> TextResponse.
        """
        chunk = to_bytes(body[:5000])
        if not binary_is_text(chunk):
            return self.from_mimetype("application/octet-stream")
        lowered = chunk.lower()
        if b"<html>" in lowered:
            return self.from_mimetype("text/html")
        if b"<?xml" in lowered:
            return self.from_mimetype("text/xml")
        return self.from_mimetype("text")

    def from_args(
        self,
        headers=None,
        url: str | None = None,
        filename: str | None = None,
        body: bytes | None = None,
    ) -> type[Response]:
        """Return the most appropriate Response class for what is known of a download.

        Args:
            headers: the response :class:`~crawlfw.http.Headers`.
            url: the response URL (its extension).
            filename: a local file name (its extension).
            body: the body (sniffed).

        Returns:
            Response, TextResponse, HtmlResponse or XmlResponse (or a class configured
            in ``CLASSES``).
        """
        cls = Response
        if headers is not None:
            cls = self.from_headers(headers)
        if cls is Response and url is not None:
            cls = self.from_filename(url)
        if cls is Response and filename is not None:
            cls = self.from_filename(filename)
        if cls is Response and body is not None:
            cls = self.from_body(body)
        return cls


#: The shared instance used by the downloader and the cache/file handlers.
responsetypes = ResponseTypes()
