"""``SelectorList.extract`` takes a plain Selector's text or attribute result as it is
(``Selector.extract``'s first rule, inline, #20): on a table of selector lists (elements,
text and attribute results, XPath strings, numbers and booleans, XML, JSON and text
selectors, subclasses with and without their own ``extract``, mixed and empty lists,
``Selector.extract`` replaced) it gives what asking each member gives."""

import pytest

from crawlfw.http import HtmlResponse, TextResponse, XmlResponse
from crawlfw.selector import Selector, SelectorList, unified

_HTML = b"""<html><head><title>T &amp; t</title></head><body>
<a href="/a?x=1&amp;y=2">A <b>bold</b></a><a href="b.html" class="c">B</a>
<p>caf\xc3\xa9 <!-- c --> text</p><a>no href</a><script>{"k": [1, "s"]}</script>
</body></html>"""


class _Plain(Selector):
    pass


class _Shouting(Selector):
    def extract(self):
        value = super().extract()
        return value.upper() if isinstance(value, str) else value


def _lists():
    html = HtmlResponse("http://e.com/", body=_HTML, encoding="utf-8")
    xml = XmlResponse("http://e.com/x", body=b"<r><i a='1'>x</i><i>y</i></r>")
    json_resp = TextResponse("http://e.com/j", body=b'{"a": [1, "two", {"b": null}], "c": true}')
    sel = html.selector
    lists = [
        sel.css("a::attr(href)"), sel.css("title::text"), sel.css("a"), sel.css("p::text"),
        sel.css("a::text"), sel.xpath("//a/@class"), sel.xpath("string(//title)"),
        sel.xpath("count(//a)"), sel.xpath("boolean(//a)"), sel.xpath("boolean(//nope)"),
        sel.xpath("//comment()"), sel.css("nope"), sel.css("script::text"),
        sel.css("script::text").jmespath("k"), sel.css("script::text").jmespath("k[1]"),
        xml.selector.xpath("//i/@a"), xml.selector.xpath("//i"), xml.selector.xpath("//i/text()"),
        json_resp.selector.jmespath("a"), json_resp.selector.jmespath("c"),
        Selector(text="plain text", type="text").xpath("."),
        _Plain(text="<a href='x'>y</a>").css("a::attr(href)"),
        _Shouting(text="<a href='x'>y</a>").css("a::attr(href)"),
        _Shouting(text="<a href='x'>y</a>").css("a"),
        SelectorList(), SelectorList([Selector(root="s", type="html")]),
    ]
    mixed = SelectorList()
    for sl in lists:
        mixed.extend(sl)
    lists.append(mixed)
    lists.append(mixed[::2])
    return lists


def test_extract_gives_what_each_member_gives():
    lists = _lists()
    assert sum(len(sl) for sl in lists) > 40
    for sl in lists:
        assert sl.extract() == [x.extract() for x in sl], sl
        assert sl.getall() == [x.extract() for x in sl], sl
        assert sl.get() == (sl[0].extract() if sl else None)
    assert _lists()[22].extract() == ["X"]  # a subclass's own extract is asked


def test_a_replaced_selector_extract_is_asked(monkeypatch):
    lists = _lists()
    monkeypatch.setattr(Selector, "extract", lambda self: "replaced")
    assert unified.Selector.extract is not unified._selector_extract
    for sl in lists:
        assert sl.extract() == [x.extract() for x in sl]
    assert lists[0].extract() == ["replaced", "replaced"]


@pytest.mark.parametrize("root", ["", "x", "\u00e9", "<b>not markup</b>"])
def test_string_roots_are_returned_as_they_are(root):
    s = Selector(root=root, type="html")
    assert SelectorList([s]).extract() == [root] and SelectorList([s]).extract()[0] is root


def test_compiled_xpath_keys_the_default_namespaces_by_query_alone():
    # the default namespaces' shortcut key gives the evaluator an equal dict gets, and
    # namespaces that differ get their own
    from crawlfw.selector import _lxml

    query = "//a[re:test(@href, '^/')]/@href"
    default = unified._default_namespaces()
    xp = _lxml.compiled_xpath(query, default)
    assert _lxml.compiled_xpath(query, dict(default)) is xp
    assert _lxml.compiled_xpath(query, dict(reversed(list(default.items())))) is xp
    assert query in _lxml._local.xpaths
    other = dict(default, x="http://example.com/x")
    assert _lxml.compiled_xpath(query, other) is not xp
    changed = dict(default, re="http://example.com/not-exslt")
    assert _lxml.compiled_xpath(query, changed) is not xp
    sel = Selector(text="<a href='/a'>1</a><a href='b'>2</a>")
    assert sel.xpath(query).extract() == ["/a"]
    sel.register_namespace("re", "http://example.com/not-exslt")  # not the regex functions
    with pytest.raises(ValueError):
        sel.xpath(query)
