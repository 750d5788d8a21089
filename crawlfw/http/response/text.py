""":class:`TextResponse`: a response whose body is text in some encoding.

Scrapy 1.2's ``scrapy.http.response.text``, with the body's encoding resolved (once)
in this order:

1. the ``encoding`` constructor argument;
2. a byte order mark (UTF-8/16/32) at the start of the body -- WHATWG Encoding
   standard, "decode": a BOM overrides every label, and w3lib's ``html_to_unicode``
   (which decodes :attr:`TextResponse.text`) honours it first;
3. the ``charset`` parameter of the ``Content-Type`` header (RFC 9110 section 8.3);
4. a declaration in the body: ``<meta charset>`` / ``<meta http-equiv=Content-Type>``
   (WHATWG HTML "prescan") or the XML declaration's ``encoding`` (XML 1.0 section 4.3.3);
5. detection: ASCII (reported as its WHATWG superset ``cp1252``), else UTF-8, else
   ``cp1252``.

Encoding labels are mapped with w3lib's ``resolve_encoding`` (WHATWG's label table:
``latin-1`` -> ``cp1252``, ``gb2312`` -> ``gb18030``...).
"""

from __future__ import annotations

import codecs
import json as _json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from w3lib.encoding import (
    html_body_declared_encoding,
    html_to_unicode,
    http_content_type_encoding,
    read_bom,
    resolve_encoding,
    to_unicode,
)
from w3lib.html import strip_html5_whitespace

from crawlfw.http._base_url import get_base_url
from crawlfw.http.request import Request
from crawlfw.http.response import Response
from crawlfw.utils._url_fastpaths import _PLAIN_PATH, SAFE_JOINED, join_prefixes, join_url

if TYPE_CHECKING:
    from crawlfw.selector import Selector, SelectorList

__all__ = ["TextResponse"]

#: The "not parsed yet" value of ``TextResponse._cached_decoded_json`` (Scrapy 2.19's
#: private names, which subclasses that parse JSON their own way read and set).
_NONE = object()
_NOT_SET = _NONE

_match_plain_path = _PLAIN_PATH.match  # urljoin's shortcut (join_url's first test)

#: ``{href: whether it is a plain path}`` (``_PLAIN_PATH``'s verdict, for hrefs of at
#: most _PLAIN_PATH_MEMO_KEY_MAX characters): pages repeat their navigation links, and
#: a dict lookup costs a tenth of the regex. Emptied when full; plain dict operations
#: are atomic under the GIL (responses are joined on several threads).
_PLAIN_PATH_MEMO: dict[str, bool] = {}
_PLAIN_PATH_MEMO_SIZE = 4096
_PLAIN_PATH_MEMO_KEY_MAX = 200


def _plain_path(url: str) -> bool:
    """Whether ``url`` (a str) is non-empty and matches ``_PLAIN_PATH`` (join_url's
    first test), remembered in ``_PLAIN_PATH_MEMO`` when it is short."""
    plain = bool(url) and _match_plain_path(url) is not None
    if len(url) <= _PLAIN_PATH_MEMO_KEY_MAX:
        if len(_PLAIN_PATH_MEMO) >= _PLAIN_PATH_MEMO_SIZE:
            _PLAIN_PATH_MEMO.clear()
        _PLAIN_PATH_MEMO[url] = plain
    return plain


#: crawlfw.selector.unified.response_selector, once loaded (that module imports this
#: one: it cannot be imported at the top). Kept in a global because an import statement
#: with a fromlist in the property cost a raised and cleared AttributeError per response.
_response_selector: Callable[[Any], Selector] | None = None


def _load_response_selector() -> Callable[[Any], Selector]:
    global _response_selector
    from crawlfw.selector.unified import response_selector

    _response_selector = response_selector
    return response_selector
# the first bytes of the byte order marks read_bom() knows (UTF-8, UTF-16/32 LE and BE)
_BOM_FIRST_BYTES = frozenset(b"\xef\xfe\xff\x00")


