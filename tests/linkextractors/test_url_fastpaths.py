"""The URL shortcuts of crawlfw.utils._url_fastpaths (link extractors, Request,
TextResponse.urljoin) give exactly the reference functions' results: urljoin, w3lib's
safe_url_string, urlparse + splitext."""

import posixpath
import random
import re
from urllib.parse import urljoin, urlparse

import pytest
from w3lib.html import get_base_url as w3lib_get_base_url
from w3lib.html import strip_html5_whitespace
from w3lib.url import canonicalize_url, safe_url_string

from crawlfw.utils._url_fastpaths import (
    absolute_url,
    canonical_url,
    join_prefixes,
    join_url,
    safe_url,
    url_extension,
    url_origin,
)


def _reference_absolute(base, href, encoding):
    try:
        return safe_url_string(urljoin(base, href), encoding=encoding)
    except ValueError:
        return ValueError


def _ours_absolute(base, href, encoding):
    try:
        return absolute_url(base, url_origin(base), href, encoding)
    except ValueError:
        return ValueError


def _outcome(fn, *args):
    try:
        return fn(*args)
    except (ValueError, TypeError) as e:
        return type(e), str(e)


def _ours_join(base, href):
    return _outcome(lambda: join_url(base, join_prefixes(base), href))


def _reference_join(base, href):
    return _outcome(urljoin, base, href)


def _reference_extension(url):
    return posixpath.splitext(urlparse(url).path)[1].lower()


TRICKY_URLS = [
    "http://e.com", "http://e.com/", "http://e.com?x=1", "http://e.com#f", "http://e.com:/x",
    "http://E.com/x", "HTTP://e.com/x", "http://e.com/X?Y#Z", "http://e.com/p?", "http://e.com/p#",
    "http://e.com/p?#", "http://e.com/p#a#b", "http://u:p@e.com/", "http://e.com/a b",
    "http://e.com/caf\u00e9", "http://e.com/p?q=\u00e9", "http://e.com/p?q='", "http://[::1]/x",
    "http://e.com/a\\b", "http://e.com/%zz", "http://e.com/%41", "file:///tmp/A", "ftp://e.com/",
    "http://e.com/~x/!$&()*+,;=:", "http://e.com//x", "mailto:x@e.com", "javascript:f('x')",
    "http:///x", "http://e.com/p;", "http://e.com/p;a?b", "http://e.com/a.PDF;jsessionid=1",
    "http://e.com/a/b.tar.gz?x=.zip#.doc", "http://e.com?x/y.pdf", "http://e.com/.hidden",
    "http://e.com:080/", "http://e.com:0/", "http://e.com:65535/x", "http://e.com:65536/x",
    "http://e.com:+1/", "ftp://),:+/:$=", "http://e.com: 1/", "http://e.com:80",
]

BASES = [
    "http://e.com/", "http://e.com/a//b/c", "http://e.com/a/./b/c", "http://e.com/a/../c",
    "http://e.com/p/5.html", "http://e.com/a/b/?q#f", "http://e.com/a/b#f/g", "http://e.com", "https://e.com/a/b/c.html", "http://e.com:8080/a/b/",
    "http://e.com/a/b?q=1#f", "https://E.com/x", "http://e.com/a;p?q", "ftp://e.com/d/",
    "file:///tmp/x/y", "http://u@e.com/a/", "http://e.com/caf\u00e9/", "http://[::1]/a/",
    "http://127.0.0.1:8080/a/", "http://e.com:080/",
]

HREFS = [
    "x", "./x", "../x", "../../../../x", "/x", "//other.com/x", "?q", "#f", "", ".", "..",
    "/a/./b", "/a/../b", "/a//b", "a//b", "/x;p", "/x;", "/x?", "/x#", "/x?#", "/x.pdf",
    "http://other.com/x", "https://other.com", "HTTPS://Other.com/X", "http:///x", "http:x",
    "/caf\u00e9", "/a b", "/a%20b", "/%", "mailto:a@b.c", "javascript:void(0)", "data:,x",
    "http://e.com/p?q=\u00e9", "/\\evil", "/a/b/c.html?x=1&y=2#frag", "http://[bad",
    "http://e.com:99999/", "http://e.com:08/", "http://other:81/x", "579.html", "a:b",
    "a/b:c", "a?b:c", "a/", "a/.", "a/..", "a/./b", "a/../b", ".a", "a/.b", "x.html?q=1#f",
    "a#b?c", "a?b#c", "a\tb", " a", "a ", "\na", "//", "///x", "https://E.com/", "http://e.com",
    "http://e.com:8080", "http://e.com:0/", "http://e.com?q", "http://e.com#f", "http:/x",
    "https:x", "HTTP://e.com/",
    # plain paths (join_url's first test) and near misses
    "/A/B.HTML", "%7Euser/x", "/~u/(x)*,+=$&!-_", "a%2F..%2Fb", "x/", "-", "_/", "/a/b/",
    "\u00e9", "a\u0130", "/a.b/c.d", "a/b.", "a/b..", "/..a", "a/.", "A:B", "/a:b",
    "a'b", "/a@b", "/a;b", "a\x00", "/a\u2028", "\ufeffa", "a/b\n", "/p/7.html\t",
]


