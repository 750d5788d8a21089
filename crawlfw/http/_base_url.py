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

__all__ = ["get_base_url"]

#: How much of a document's text (characters) is scanned for <base>/<meta refresh>, as
#: in Scrapy; a tag starting before the limit is read to its end.
SCAN_CHARS = 4096

# w3lib's own pre-test for a <base> tag (same pattern, same flags): w3lib declares a base
# only where it matches, so a page where it matches nowhere is answered without w3lib's
# scan.
_BASE_TAG = re.compile("<base", re.IGNORECASE)

_baseurl_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def get_base_url(response) -> str:
    """Return the base URL of a text response, computed once per response.

    The first ``<base href>`` in the first 4096 characters, resolved against the
    response URL (WHATWG HTML, "document base URL"), else the response URL.

    Args:
        response: a :class:`~crawlfw.http.TextResponse`.

    Returns:
        Absolute URL (str).
    """
    try:
        return _baseurl_cache[response]
    except KeyError:
        text = response.text
        if _BASE_TAG.search(text) is None:
            # no <base> anywhere: w3lib would return safe_url_string(url) (UTF-8)
            from crawlfw.utils._url_fastpaths import safe_url

            base = safe_url(response.url, None)
        else:
            base = html.get_base_url(text, response.url, response.encoding,
                                     max_scan=SCAN_CHARS)
        _baseurl_cache[response] = base
        return base
