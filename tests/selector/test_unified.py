"""Selector and SelectorList (crawlfw.selector.unified): construction, XPath and CSS
rules from the Scrapy 1.2 "Selectors" page, regex extraction, namespaces, bad input."""

import pickle
import re
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from lxml import etree

from crawlfw.http import HtmlResponse, Response, TextResponse, XmlResponse
from crawlfw.selector import Selector, SelectorList

# The example document of the Scrapy 1.2 "Selectors" page.
DOC = """<html>
 <head>
  <base href='http://example.com/' />
  <title>Example website</title>
 </head>
 <body>
  <div id='images'>
   <a href='image1.html'>Name: My image 1 <br /><img src='image1_thumb.jpg' /></a>
   <a href='image2.html'>Name: My image 2 <br /><img src='image2_thumb.jpg' /></a>
   <a href='image3.html'>Name: My image 3 <br /><img src='image3_thumb.jpg' /></a>
   <a href='image4.html'>Name: My image 4 <br /><img src='image4_thumb.jpg' /></a>
   <a href='image5.html'>Name: My image 5 <br /><img src='image5_thumb.jpg' /></a>
  </div>
 </body>
</html>"""

LISTS = """<ul class="list">
    <li>1</li>
    <li>2</li>
    <li>3</li>
</ul>
<ul class="list">
    <li>4</li>
    <li>5</li>
    <li>6</li>
</ul>"""


@pytest.fixture(scope="module")
def sel():
    return Selector(text=DOC)


# -- construction and type inference ------------------------------------------------


@pytest.mark.parametrize(
    "make, expected_type",
    [
        (lambda: Selector(text="<p>x</p>"), "html"),
        (lambda: Selector(text="<p>x</p>", type="xml"), "xml"),
        (lambda: Selector(text="<p>x</p>", type="html"), "html"),
        (lambda: Selector(response=HtmlResponse("http://e.com/", body=b"<p>x</p>")), "html"),
        (lambda: Selector(response=XmlResponse("http://e.com/", body=b"<p>x</p>")), "xml"),
        (lambda: Selector(response=TextResponse("http://e.com/", body=b"<p>x</p>")), "html"),
        (lambda: Selector(response=XmlResponse("http://e.com/", body=b"<p>x</p>"), type="html"), "html"),
        (lambda: Selector(response=HtmlResponse("http://e.com/", body=b"<p>x</p>"), type="xml"), "xml"),
    ],
)
def test_type_inference(make, expected_type):
    s = make()
    assert s.type == expected_type
    assert s.xpath("//p/text()").getall() == ["x"]


def test_xml_type_is_case_sensitive_and_html_is_not():
    doc = "<Root><Item>a</Item></Root>"
    assert Selector(text=doc, type="xml").xpath("//Item/text()").getall() == ["a"]
    assert Selector(text=doc, type="xml").xpath("//item/text()").getall() == []
    # libxml2's HTML parser lower-cases tag names.
    assert Selector(text=doc).xpath("//item/text()").getall() == ["a"]


def test_response_attribute_and_base_url():
    response = HtmlResponse("http://example.com/a/b", body=b"<p>x</p>")
    s = Selector(response=response)
    assert s.response is response
    assert s.root.getroottree().docinfo.URL == "http://example.com/a/b"
    assert Selector(text="<p/>").response is None
    # Selector(response) positional, as Scrapy 1.2 spiders write it.
    assert Selector(response).xpath("//p/text()").get() == "x"


@pytest.mark.parametrize(
    "kwargs, exc, message",
    [
        ({"text": "<p/>", "response": HtmlResponse("http://e.com/", body=b"")}, ValueError,
         "received both response and text"),
        ({}, ValueError, "needs a response, text or root"),
        # 'json' and 'text' are types since Scrapy 2 (issue 17)
        ({"text": "<p/>", "type": "yaml"}, ValueError, "Invalid selector type: 'yaml'"),
        ({"text": 42}, TypeError, "text argument should be of type str, got int"),
        ({"response": Response("http://e.com/", body=b"\x00\x01")}, TypeError,
         "needs a TextResponse"),
    ],
)
def test_bad_constructor_arguments(kwargs, exc, message):
    with pytest.raises(exc, match=re.escape(message)):
        Selector(**kwargs)