@pytest.mark.parametrize("url", TRICKY_URLS)
@pytest.mark.parametrize("encoding", ["utf-8", "latin-1"])
def test_safe_url(url, encoding):
    def outcome(fn):
        try:
            return fn(url, encoding=encoding)
        except ValueError:
            return ValueError

    assert outcome(safe_url) == outcome(safe_url_string)


@pytest.mark.parametrize("base", BASES)
def test_absolute_url_table(base):
    for href in HREFS:
        for encoding in ("utf-8", "cp1252"):
            assert _ours_absolute(base, href, encoding) == _reference_absolute(base, href, encoding), (base, href)


@pytest.mark.parametrize("base", BASES + TRICKY_URLS)
def test_join_url_table(base):
    for href in HREFS + TRICKY_URLS:
        assert _ours_join(base, href) == _reference_join(base, href), (base, href)


@pytest.mark.parametrize("base", BASES + TRICKY_URLS)
def test_text_response_urljoin_table(base):
    # TextResponse.urljoin takes join_url's plain-path test inline
    from crawlfw.http import HtmlResponse

    response = HtmlResponse(base, body=b"<html><body></body></html>")
    # the reference: Scrapy's urljoin(get_base_url(response), href), w3lib's function
    try:
        reference_base = w3lib_get_base_url(response.text, response.url, response.encoding)
    except ValueError:  # a base that cannot be parsed fails urljoin alike
        with pytest.raises(ValueError):
            response.urljoin("x")
        return
    for href in HREFS + TRICKY_URLS:
        assert (_outcome(response.urljoin, href)
                == _reference_join(reference_base, href)), (base, href)


def test_the_plain_path_test_is_a_subset_of_the_general_rules():
    # every href _PLAIN_PATH lets through is joined by prefix + href, as urljoin does
    from crawlfw.utils._url_fastpaths import _PLAIN_PATH

    rnd = random.Random(7)
    pieces = list("aZ09/.-_~!$&()*+,=%:;@'?#") + ["\u00e9", "//", "/.", "./"]
    hrefs = [*HREFS, *("".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 9)))
                       for _ in range(20000))]
    matched = 0
    for base in ("http://e.com/p/5.html", "http://127.0.0.1:8000/", "https://e.com:8443/a/b/"):
        origin, directory = join_prefixes(base)
        for href in hrefs:
            if href and _PLAIN_PATH.match(href):
                matched += 1
                joined = (origin if href[0] == "/" else directory) + href
                assert joined == urljoin(base, href), (base, href)
    assert matched > 3000


@pytest.mark.parametrize(
    "base, prefixes",
    [
        ("http://e.com/p/5.html", ("http://e.com", "http://e.com/p/")),
        ("http://e.com/", ("http://e.com", "http://e.com/")),
        ("http://e.com/a/b?q=/x/#/y", ("http://e.com", "http://e.com/a/")),
        ("http://e.com", ("http://e.com", None)),
        ("http://e.com/a//b", ("http://e.com", None)),
        ("http://e.com/a/./b", ("http://e.com", None)),
        ("ftp://e.com/a/", (None, None)),
    ],
)
def test_join_prefixes(base, prefixes):
    assert join_prefixes(base) == prefixes


def test_join_url_non_str_href():
    base = "http://e.com/a/"
    assert _ours_join(base, b"x") == _reference_join(base, b"x")
    assert _ours_join(base, b"x")[0] is TypeError