class TextResponse(Response):
    """A response with a text body: adds :attr:`encoding`, :attr:`text` and selectors.

    Args:
        url, status, headers, flags, request: as for :class:`Response`.
        body: bytes, or str (then ``encoding`` is required and used to encode it).
        encoding: the body's encoding, overriding headers and body declarations.

    Raises:
        TypeError: a str body without ``encoding``; other types as for Response.
    """

    _DEFAULT_ENCODING = "ascii"

    #: :attr:`Response.attributes` and ``encoding`` (Scrapy 2's).
    attributes: tuple[str, ...] = (*Response.attributes, "encoding")

    def __init__(self, *args, encoding: str | None = None, **kwargs):
        self._encoding = encoding
        self._cached_encoding = None
        self._cached_benc = None
        self._cached_ubody = None
        self._ubody_is_body = False  # see _utf8_text()
        self._cached_selector = None
        self._cached_join = None
        self._cached_decoded_json: Any = _NONE
        super().__init__(*args, **kwargs)

    def _set_body(self, body) -> None:
        self._body = b""  # used by encoding detection
        if isinstance(body, str):
            if self._encoding is None:
                raise TypeError(
                    f"Cannot convert str body - {type(self).__name__} has no encoding: "
                    "pass encoding='...' or a bytes body"
                )
            self._body = body.encode(self._encoding)
        else:
            super()._set_body(body)

    def replace(self, *args, **kwargs) -> TextResponse:
        """Return a new response with the same attributes except those given.

        The encoding is carried over: the copy decodes its body as this one did.
        """
        cls = kwargs.get("cls", self.__class__)
        if isinstance(cls, type) and issubclass(cls, TextResponse):
            kwargs.setdefault("encoding", self.encoding)
        return Response.replace(self, *args, **kwargs)

    @property
    def encoding(self) -> str:
        """Name of the codec of the body (str); see the module docstring for the order."""
        enc = self._cached_encoding
        if enc is None:
            enc = self._declared_encoding() or self._body_inferred_encoding()
            self._cached_encoding = enc
        return enc

    def _declared_encoding(self) -> str | None:
        return (
            self._encoding
            or self._bom_encoding()
            or self._headers_encoding()
            or self._body_declared_encoding()
        )

    def _bom_encoding(self) -> str | None:
        return read_bom(self._body)[0]

    def _headers_encoding(self) -> str | None:
        content_type = self.headers.get(b"Content-Type") or b""
        try:
            return _HEADER_ENCODINGS[content_type]
        except KeyError:
            enc = http_content_type_encoding(content_type.decode("latin-1"))
            if len(_HEADER_ENCODINGS) < _ENCODING_MEMO_SIZE:
                _HEADER_ENCODINGS[content_type] = enc
            return enc

    def _body_declared_encoding(self) -> str | None:
        return _body_declared(self._body)

    def _body_inferred_encoding(self) -> str:
        if self._cached_benc is None:
            content_type = (self.headers.get(b"Content-Type") or b"").decode("latin-1")
            benc, ubody = html_to_unicode(
                content_type,
                self._body,
                auto_detect_fun=self._auto_detect_fun,
                default_encoding=self._DEFAULT_ENCODING,
            )
            self._cached_benc = benc
            self._cached_ubody = ubody
            self._ubody_is_body = _is_body_as_utf8(self._body, benc, ubody)
        return self._cached_benc

    def _auto_detect_fun(self, text: bytes) -> str | None:
        for enc in (self._DEFAULT_ENCODING, "utf-8", "cp1252"):
            try:
                text.decode(enc)
            except UnicodeError:
                continue
            return resolve_encoding(enc)
        return None

    @property
    def text(self) -> str:
        """The body decoded with :attr:`encoding` (decoded once, then cached).

        Undecodable bytes become U+FFFD; a leading BOM is removed. As in browsers
        (WHATWG Encoding, "decode"), a BOM decides the decoding even when an explicit
        ``encoding`` argument names another codec.
        """
        ubody = self._cached_ubody
        if ubody is None:
            # resolve the encoding first: inference decodes and caches the body itself
            benc = self.encoding
            ubody = self._cached_ubody
            if ubody is None:
                benc, ubody = _decode(benc, self._body)
                self._cached_ubody = ubody
                self._ubody_is_body = _is_body_as_utf8(self._body, benc, ubody)
        return ubody

    def _utf8_text(self) -> bytes | None:
        """``self.text.encode("utf-8")`` when that is the body itself, else None.

        The selector then parses the body as it is rather than the text encoded again.
        That is when :attr:`text` was decoded here, from the body, with the UTF-8 codec
        (no byte order mark) and nothing replaced (no U+FFFD in it: a body holding one
        of its own takes the text path too).
        """
        if self._ubody_is_body and type(self).text is _TEXT_PROPERTY:
            return self._body
        return None

    def body_as_unicode(self) -> str:
        """Return :attr:`text` (Scrapy 1.2 name)."""
        return self.text

    def urljoin(self, url: str) -> str:
        """Return ``url`` made absolute against the document's base URL.

        The base is the first ``<base href>`` of the body (HTML, "document base URL"),
        else the response URL.
        """
        parts = self._cached_join
        if parts is None:
            base = get_base_url(self)
            parts = self._cached_join = (base, join_prefixes(base))
        plain = _PLAIN_PATH_MEMO.get(url) if url.__class__ is str else False
        if plain is None:
            plain = _plain_path(url)
        if plain:
            # join_url's first test, inline: a plain path on the origin or directory
            prefix = parts[1][0] if url[0] == "/" else parts[1][1]
            if prefix is not None:
                # safe as it is (see SAFE_JOINED): Request() takes it without a check
                joined = SAFE_JOINED[0] = prefix + url
                return joined
        return join_url(parts[0], parts[1], url)  # urljoin(base, url), faster

    @property
    def selector(self) -> Selector:
        """A :class:`crawlfw.selector.Selector` over this response, built once on first use."""
        sel = self._cached_selector
        if sel is None:
            # The selector refers back to this response weakly: no reference cycle, so
            # the response and its lxml tree are freed by reference counting.
            make = _response_selector or _load_response_selector()
            sel = self._cached_selector = make(self)
        return sel

    def xpath(self, query: str, **kwargs) -> SelectorList:
        """Shortcut for ``self.selector.xpath(query, **kwargs)``; returns a SelectorList."""
        return self.selector.xpath(query, **kwargs)

    def jmespath(self, query: str, **kwargs) -> SelectorList:
        """Shortcut for ``self.selector.jmespath(query, **kwargs)`` (Scrapy 2.19): select
        from a JSON body with a JMESPath expression (https://jmespath.org/).

        The selector of a JSON body is a ``'json'`` one when the response is a plain
        ``TextResponse`` (what ``application/json`` gives) and the body is a JSON object
        or array; see :meth:`crawlfw.selector.Selector.jmespath`.

        Returns:
            SelectorList: the results.

        Raises:
            jmespath.exceptions.JMESPathError: (a ``ValueError``) ``query`` is invalid.
        """
        return self.selector.jmespath(query, **kwargs)

    def json(self) -> Any:
        """The body parsed as JSON (RFC 8259), parsed once and cached (Scrapy 2.19).

        The bytes are decoded as JSON text is: UTF-8, UTF-16 or UTF-32 (detected by
        :func:`json.loads`); a body that is none of those is decoded with
        :attr:`encoding` instead.

        Returns:
            The value: ``dict``, ``list``, ``str``, ``int``, ``float``, ``bool`` or None.
            The same object on every call (changes to it are seen by later calls).

        Raises:
            json.JSONDecodeError: (a ``ValueError``) the body is not JSON.
        """
        data = self._cached_decoded_json
        if data is _NONE:
            try:
                data = _json.loads(self.body)
            except UnicodeDecodeError:
                data = _json.loads(self.text)
            self._cached_decoded_json = data
        return data

    def css(self, query: str) -> SelectorList:
        """Shortcut for ``self.selector.css(query)``; returns a SelectorList."""
        return self.selector.css(query)

    def _follow_url(self, url) -> str:
        root = getattr(url, "root", _NOT_SET)
        if root is not _NOT_SET and not isinstance(url, str):
            url = _url_from_selector(url, root)
        return super()._follow_url(url)

    def follow(
        self,
        url,
        callback: Callable | None = None,
        method: str = "GET",
        headers=None,
        body=None,
        cookies=None,
        meta: dict | None = None,
        encoding: str | None = None,
        priority: int = 0,
        dont_filter: bool = False,
        errback: Callable | None = None,
        cb_kwargs: dict | None = None,
        flags: list | None = None,
    ) -> Request:
        """Return a :class:`Request` for ``url`` resolved against this page's base URL.

        Like :meth:`Response.follow`, plus: ``url`` may be a Selector of an ``<a>`` or
        ``<link>`` element (its ``href``) or of an attribute value
        (``response.css('a::attr(href)')[0]``); ``encoding`` defaults to the response's.

        Raises:
            ValueError: ``url`` is None, or a Selector of another element or without href.
        """
        if url.__class__ is str and type(self)._follow_url is _TEXT_FOLLOW_URL:
            # what Response.follow -> _follow_url -> urljoin do with a str, without the
            # two calls (a callback may follow every link of the page)
            encoding = encoding or self.encoding
            return Request(
                self.urljoin(url),
                callback=callback,
                method=method,
                headers=headers,
                body=body,
                cookies=cookies,
                meta=meta,
                encoding=encoding,
                priority=priority,
                dont_filter=dont_filter,
                errback=errback,
                flags=flags,
                cb_kwargs=cb_kwargs,
            )
        return super().follow(
            url,
            callback=callback,
            method=method,
            headers=headers,
            body=body,
            cookies=cookies,
            meta=meta,
            encoding=encoding or self.encoding,
            priority=priority,
            dont_filter=dont_filter,
            errback=errback,
            flags=flags,
            cb_kwargs=cb_kwargs,
        )

    def follow_all(
        self,
        urls=None,
        callback: Callable | None = None,
        method: str = "GET",
        headers=None,
        body=None,
        cookies=None,
        meta: dict | None = None,
        encoding: str | None = None,
        priority: int = 0,
        dont_filter: bool = False,
        errback: Callable | None = None,
        cb_kwargs: dict | None = None,
        flags: list | None = None,
        css: str | None = None,
        xpath: str | None = None,
    ):
        """Return a generator of :meth:`follow` requests for several links (Scrapy >= 2.0).

        Exactly one of ``urls``, ``css`` and ``xpath`` gives the links:
        ``response.follow_all(css="li.next a", callback=self.parse)``. ``css``/``xpath``
        select ``<a>``/``<link>`` elements or attribute values; selected nodes that
        hold no link (another element, an ``<a>`` without ``href``) are skipped, as in
        Scrapy, while in ``urls`` such a selector raises when reached.

        Args:
            urls: an iterable of what :meth:`follow` takes (str, Link, Selector), or a
                SelectorList.
            callback, method, ...: :meth:`follow`'s arguments, the same for each request.
            css: a CSS selector (str) of the links.
            xpath: an XPath (str) of the links.

        Returns:
            A generator of :class:`Request`, in document order for ``css``/``xpath``.

        Raises:
            ValueError: not exactly one of ``urls``, ``css``, ``xpath`` is given; an
                invalid ``css``/``xpath`` expression.
            TypeError: ``urls`` is not iterable.
        """
        if sum(arg is not None for arg in (urls, css, xpath)) != 1:
            raise ValueError(
                "Please supply exactly one of the following arguments: urls, css, xpath"
            )
        if urls is None:
            urls = []
            for sel in self.css(css) if css is not None else self.xpath(xpath):
                try:
                    urls.append(_url_from_selector(sel, sel.root))
                except ValueError:
                    continue
        return super().follow_all(
            urls,
            callback=callback,
            method=method,
            headers=headers,
            body=body,
            cookies=cookies,
            meta=meta,
            encoding=encoding,
            priority=priority,
            dont_filter=dont_filter,
            errback=errback,
            flags=flags,
            cb_kwargs=cb_kwargs,
        )