def test_bytes_text_is_utf8():
    assert Selector(text="<p>caf\u00e9</p>".encode()).xpath("//p/text()").get() == "caf\u00e9"


def test_root_argument():
    root = etree.fromstring("<r><a>1</a></r>")
    s = Selector(root=root, type="xml")
    assert s.root is root
    assert s.xpath("//a/text()").getall() == ["1"]


def test_response_selector_is_built_once():
    response = HtmlResponse("http://e.com/", body=b"<p>x</p><p>y</p>")
    s = response.selector
    assert isinstance(s, Selector)
    assert response.selector is s
    assert response.xpath("//p")[0].root is s.xpath("//p")[0].root
    assert response.css("p::text").getall() == ["x", "y"]


# -- xpath() and css() ---------------------------------------------------------------


@pytest.mark.parametrize(
    "query, expected",
    [
        ("//title/text()", ["Example website"]),
        ("//base/@href", ["http://example.com/"]),
        ("//a[contains(@href, 'image')]/@href",
         ["image1.html", "image2.html", "image3.html", "image4.html", "image5.html"]),
        ("//a[contains(@href, 'image')]/img/@src",
         ["image1_thumb.jpg", "image2_thumb.jpg", "image3_thumb.jpg", "image4_thumb.jpg",
          "image5_thumb.jpg"]),
        ("count(//a)", ["5.0"]),
        ("boolean(//a)", ["1"]),
        ("boolean(//table)", ["0"]),
        ("string(//title)", ["Example website"]),
        ("//table", []),
    ],
)
def test_xpath_docs_examples(sel, query, expected):
    assert sel.xpath(query).extract() == expected


@pytest.mark.parametrize(
    "query, expected",
    [
        ("title::text", ["Example website"]),
        ("base::attr(href)", ["http://example.com/"]),
        ("base::attr('href')", ["http://example.com/"]),
        ("a[href*=image]::attr(href)",
         ["image1.html", "image2.html", "image3.html", "image4.html", "image5.html"]),
        ("a[href*=image] img::attr(src)",
         ["image1_thumb.jpg", "image2_thumb.jpg", "image3_thumb.jpg", "image4_thumb.jpg",
          "image5_thumb.jpg"]),
        ("#images > a:first-child::text", ["Name: My image 1 "]),
        ("div#images a:nth-child(2) ::text", ["Name: My image 2 "]),
        ("TITLE::text", ["Example website"]),
        ("table", []),
    ],
)
def test_css_docs_examples(sel, query, expected):
    assert sel.css(query).extract() == expected


def test_xpath_variables(sel):
    assert sel.xpath("//div[@id=$val]/a/@href", val="images").extract_first() == "image1.html"
    assert sel.xpath("count(//a[contains(@href, $part)])", part="image3").get() == "1.0"


def test_extra_namespaces_for_one_query():
    s = Selector(text='<r xmlns:x="urn:x"><x:a>1</x:a></r>', type="xml")
    assert s.xpath("//y:a/text()", namespaces={"y": "urn:x"}).getall() == ["1"]
    assert "y" not in s.namespaces
    with pytest.raises(ValueError, match="Undefined namespace prefix"):
        s.xpath("//y:a")


def test_chained_and_nested_selectors(sel):
    links = sel.xpath('//a[contains(@href, "image")]')
    assert isinstance(links, SelectorList)
    assert [link.xpath("@href").get() for link in links][:2] == ["image1.html", "image2.html"]
    assert sel.css("img").xpath("@src").extract()[-1] == "image5_thumb.jpg"
    assert sel.xpath("//div").css("a::attr(href)").get() == "image1.html"


def test_nested_absolute_vs_relative_paths():
    s = Selector(text="<p>out</p><div><p>in1</p><p>in2</p></div>")
    divs = s.xpath("//div")
    assert divs.xpath("//p/text()").getall() == ["out", "in1", "in2"]  # whole document
    assert divs.xpath(".//p/text()").getall() == ["in1", "in2"]
    assert divs.xpath("p/text()").getall() == ["in1", "in2"]