CANONICAL_URLS = [
    "http://e.com/p/1.html", "https://e.com", "http://e.com:8080", "http://e.com:8080/x#f",
    "http://e.com:65535/", "http://e.com:65536/", "http://e.com:099/", "http://e.com:0/",
    "http://e.com/./x", "http://e.com/a/../b", "http://e.com/a/..", "http://e.com/.x",
    "http://e.com/a.", "http://e.com//a", "http://e.com/a//b", "http://e.com/%41",
    "http://e.com/a;b", "http://e.com/a?b=1&a=2", "http://e.com/a#", "http://e.com/a#b#c",
    "http://e.com/a#b?c", "http://E.com/", "HTTP://e.com/", "http://-.e..com/", "http://e.com./",
    "http://xn--e.com/", "http://127.1/", "http://0x7f.0.0.1/", "http://[::1]/",
    "http://" + "a" * 64 + ".com/", "http://e.com/~a!$&'()*+,=:@", "http://e.com/a b",
    "http://e.com/\u00e9", "http://u@e.com/", "ftp://e.com/", "http://e.com/a\\b",
    "http://e.com/[x]", "http://e.com/a|b", "http://e.com/a\tb", " http://e.com/",
]


@pytest.mark.parametrize("url", CANONICAL_URLS + TRICKY_URLS + BASES)
def test_canonical_url(url):
    assert _outcome(canonical_url, url) == _outcome(canonicalize_url, url)


def test_canonical_url_bytes():
    assert canonical_url(b"http://e.com/a") == canonicalize_url(b"http://e.com/a")


@pytest.mark.parametrize("url", TRICKY_URLS + [b + h for b in BASES for h in ("x.PDF", "y.tar.gz", "")])
def test_url_extension(url):
    assert url_extension(url) == _reference_extension(url)


@pytest.mark.parametrize(
    "base, origin",
    [
        ("http://e.com/a/b", "http://e.com"),
        ("https://e.com:8443", "https://e.com:8443"),
        ("http://127.0.0.1:8080/x", "http://127.0.0.1:8080"),
        ("http://e.com:080/", None),
        ("http://e.com:99999/", None),
        ("http://e.com:/", None),
        ("http://E.com/", None),
        ("http://u@e.com/", None),
        ("ftp://e.com/", None),
        ("http://e.com?x", None),
        ("http:///x", None),
        ("http://e.com/caf\u00e9", None),
    ],
)
def test_url_origin(base, origin):
    assert url_origin(base) == origin


FUZZ_CASES = 20000
FUZZ_CHUNKS = 4  # run side by side by pytest-xdist workers


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(FUZZ_CHUNKS))
def test_fuzz(chunk):
    rnd = random.Random(20240601 + chunk)
    alphabet = list("aZ09/?#@:%;[]\\^`{|}\"'<>.. ~!$&()*+,=-_\u00e9\t") + [":80", ":08", ":99999"]
    heads = ["http://", "https://", "HTTP://", "ftp://", "file://", "", "", "/", "//", "../", "./"]
    checked = 0
    for _ in range(FUZZ_CASES // FUZZ_CHUNKS):
        href = (rnd.choice(heads)
                + "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 6)))
                + rnd.choice(["", "/", "/x", "?", "#", "/./", "/../"])
                + "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 8))))
        base = rnd.choice(BASES)
        assert _ours_join(base, href) == _reference_join(base, href), (base, href)
        for url in (href, base + href, "http://e.com/" + href, "http://e.com:80" + href):
            assert _outcome(canonical_url, url) == _outcome(canonicalize_url, url), url
        assert _ours_absolute(base, href, "utf-8") == _reference_absolute(base, href, "utf-8"), (base, href)
        url = _reference_absolute(base, href, "utf-8")
        if url is not ValueError:
            try:
                expected = _reference_extension(url)
            except ValueError:
                continue
            assert url_extension(url) == expected, url
        checked += 1
    assert checked == FUZZ_CASES // FUZZ_CHUNKS


# The one-alternation form of the "needs escaping" test that _urls._needs_escaping splits
# in two patterns; both must answer alike.
_NEEDS_ESCAPING = re.compile(r"[^\x21-\x7e]|[\"'<>\[\\\]^`{|}@;]|#.*#|[?#]$|\?#")


def test_needs_escaping_is_the_one_pattern():
    from crawlfw.utils._url_fastpaths import _needs_escaping

    rnd = random.Random(20)
    pieces = [chr(c) for c in range(0x80)] + ["\u00e9", "\u2028", "\ud800", "\U0001f600", "##",
                                              "?#", "#?", "http://e.com/", "/p/5.html"]
    urls = list(TRICKY_URLS) + list(HREFS) + list(BASES) + [chr(c) for c in range(0x300)]
    for _ in range(20000):
        urls.append("".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 12))))
    for url in urls:
        assert _needs_escaping(url) == (_NEEDS_ESCAPING.search(url) is not None), repr(url)


