"""Selectors keep no state per document (issue 23, "flat memory over long runs").

A compiled XPath evaluator cached for the whole crawl, with a prefix bound to a libexslt
namespace (``set``, a default namespace of every Selector), kept ~100-140 bytes per
document in libxml2's heap: 13 MB per 10,000 pages at 10 CSS queries per page. Python's
tracemalloc does not see libxml2's allocations, so these tests read the C heap's bytes
in use from glibc's ``mallinfo2()``: deterministic for a single-threaded loop, unlike
RSS. The bounds are generous (a few times below what the leak produced).
"""

import ctypes
import gc

import pytest

from crawlfw.selector import Selector, _lxml

SETS = "http://exslt.org/sets"


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
        "uordblks", "fordblks", "keepcost")]


def _malloc_in_use():
    """Bytes the C heap has handed out and not taken back (glibc's mallinfo2)."""
    try:
        libc = ctypes.CDLL(None)
        mallinfo2 = libc.mallinfo2
    except (OSError, AttributeError):
        pytest.skip("needs glibc >= 2.33 (mallinfo2) to read the C heap in use")
    mallinfo2.restype = _MallInfo2
    gc.collect()
    return mallinfo2().uordblks


PAGE = "<html><head><title>t</title></head><body>{}</body></html>".format("".join(
    f'<p class="c{i}">text {i} <a href="/{i}">link</a></p>' for i in range(20)))

CSS = ["title::text", "a::attr(href)", "p.c1::text", "p a", "body > p:nth-child(2)",
       "p::text", "a[href]", "p.c3 a::attr(href)", "html", "*"]


def _crawl(pages, queries, method="css"):
    for _ in range(pages):
        sel = Selector(text=PAGE)  # a new document each time, as on every page of a crawl
        for q in queries:
            getattr(sel, method)(q)


def _growth(pages, queries, method="css"):
    _crawl(500, queries, method)  # warm-up: caches, parser, recycled evaluators
    before = _malloc_in_use()
    _crawl(pages, queries, method)
    return _malloc_in_use() - before


@pytest.mark.slow
def test_css_queries_keep_nothing_per_document():
    # Before the fix: ~420 bytes per page here (10 evaluators x ~42 bytes), 1.2 MB.
    growth = _growth(3000, CSS)
    assert growth < 250_000, f"C heap grew {growth} bytes over 3,000 documents"


@pytest.mark.slow
def test_queries_using_a_libexslt_prefix_keep_a_bounded_amount():
    # These evaluators need the set: functions, so they are recompiled every
    # EXSLT_RECYCLE_AFTER calls. Before the fix: ~1.3 MB over 3,000 documents.
    queries = [f"count(set:distinct(//p[{i}]//a/@href))" for i in range(1, 11)]
    growth = _growth(3000, queries, method="xpath")
    assert growth < 600_000, f"C heap grew {growth} bytes over 3,000 documents"


def test_unused_libexslt_bindings_are_left_out_of_the_compiled_query():
    nsp = {"re": "http://exslt.org/regular-expressions", "set": SETS,
           "m": "http://exslt.org/math", "x": "urn:x"}
    xp = _lxml.compiled_xpath("//p[re:test(@class, 'c1')]", nsp)
    assert not isinstance(xp, _lxml._RecycledXPath)
    assert isinstance(_lxml.compiled_xpath("set:distinct(//p)", nsp), _lxml._RecycledXPath)
    assert isinstance(_lxml.compiled_xpath("m:max(//p/@n)", nsp), _lxml._RecycledXPath)


def test_libexslt_functions_still_work_under_any_prefix():
    sel = Selector(text=PAGE)
    assert sel.xpath("count(set:distinct(//p/@class))").get() == "20.0"
    sel.register_namespace("s", SETS)
    assert sel.xpath("count(s:distinct(//a/@href))").get() == "20.0"
    assert sel.xpath("count(//p)", namespaces={"m": "http://exslt.org/math"}).get() == "20.0"
    assert sel.xpath("m:max(//p/@n | //p/@x)", namespaces={"m": "http://exslt.org/math"}).get() == "nan"
    # "set:" inside a string literal only: the query still evaluates correctly
    assert sel.xpath("//p[contains(., 'set:')]").getall() == []
    # re: (lxml's own EXSLT regular expressions) is untouched
    assert sel.xpath("//a[re:test(@href, '^/1[0-9]$')]/@href").getall() == [
        f"/{i}" for i in range(10, 20)]


def test_a_recycled_query_gives_the_same_results_across_recompiles():
    sel = Selector(text=PAGE)
    query = "set:difference(//a/@href, //p[position() > 3]/a/@href)"
    first = sel.xpath(query).getall()
    assert first == ["/0", "/1", "/2"]
    for _ in range(_lxml.EXSLT_RECYCLE_AFTER * 2 + 3):
        assert sel.xpath(query).getall() == first
    with pytest.raises(ValueError, match="set:nope"):
        sel.xpath("set:nope(//p)")


def test_a_queried_response_is_freed_without_the_cyclic_collector():
    # response.selector used to be a reference cycle (selector.response -> response ->
    # _cached_selector): every response and its lxml tree waited for gc, which under a
    # crawl's load kept ~30 MB more in use and fragmented the heap.
    import weakref

    from crawlfw.http import HtmlResponse

    response = HtmlResponse("http://example.com/", body=PAGE.encode(), encoding="utf-8")
    assert response.css("title::text").get() == "t"
    assert response.xpath("//a/@href").get() == "/0"
    assert response.selector.response is response
    assert response.selector is response.selector
    gone = weakref.ref(response)
    kept = response.selector
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        del response
        assert gone() is None, "the response lives on in a reference cycle"
    finally:
        if was_enabled:
            gc.enable()
    # a selector kept past its response still selects; only .response is gone
    assert kept.response is None
    assert kept.css("title::text").get() == "t"


def test_a_selector_built_from_a_response_keeps_it():
    from crawlfw.http import HtmlResponse

    sel = Selector(response=HtmlResponse("http://example.com/a", body=b"<p>x</p>"))
    gc.collect()
    assert sel.response.url == "http://example.com/a"
    sel.response = None
    assert sel.response is None