@pytest.mark.parametrize(
    "query, expected",
    [
        ("//li[1]/text()", ["1", "4"]),
        ("(//li)[1]/text()", ["1"]),
        ("//ul/li[1]/text()", ["1", "4"]),
        ("(//ul/li)[1]/text()", ["1"]),
        ("//li[last()]/text()", ["3", "6"]),
        ("(//li)[last()]/text()", ["6"]),
    ],
)
def test_positional_predicates(query, expected):
    assert Selector(text=LISTS).xpath(query).getall() == expected


def test_string_functions_on_dot():
    s = Selector(text='<a href="#">Click here to go to the <strong>Next Page</strong></a>')
    assert s.xpath("//a//text()").getall() == ["Click here to go to the ", "Next Page"]
    assert s.xpath("string(//a[1]//text())").get() == "Click here to go to the "
    assert s.xpath("string(//a[1])").get() == "Click here to go to the Next Page"
    assert s.xpath("//a[contains(.//text(), 'Next Page')]").getall() == []
    assert len(s.xpath("//a[contains(., 'Next Page')]")) == 1


@pytest.mark.parametrize(
    "query, expected",
    [
        ('//li[re:test(@class, "item-\\d$")]//@href', ["link1.html", "link2.html", "link4.html", "link5.html"]),
        ('re:match(//li[1]/a/@href, "link(\\d)")/text()', ["link1", "1"]),
        ('re:replace(//li[1]/a/@href, "\\d", "g", "N")', ["linkN.html"]),
        ('//li[not(re:test(@class, "^item-\\d$"))]/a/text()', ["third item"]),
    ],
)
def test_exslt_regular_expressions(query, expected):
    doc = """<ul>
        <li class="item-0"><a href="link1.html">first item</a></li>
        <li class="item-1"><a href="link2.html">second item</a></li>
        <li class="item-inactive"><a href="link3.html">third item</a></li>
        <li class="item-1"><a href="link4.html">fourth item</a></li>
        <li class="item-0"><a href="link5.html">fifth item</a></li>
    </ul>"""
    assert Selector(text=doc).xpath(query).getall() == expected


def test_exslt_sets():
    doc = """<div itemscope itemtype="http://schema.org/Product">
      <span itemprop="name">Kenmore White 17" Microwave</span>
      <div itemprop="aggregateRating" itemscope itemtype="http://schema.org/AggregateRating">
        Rated <span itemprop="ratingValue">3.5</span>/5
      </div>
      <span itemprop="description">0.7 cubic feet</span>
    </div>"""
    s = Selector(text=doc)
    scope = s.xpath("//div[@itemscope]")[0]
    props = scope.xpath(
        "set:difference(./descendant::*/@itemprop, .//*[@itemscope]/*/@itemprop)"
    ).getall()
    assert props == ["name", "aggregateRating", "description"]
    assert s.xpath("count(set:distinct(//span/@itemprop))").get() == "3.0"
    assert s.xpath("set:has-same-node(//span[1], //span[@itemprop='name'])").get() == "1"


# -- results ---------------------------------------------------------------------------


def test_extract_kinds():
    s = Selector(text='<div class="c"><p>a<b>b</b></p>tail</div>')
    p = s.xpath("//p")[0]
    assert p.extract() == "<p>a<b>b</b></p>"  # without the tail
    assert p.get() == p.extract()
    assert p.getall() == ["<p>a<b>b</b></p>"]
    assert s.xpath("//div/@class")[0].extract() == "c"
    assert type(s.xpath("//p/text()")[0].root) is str  # lxml smart strings are off
    assert Selector(text="<p>x</p>", type="xml").xpath("/p")[0].extract() == "<p>x</p>"


def test_attrib():
    s = Selector(text='<a href="/x" class="y">t</a><b>z</b>')
    assert s.xpath("//a")[0].attrib == {"href": "/x", "class": "y"}
    assert s.xpath("//a").attrib == {"href": "/x", "class": "y"}
    assert s.css("b").attrib == {}
    assert s.xpath("//table").attrib == {}
    assert s.xpath("//a/@href")[0].attrib == {}


@pytest.mark.parametrize(
    "query, default, expected",
    [
        ("//p/text()", None, "1"),
        ("//table/text()", None, None),
        ("//table/text()", "none", "none"),
        ("//p/@missing", "", ""),
    ],
)
def test_extract_first_and_get(query, default, expected):
    s = Selector(text="<p>1</p><p>2</p>")
    assert s.xpath(query).extract_first(default=default) == expected
    assert s.xpath(query).get(default=default) == expected