_TEXT_PROPERTY = TextResponse.__dict__["text"]
_TEXT_FOLLOW_URL = TextResponse._follow_url
_UTF8_LABELS: dict = {}  # encoding name -> whether Python decodes it with the UTF-8 codec

#: How many distinct values each of the memos below keeps (then they stop growing).
_ENCODING_MEMO_SIZE = 256
# Content-Type header value (bytes) -> http_content_type_encoding() of it (a pure
# function of the value; a crawl sees a handful of values).
_HEADER_ENCODINGS: dict[bytes, str | None] = {}
# encoding name -> what html_to_unicode(f"charset={name}", body) takes from that
# header (http_content_type_encoding(), "-be" added to utf-16/utf-32 as it does), or
# None when the name is no label it reads (it then sniffs the body: not memoized).
_CHARSET_ENCODINGS: dict[str, str | None] = {}


try:
    # w3lib's scan of a body's first 4096 bytes for an encoding declaration, and its
    # reading of a <meta> tag's attributes (WHATWG HTML, "prescan a byte stream")
    from w3lib.encoding import _BODY_SCAN_RE, _meta_charset_label
except ImportError:  # pragma: no cover - another w3lib: its function each time
    _BODY_SCAN_RE = _meta_charset_label = None
# a <meta> tag's attribute text -> the encoding label it declares (None: none); the
# attributes of a site's charset and other head tags repeat from page to page
_META_LABELS: dict[str, str | None] = {}
_META_LABEL_MAX_CHARS = 256  # longer attribute texts are read each time