_ATTR = re.compile(rb"""\s(?:href|src)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+))""", re.I)
_ABSOLUTE_BASES = ["https://aegisub.org/docs/latest/page/",
                   "http://books.toscrape.com/catalogue/x/index.html"]
_JOIN_BASES = [*_ABSOLUTE_BASES, "http://127.0.0.1:8080/", "http://e.com/a/b?q#f"]


@pytest.fixture(scope="module")
def shared_hrefs(sites_dir):
    """Every distinct href/src value (HTML-whitespace stripped) of the site copies."""
    hrefs = set()
    for path in sites_dir.rglob("*.htm*"):
        for m in _ATTR.finditer(path.read_bytes()):
            value = next(g for g in m.groups() if g is not None)
            hrefs.add(strip_html5_whitespace(value.decode("utf-8", "replace")))
    assert len(hrefs) > 5000
    return sorted(hrefs)


# Each base a test of its own: pytest-xdist workers run them side by side.
@pytest.mark.slow
@pytest.mark.parametrize("base", _ABSOLUTE_BASES)
def test_every_link_of_the_shared_sites_made_absolute(shared_hrefs, base):
    for href in shared_hrefs:
        assert _ours_absolute(base, href, "utf-8") == _reference_absolute(base, href, "utf-8"), href


@pytest.mark.slow
@pytest.mark.parametrize("base", _JOIN_BASES)
def test_every_link_of_the_shared_sites_joined_and_canonicalized(shared_hrefs, base):
    for href in shared_hrefs:
        assert _ours_join(base, href) == _reference_join(base, href), (base, href)
        for url in (urljoin(base, href), _reference_absolute(base, href, "utf-8")):
            if url is not ValueError:
                assert _outcome(canonical_url, url) == _outcome(canonicalize_url, url), url


@pytest.mark.slow
def test_every_raw_link_of_the_shared_sites_joined(sites_dir):
    # the raw (unstripped) attribute values, joined with their page's URL (each distinct
    # value of a page once: a page repeats its menu links)
    for path in sites_dir.rglob("*.htm*"):
        base = "http://127.0.0.1:8080/" + path.relative_to(sites_dir).as_posix()
        values = {next(g for g in m.groups() if g is not None).decode("utf-8", "replace")
                  for m in _ATTR.finditer(path.read_bytes())}
        for value in values:
            assert _ours_join(base, value) == _reference_join(base, value), (base, value)


def test_canonical_url_of_plain_queries_is_w3libs():
    """A query of plain arguments (names and values of unreserved characters) is only
    sorted, by name then value, as canonicalize_url sorts it; the arguments it would
    change (blank names, "+", "%", ";", a second "=") go to canonicalize_url."""
    rnd = random.Random(30)
    pieces = ["a", "b", "A", "Z", "0", "9", "-", ".", "_", "~", "ab", "a-b", "a.b", "",
              "=", "&", "+", "%41", ";", "é", "/", "?", "'", "!"]
    heads = ["http://e.com", "http://e.com/", "https://e.com:8080/a/b.html",
             "http://h12.localhost:8000/item/7", "http://e.com/./x", "http://E.com/"]
    for _ in range(20000):
        args = ["".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 3)))
                + rnd.choice(["=", "=", ""])
                + "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 3)))
                for _ in range(rnd.randint(1, 4))]
        url = (rnd.choice(heads) + "?" + "&".join(args)
               + rnd.choice(["", "", "#f", "#", "#a?b"]))
        assert _outcome(canonical_url, url) == _outcome(canonicalize_url, url), url
    for url, canonical in [
            ("http://h1.localhost:8000/item/1?ref=list", "http://h1.localhost:8000/item/1?ref=list"),
            ("http://e.com/p?b=2&a=1&a-b=0&a=", "http://e.com/p?a=&a=1&a-b=0&b=2"),
            ("http://e.com?x=1#f", "http://e.com/?x=1")]:
        assert canonical_url(url) == canonical == canonicalize_url(url)