def test_selectorlist_is_a_list():
    s = Selector(text=LISTS)
    items = s.css("li")
    assert isinstance(items, list)
    assert isinstance(items[1:3], SelectorList)
    assert [x.get() for x in items[1:3]] == ["<li>2</li>", "<li>3</li>"]
    assert isinstance(items[0], Selector)
    assert items.css("::text").getall() == ["1", "2", "3", "4", "5", "6"]
    assert items.xpath("text()").extract() == ["1", "2", "3", "4", "5", "6"]
    assert items.getall() == items.extract()


def test_truthiness():
    s = Selector(text='<p class="">x</p><i></i>')
    assert s.xpath("//p")[0]
    assert not s.xpath("//p/@class")[0]
    assert s.xpath("//p/text()")[0]
    assert s.xpath("boolean(//table)")[0]  # the string '0' is not empty
    assert bool(s.xpath("//table")) is False
    assert bool(s.xpath("//i")) is True


def test_text_results_have_no_children():
    s = Selector(text="<p>x</p>")
    text = s.xpath("//p/text()")[0]
    assert text.xpath("*") == []
    assert text.css("b") == []


def test_repr():
    s = Selector(text="<p>" + "x" * 100 + "</p>")
    assert repr(s.xpath("//p")[0]) == (
        "<Selector xpath='//p' data='<p>" + "x" * 37 + "'>"
    )
    assert str(s.css("p::text")[0]).startswith("<Selector xpath='descendant-or-self::p/text()'")


def test_selectors_cannot_be_pickled():
    s = Selector(text="<p>x</p>")
    with pytest.raises(TypeError, match="can't pickle Selector"):
        pickle.dumps(s)
    with pytest.raises(TypeError, match="can't pickle SelectorList"):
        pickle.dumps(s.xpath("//p"))


# -- regular expressions -----------------------------------------------------------------


@pytest.mark.parametrize(
    "regex, expected",
    [
        (r"Name:\s*(.*)", ["My image 1 ", "My image 2 ", "My image 3 ", "My image 4 ", "My image 5 "]),
        (re.compile(r"image (\d)"), ["1", "2", "3", "4", "5"]),
        (r"image \d", ["image 1", "image 2", "image 3", "image 4", "image 5"]),
        (r"(image) (\d)", ["image", "1", "image", "2", "image", "3", "image", "4", "image", "5"]),
        (r"image (?P<extract>\d)", ["1", "2", "3", "4", "5"]),
        (r"nothing", []),
    ],
)
def test_selectorlist_re(sel, regex, expected):
    assert sel.xpath('//a[contains(@href, "image")]/text()').re(regex) == expected


def test_named_group_extract_takes_the_first_match_of_each_selector():
    s = Selector(text="<p>a1 a2</p><p>b3</p>")
    assert s.xpath("//p/text()").re(r"[ab](?P<extract>\d)") == ["1", "3"]
    assert s.xpath("//p/text()")[0].re(r"[ab](?P<extract>\d)") == ["1"]
    assert s.xpath("//p/text()")[0].re(r"z(?P<extract>\d)?") == []


def test_re_first(sel):
    links = sel.xpath('//a[contains(@href, "image")]/text()')
    assert links.re_first(r"Name:\s*(.*)") == "My image 1 "
    assert links.re_first(r"nothing") is None
    assert links.re_first(r"nothing", default="x") == "x"
    assert links[1].re_first(r"\d") == "2"
    assert links[1].re_first(r"z", default="d") == "d"


@pytest.mark.parametrize(
    "replace_entities, expected",
    [(True, ["a \u00a0\u00e9 &lt; &amp; \u2603"]), (False, ["a &nbsp;&eacute; &lt; &amp; &#9731;"])],
)
def test_re_replaces_entities_except_lt_and_amp(replace_entities, expected):
    s = Selector(text="<script>a &nbsp;&eacute; &lt; &amp; &#9731;</script>")
    assert s.xpath("//script/text()").re(".+", replace_entities=replace_entities) == expected