def _body_declared(body: bytes) -> str | None:
    """``html_body_declared_encoding(body)``, with the label each ``<meta>`` tag declares
    memoized per attribute text (a pure function of it).

    The same loop as w3lib's over the same scan: the first ``<body``, or the first
    ``<meta>`` declaring a label, decides; a comment or a ``<meta>`` that declares none
    is passed over; an XML declaration (rare in HTML) hands the body to w3lib's function.
    tests/http/test_response.py checks the two agree on a table.
    """
    if _BODY_SCAN_RE is None or _meta_charset_label is None:
        return html_body_declared_encoding(body)
    for match in _BODY_SCAN_RE.finditer(body[:4096].decode("latin-1")):
        attrs = match.group("meta")
        if attrs is None:
            if match.group("body") is not None:
                return None
            if match.group("xml") is not None:
                return html_body_declared_encoding(body)
            continue  # a comment
        try:
            label = _META_LABELS[attrs]
        except KeyError:
            label = _meta_charset_label(attrs) if "charset" in attrs.lower() else None
            if len(attrs) <= _META_LABEL_MAX_CHARS and len(_META_LABELS) < _ENCODING_MEMO_SIZE:
                _META_LABELS[attrs] = label
        if label is not None:
            return resolve_encoding(label)
    return None


