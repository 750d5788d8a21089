"""A text response's base URL, computed once per response (the rule of WHATWG HTML,
"document base URL").

It lives in ``http/`` because :class:`~crawlfw.http.TextResponse` (``urljoin``,
``follow``) and :class:`~crawlfw.http.FormRequest` need it, while
:mod:`crawlfw.utils.response`, its public path (Scrapy's ``get_base_url``), builds on
``http/``: so the two import one way, with no circle (``tests/test_layers.py``).
"""

from __future__ import annotations

import re
import weakref

from w3lib import html

from crawlfw.utils._url_fastpaths import safe_url

__all__ = ["get_base_url", "scan_tags"]

#: How much of a document's text (characters) is scanned for <base>/<meta refresh>, as
#: in Scrapy; a tag starting before the limit is read to its end.
SCAN_CHARS = 4096

try:
    # w3lib >= 2.5's cut of a text to max_scan characters, extended to the end of a tag
    # the limit splits: what its get_base_url and get_meta_refresh scan.
    from w3lib.html import _cut as _w3lib_cut
except ImportError:  # pragma: no cover - another w3lib: the whole text is a superset
    _w3lib_cut = None

_baseurl_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


# Where a <meta> or <base> tag may start: "<" and four ASCII letters, a superset of both
# names in any ASCII case (no IGNORECASE: a character class is cheaper per character).
# w3lib declares a base only where its own pre-test for a <base> tag matches, so a page
# where "<base" occurs nowhere in what it scans is answered without w3lib.
_TAG_STARTS = re.compile("<[mMbB][eEaA][tTsS][aAeE]")


def scan_tags(response, text: str) -> tuple[int, tuple[int, ...], bool]:
    """What w3lib's ``get_base_url`` and ``get_meta_refresh`` (``max_scan=SCAN_CHARS``)
    would look at in a response's text, found in one pass and kept on the response
    (``_text_scan``) for both.

    Args:
        response: the :class:`~crawlfw.http.TextResponse` whose ``.text`` is ``text``.
        text: ``response.text``.

    Returns:
        ``(end, metas, has_base)``: ``text[:end]`` is what w3lib scans (the first
        SCAN_CHARS characters, a tag the limit splits read to its end; with a w3lib that
        does not say, the whole text, a superset); ``metas`` the offsets (ints, in order)
        of every ``<meta`` in ``text[:end]`` in any ASCII case; ``has_base`` whether
        ``<base`` occurs there in any ASCII case: w3lib's own pre-test
        (``re.compile("<base", re.IGNORECASE | re.ASCII)``), which must match before it
        declares a base. Both are ASCII-only matches, as w3lib's patterns (``re.ASCII``).
    """
    scan = getattr(response, "_text_scan", None)
    if scan is None:
        if len(text) <= SCAN_CHARS or _w3lib_cut is None:
            end = len(text)
        else:
            end = len(_w3lib_cut(text, SCAN_CHARS)[0])
        metas = []
        has_base = False
        for tag in _TAG_STARTS.finditer(text, 0, end):
            name = tag.group().lower()  # ASCII letters: ASCII case folding
            if name == "<meta":
                metas.append(tag.start())
            elif name == "<base":
                has_base = True
        scan = response._text_scan = (end, tuple(metas), has_base)
    return scan


def get_base_url(response) -> str:
    """Return the base URL of a text response, computed once per response.

    The first ``<base href>`` in the first 4096 characters, resolved against the
    response URL (WHATWG HTML, "document base URL"), else the response URL.

    Args:
        response: a :class:`~crawlfw.http.TextResponse`.

    Returns:
        Absolute URL (str).
    """
    base = _baseurl_cache.get(response)  # (no KeyError raised and caught per response)
    if base is None:
        text = response.text
        if not scan_tags(response, text)[2]:
            # no <base> where w3lib looks: it would return safe_url_string(url) (UTF-8)
            base = safe_url(response.url, None)
        else:
            base = html.get_base_url(text, response.url, response.encoding,
                                     max_scan=SCAN_CHARS)
        _baseurl_cache[response] = base
    return base