def test_re_on_element_uses_its_markup():
    s = Selector(text='<p class="a">x</p>')
    assert s.xpath("//p").re(r'class="(\w)"') == ["a"]


# -- namespaces ------------------------------------------------------------------------

FEED = b"""<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:media="http://search.yahoo.com/mrss/">
  <link type="text/html" rel="alternate" href="http://example.com/"/>
  <entry><title>One</title><media:thumbnail url="http://e.com/1.jpg"/></entry>
  <entry><title>Two</title><media:thumbnail url="http://e.com/2.jpg"/></entry>
</feed>"""


def test_register_namespace():
    s = Selector(response=XmlResponse("http://example.com/feed", body=FEED))
    assert s.xpath("//link") == []
    s.register_namespace("atom", "http://www.w3.org/2005/Atom")
    s.register_namespace("m", "http://search.yahoo.com/mrss/")
    assert s.xpath("//atom:entry/atom:title/text()").getall() == ["One", "Two"]
    assert s.xpath("//m:thumbnail/@url").getall() == ["http://e.com/1.jpg", "http://e.com/2.jpg"]
    # Results inherit the namespaces; registering on a result does not leak back.
    entry = s.xpath("//atom:entry")[0]
    assert entry.xpath("atom:title/text()").get() == "One"
    entry.register_namespace("t", "urn:t")
    assert "t" in entry.namespaces and "t" not in s.namespaces


def test_remove_namespaces():
    s = Selector(response=XmlResponse("http://example.com/feed", body=FEED))
    s.remove_namespaces()
    assert s.xpath("//link/@href").getall() == ["http://example.com/"]
    assert s.xpath("//entry/thumbnail/@url").getall() == ["http://e.com/1.jpg", "http://e.com/2.jpg"]
    attrs = Selector(text='<r xmlns:x="urn:x"><a x:id="1" b="2"/></r>', type="xml")
    attrs.remove_namespaces()
    assert attrs.xpath("//a")[0].attrib == {"id": "1", "b": "2"}


def test_default_namespaces_are_exslt():
    assert Selector(text="<p/>").namespaces == {
        "re": "http://exslt.org/regular-expressions",
        "set": "http://exslt.org/sets",
    }
    s = Selector(text="<p/>", namespaces={"x": "urn:x"})
    assert s.namespaces["x"] == "urn:x" and "re" in s.namespaces


# -- bad input -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query, fragment",
    [
        ("//a[", "XPath error: Invalid expression in //a["),
        ("//a/@", "in //a/@"),
        ("//x:a", "Undefined namespace prefix in //x:a"),
        ("unknownfn(//a)", "in unknownfn(//a)"),
        ("//a[@href=$undefined]", "in //a[@href=$undefined]"),
    ],
)
def test_invalid_xpath_raises_value_error_naming_it(sel, query, fragment):
    with pytest.raises(ValueError) as excinfo:
        sel.xpath(query)
    assert fragment in str(excinfo.value)
    with pytest.raises(ValueError):
        sel.xpath("//div").xpath(query)


@pytest.mark.parametrize(
    "query, fragment",
    [
        ("a[[", "in 'a[['"),
        ("a::foo", "The pseudo-element ::foo is unknown in 'a::foo'"),
        ("a::foo(x)", "::foo() is unknown"),
        ("a::attr(1 2)", "Expected a single string or ident for ::attr()"),
        ("::text a", "in '::text a'"),
        ("", "in ''"),
    ],
)
def test_invalid_css_raises_value_error_naming_it(sel, query, fragment):
    with pytest.raises(ValueError) as excinfo:
        sel.css(query)
    assert fragment in str(excinfo.value)
    assert str(excinfo.value).startswith("CSS error: ")


@pytest.mark.parametrize(
    "text, query, expected",
    [
        ("<html><body><p>one<p>two</body>", "//p/text()", ["one", "two"]),
        ("<div><span>unclosed<b>bold</div>", "//b/text()", ["bold"]),
        ("<p>a</x></y><p>b", "//p/text()", ["a", "b"]),
        ("<table><tr><td>1<td>2</table>", "//td/text()", ["1", "2"]),
        ("<p attr=unquoted other='q'>x</p>", "//p/@attr", ["unquoted"]),
        ("no markup at all", "string(/html/body)", ["no markup at all"]),
        ("<p>nul\x00char</p>", "//p/text()", ["nulchar"]),
    ],
)
def test_malformed_html_still_parses(text, query, expected):
    assert Selector(text=text).xpath(query).getall() == expected


