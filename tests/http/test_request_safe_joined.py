"""``Request()`` takes a URL that ``TextResponse.urljoin``'s plain-path shortcut just
made without the made-safe check (``_url_fastpaths.SAFE_JOINED``, #20): on a table of
bases and references (the URL fast paths' tables, hostile and odd ones included, and
seeded random ones), whenever the shortcut fired its URL is what the general path
(``safe_url_string`` and the request's scheme checks, for any encoding) makes of it,
and the request made from it equals one made from an equal string through the general
path."""

import random

import pytest
from w3lib.url import safe_url_string

from crawlfw.http import HtmlResponse, Request
from crawlfw.http.request import _SAFE_URL_CACHE, _make_safe_url
from crawlfw.utils import _url_fastpaths
from tests.linkextractors.test_url_fastpaths import BASES, HREFS, TRICKY_URLS

_ENCODINGS = ("utf-8", "latin-1", "cp1252", "shift_jis")


def _copy(s: str) -> str:
    """An equal str that is another object (so Request takes the general path)."""
    return "".join(list(s)) if len(s) > 1 else s + ""


def _random_hrefs(n: int) -> list[str]:
    rnd = random.Random(2020)
    alphabet = list("aZ09/?#@:%;.~!$&()*+,=-_'\u00e9\t ") + ["..", "//", "%41", "%zz"]
    return ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 12))) for _ in range(n)]


def _check(base: str, hrefs: list[str]) -> int:
    response = HtmlResponse(base, body=b"<html><body></body></html>")
    fired = 0
    for href in hrefs:
        marker = _url_fastpaths.SAFE_JOINED[0] = object()
        try:
            joined = response.urljoin(href)
        except ValueError:
            continue
        if _url_fastpaths.SAFE_JOINED[0] is marker:
            continue  # the shortcut did not fire: nothing to prove here
        assert _url_fastpaths.SAFE_JOINED[0] is joined
        fired += 1
        for encoding in _ENCODINGS:
            assert safe_url_string(joined, encoding=encoding) == joined, (base, href)
            _SAFE_URL_CACHE.clear()
            assert _make_safe_url(_copy(joined), encoding) == joined, (base, href)
            fast = Request(joined, encoding=encoding)
            _SAFE_URL_CACHE.clear()
            general = Request(_copy(joined), encoding=encoding)
            assert fast.url == general.url == joined, (base, href, encoding)
            assert fast.url.__class__ is str
    return fired


@pytest.mark.parametrize("base", BASES + TRICKY_URLS)
def test_a_url_the_urljoin_shortcut_made_is_what_the_general_path_makes(base):
    _check(base, HREFS + TRICKY_URLS)


def test_the_shortcut_fires_on_plain_links_and_random_ones_agree():
    fired = _check("http://e.com/a/b.html", ["/x", "x", "a/b/c.html", "%7Euser/x", "/A/B.HTML"])
    assert fired == 5
    fired = 0
    for base in BASES:
        fired += _check(base, _random_hrefs(300))
    assert fired > 200


def test_the_slot_never_makes_a_bad_url_pass():
    # the slot holds an object no caller has, or the shortcut's last str
    _url_fastpaths.SAFE_JOINED[0] = object()
    with pytest.raises(TypeError):
        Request(None)
    with pytest.raises(ValueError, match="Missing scheme"):
        Request("")
    response = HtmlResponse("http://e.com/d/", body=b"")
    joined = response.urljoin("x y")  # not the shortcut: a space is escaped
    assert joined is not _url_fastpaths.SAFE_JOINED[0]
    assert Request(joined).url == "http://e.com/d/x%20y"
    plain = response.urljoin("p/1.html")
    assert plain is _url_fastpaths.SAFE_JOINED[0]
    assert Request(plain).url == "http://e.com/d/p/1.html"


def test_the_plain_path_memo_gives_the_regex_verdict():
    # TextResponse.urljoin remembers _PLAIN_PATH's verdict per href: asked twice (the
    # second time from the memo), every href of the tables and of the seeded random
    # ones gets the regex's answer, and the joined URL is the reference urljoin's
    from urllib.parse import urljoin

    from crawlfw.http.response import text as text_module
    from crawlfw.utils._url_fastpaths import _PLAIN_PATH

    text_module._PLAIN_PATH_MEMO.clear()
    hrefs = HREFS + TRICKY_URLS + _random_hrefs(2000) + ["a" * 201, "/" + "b" * 300]
    response = HtmlResponse("http://e.com/d/p.html", body=b"")
    for _ in range(2):
        for href in hrefs:
            expected = bool(href) and _PLAIN_PATH.match(href) is not None
            try:
                joined = response.urljoin(href)
            except ValueError:
                joined = ValueError
            if len(href) <= text_module._PLAIN_PATH_MEMO_KEY_MAX:
                assert text_module._PLAIN_PATH_MEMO[href] is expected, href
            else:
                assert href not in text_module._PLAIN_PATH_MEMO  # long ones not kept
            if joined is not ValueError:
                assert joined == urljoin("http://e.com/d/p.html", href), href
    assert any(text_module._PLAIN_PATH_MEMO.values())
    assert not all(text_module._PLAIN_PATH_MEMO.values())
    # bounded: emptied when full
    for i in range(text_module._PLAIN_PATH_MEMO_SIZE + 10):
        response.urljoin(f"x{i}.html")
    assert len(text_module._PLAIN_PATH_MEMO) <= text_module._PLAIN_PATH_MEMO_SIZE
    # not a str: the general path, as before (urllib's urljoin gives the base for None)
    assert response.urljoin(None) == urljoin("http://e.com/d/p.html", None)