def _decode(benc: str, body: bytes) -> tuple[str, str]:
    """``html_to_unicode(f"charset={benc}", body)``: ``(encoding used, text)``.

    What that call does for a body without a byte order mark, when ``benc`` is a label
    it reads from the header (always, for a name :attr:`TextResponse.encoding` gives but
    for an ``encoding`` argument that is no label), is ``to_unicode(body, enc)`` with
    ``enc`` a function of ``benc`` alone: that is memoized; every other body takes the
    call itself (tests/http/test_response.py checks the two agree on a table).
    """
    try:
        enc = _CHARSET_ENCODINGS[benc]
    except KeyError:
        enc = http_content_type_encoding(f"charset={benc}")
        if enc in ("utf-16", "utf-32"):
            enc += "-be"
        if len(_CHARSET_ENCODINGS) < _ENCODING_MEMO_SIZE:
            _CHARSET_ENCODINGS[benc] = enc
    if enc is None or (body and body[0] in _BOM_FIRST_BYTES and read_bom(body)[0]):
        return html_to_unicode(f"charset={benc}", body)
    return enc, to_unicode(body, enc)


def _is_body_as_utf8(body: bytes, benc: str, ubody: str) -> bool:
    """Whether ``ubody`` (``html_to_unicode``'s text of ``body``, decoded as ``benc``)
    encodes back to ``body`` exactly: the UTF-8 codec, no BOM (w3lib strips one) and no
    U+FFFD (what an invalid byte becomes; a body spelling one takes the slow path)."""
    utf8 = _UTF8_LABELS.get(benc)
    if utf8 is None:
        try:
            utf8 = codecs.lookup(benc).name == "utf-8"
        except LookupError:
            utf8 = False
        if len(_UTF8_LABELS) < 64:
            _UTF8_LABELS[benc] = utf8
    return utf8 and read_bom(body)[0] is None and "\ufffd" not in ubody


def _url_from_selector(sel, root) -> str:
    if isinstance(root, str):  # an attribute or text node value
        return strip_html5_whitespace(root)
    tag = getattr(root, "tag", None)
    if not isinstance(tag, str):
        raise ValueError(f"Unsupported selector: {sel!r}")
    if tag not in ("a", "link"):
        raise ValueError(f"Only <a> and <link> elements are supported; got <{tag}>")
    href = root.get("href")
    if href is None:
        raise ValueError(f"<{tag}> element has no href attribute: {sel!r}")
    return strip_html5_whitespace(href)