@pytest.mark.parametrize("text", ["", "   ", "\n\t", "<!-- only a comment -->"])
@pytest.mark.parametrize("st", ["html", "xml"])
def test_empty_document(text, st):
    s = Selector(text=text, type=st)
    assert s.xpath("//p") == []
    assert s.css("p::text").getall() == []
    assert isinstance(s.root, etree._Element)


def test_empty_response_body():
    s = Selector(response=HtmlResponse("http://e.com/", body=b""))
    assert s.xpath("//p") == [] and s.xpath("//html")


def test_malformed_xml_recovers():
    s = Selector(text="<r><a>1</a><b>2</r>", type="xml")
    assert s.xpath("//a/text()").getall() == ["1"]


def test_xml_external_entities_are_not_resolved(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    doc = (
        f'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file://{secret}">]>'
        "<r>&x;</r>"
    )
    assert "TOP SECRET" not in Selector(text=doc, type="xml").xpath("string(/r)").get()


def test_deeply_nested_document():
    depth = 1000  # beyond libxml2's default limit of 256, within huge_tree's
    s = Selector(text="<div>" * depth + "deep" + "</div>" * depth + "<p>after</p>")
    assert s.xpath("count(//div)").get() == f"{depth}.0"
    assert s.xpath("string(/)").get() == "deepafter"
    assert s.extract().count("<div>") == depth  # serializing does not overflow either


def test_too_deeply_nested_document_is_truncated_not_fatal():
    # libxml2 stops nesting at 2048 levels even with huge_tree; recover mode keeps the
    # tree built so far instead of failing.
    s = Selector(text="<div>" * 5000 + "deep" + "</div>" * 5000)
    assert 2000 < float(s.xpath("count(//div)").get()) < 5000
    assert s.xpath("//div")


def test_huge_text_node():
    # libxml2 caps text nodes at 10,000,000 bytes unless huge_tree is set.
    big = "x" * 11_000_000
    s = Selector(text=f"<html><body><p>{big}</p><i>after</i></body></html>")
    assert len(s.xpath("//p/text()").get()) == len(big)
    assert s.xpath("//i/text()").get() == "after"


# -- encodings (decoded by TextResponse; the selector sees response.text) --------------


@pytest.mark.parametrize(
    "headers, body, expected",
    [
        ({"Content-Type": "text/html; charset=iso-8859-1"}, "<p>caf\u00e9</p>".encode("latin-1"), "caf\u00e9"),
        ({"Content-Type": "text/html; charset=utf-8"}, "<p>\u65e5\u672c</p>".encode(), "\u65e5\u672c"),
        ({}, b"\xef\xbb\xbf<p>caf\xc3\xa9</p>", "caf\u00e9"),
        ({"Content-Type": "text/html; charset=iso-8859-1"}, b"\xef\xbb\xbf<p>caf\xc3\xa9</p>", "caf\u00e9"),
        ({}, '<meta charset="koi8-r"><p>\u043c\u0438\u0440</p>'.encode("koi8-r"), "\u043c\u0438\u0440"),
        ({}, '<meta http-equiv="Content-Type" content="text/html; charset=shift_jis"><p>\u65e5\u672c</p>'.encode("shift_jis"), "\u65e5\u672c"),
        ({}, "<p>caf\u00e9</p>".encode(), "caf\u00e9"),
        ({}, "<p>caf\u00e9</p>".encode("cp1252"), "caf\u00e9"),
    ],
)
def test_response_encodings(headers, body, expected):
    response = HtmlResponse("http://e.com/", headers=headers, body=body)
    assert Selector(response=response).xpath("//p/text()").get() == expected


def test_meta_charset_in_text_is_ignored():
    # text is already decoded: a declaration inside it must not re-decode it.
    s = Selector(text='<meta charset="iso-8859-1"><p>\u65e5\u672c</p>')
    assert s.css("p::text").get() == "\u65e5\u672c"
    x = Selector(text='<?xml version="1.0" encoding="iso-8859-1"?><r>\u65e5</r>', type="xml")
    assert x.xpath("/r/text()").get() == "\u65e5"


# -- threads ---------------------------------------------------------------------------


def test_selectors_in_several_threads():
    docs = [f"<ul>{''.join(f'<li>{i}-{j}</li>' for j in range(50))}</ul>" for i in range(40)]
    barrier = threading.Barrier(4)

    def work(i):
        if i < 4:
            barrier.wait(timeout=10)
        s = Selector(text=docs[i])
        return s.css("li::text").getall(), s.xpath("count(//li)").get()

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(work, range(len(docs))))
    for i, (texts, count) in enumerate(results):
        assert texts == [f"{i}-{j}" for j in range(50)]
        assert count == "50.0"


# -- subclasses and deprecated classes -------------------------------------------------


def test_subclass_results_are_of_the_subclass():
    class MySelector(Selector):
        __slots__ = ()

    s = MySelector(text="<p><b>x</b></p>")
    assert type(s.xpath("//p")[0]) is MySelector
    assert type(s.css("p").css("b")[0]) is MySelector


def test_subclass_with_own_constructor_is_called_for_results():
    calls = []

    class Counting(Selector):
        __slots__ = ()

        def __init__(self, *args, **kwargs):
            calls.append(kwargs.get("_expr"))
            super().__init__(*args, **kwargs)

    s = Counting(text="<p>1</p><p>2</p>")
    assert s.xpath("//p/text()").getall() == ["1", "2"]
    assert calls == [None, "//p/text()", "//p/text()"]


def test_deprecated_xpath_selectors():
    from crawlfw.exceptions import ScrapyDeprecationWarning
    from crawlfw.selector import HtmlXPathSelector, XmlXPathSelector

    with pytest.warns(ScrapyDeprecationWarning, match="HtmlXPathSelector is deprecated"):
        hxs = HtmlXPathSelector(text="<p>x</p>")
    assert hxs.select("//p/text()").extract() == ["x"]
    with pytest.raises(RuntimeError, match=r"\.css\(\) method not available"):
        hxs.css("p")
    with pytest.warns(ScrapyDeprecationWarning):
        xxs = XmlXPathSelector(text="<R>x</R>")
    assert xxs.type == "xml"
    assert xxs.xpath("/R/text()").extract() == ["x"]


def test_css_on_xml_is_case_sensitive():
    s = Selector(text='<Root><Item a="1">x</Item><item a="2">y</item></Root>', type="xml")
    assert s.css("Item::attr(a)").getall() == ["1"]
    assert s.css("item::text").getall() == ["y"]


def test_compiled_xpath_cache_is_bounded():
    from crawlfw.selector import _lxml

    s = Selector(text="<p>1</p>")
    for i in range(_lxml.XPATH_CACHE_SIZE + 50):
        assert s.xpath(f"count(//p) + {i}").get() == f"{1 + i}.0"
    assert len(_lxml._local.xpaths) <= _lxml.XPATH_CACHE_SIZE
    # a query whose entry was evicted still works
    assert s.xpath("count(//p) + 0").get() == "1.0"


# --- the document bytes create_root_node parses: the shortcut gives the reference bytes -----

_SPACES = [chr(c) for c in range(0x3001) if chr(c).isspace()]  # ASCII, \x1c-\x1f, NEL, NBSP...


def _document_cases():
    inner = ["<html><p>x</p></html>", "caf\u00e9", "\u00e9", "<p>\x00</p>", "x", "", "\x00",
             "\u2003x\u2003", "\x1cx\x1f"]
    for body in inner:
        yield body
        for space in _SPACES:
            yield space + body
            yield body + space
            yield " \n" + space + body + space + "\t "
        yield "\x00 " + body + " \x00"
        yield "\n\ufeff" + body


def test_document_bytes_are_the_reference_bytes():
    from crawlfw.selector._lxml import _document_bytes

    cases = list(_document_cases())
    assert len(cases) > 500
    for text in cases:
        assert _document_bytes(text) == text.strip().replace("\x00", "").encode("utf8"), text
    with pytest.raises(UnicodeEncodeError):
        _document_bytes("<p>\ud800</p>")
