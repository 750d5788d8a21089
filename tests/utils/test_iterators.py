"""xmliter / xmliter_lxml on the real peps.python.org RSS feed and the aegisub.org RSS
feeds and sitemaps; csviter on the real population.csv and country-codes.csv.

Expected values come from an independent reading: lxml.etree on the whole file for XML,
line counts and Python's csv module on the file for CSV.
"""

import csv
import io
import logging
from pathlib import Path

import lxml.etree
import pytest

from crawlfw.http import Response, TextResponse, XmlResponse
from crawlfw.utils.iterators import csviter, xmliter, xmliter_lxml

SITEMAPS_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
ATOM_NS = "http://www.w3.org/2005/Atom"

ITERATORS = [
    pytest.param(xmliter, id="xmliter"),
    pytest.param(xmliter_lxml, id="xmliter_lxml"),
]


@pytest.fixture(scope="module")
def peps_rss(sites_dir) -> bytes:
    return (sites_dir / "peps.python.org" / "peps.rss").read_bytes()


@pytest.fixture(scope="module")
def aegisub_dir(sites_dir) -> Path:
    return sites_dir / "aegisub.org"


@pytest.fixture(scope="module")
def csv_dir(sites_dir) -> Path:
    return sites_dir / "raw.githubusercontent.com" / "datasets"


def _lxml_items(body: bytes):
    root = lxml.etree.fromstring(body)
    return [
        (item.findtext("title"), item.findtext("link"), item.findtext("guid"))
        for item in root.iter("item")
    ]


def _node_fields(node):
    return (
        node.xpath("title/text()").extract_first(),
        node.xpath("link/text()").extract_first(),
        node.xpath("guid/text()").extract_first(),
    )


# --- XML -------------------------------------------------------------------------------


@pytest.mark.parametrize("iterator", ITERATORS)
@pytest.mark.parametrize("wrap", ["response", "bytes", "str"])
def test_peps_rss_items(iterator, wrap, peps_rss):
    obj = {
        "response": XmlResponse("https://peps.python.org/peps.rss", body=peps_rss),
        "bytes": peps_rss,
        "str": peps_rss.decode("utf-8"),
    }[wrap]
    nodes = list(iterator(obj, "item"))
    expected = _lxml_items(peps_rss)
    assert len(expected) == 10
    assert [_node_fields(n) for n in nodes] == expected
    assert all(n.type == "xml" for n in nodes)
    assert nodes[0].xpath("title/text()").extract_first().startswith("PEP ")


def test_peps_rss_channel_namespace(peps_rss):
    # The <atom:link> of the channel: prefix declared on <rss>, registered on the node.
    (channel,) = list(xmliter(peps_rss, "channel"))
    channel.register_namespace("atom", ATOM_NS)
    assert channel.xpath("atom:link/@href").extract() == ["https://peps.python.org/peps.rss"]
    (channel,) = list(xmliter_lxml(peps_rss, "channel"))
    assert channel.xpath("a:link/@href", namespaces={"a": ATOM_NS}).extract() == [
        "https://peps.python.org/peps.rss"
    ]


def test_aegisub_rss_feeds(aegisub_dir):
    """All 25 Hugo RSS feeds (index.xml, with the atom namespace): same items both ways."""
    feeds = sorted(aegisub_dir.rglob("index.xml"))
    assert len(feeds) == 25
    total = 0
    for feed in feeds:
        body = feed.read_bytes()
        expected = _lxml_items(body)
        assert [_node_fields(n) for n in xmliter(body, "item")] == expected, feed
        assert [_node_fields(n) for n in xmliter_lxml(body, "item")] == expected, feed
        total += len(expected)
    assert total > 100


def test_xmliter_default_namespace_sitemap(aegisub_dir):
    """Sitemap <url> nodes are in a default namespace: found, and queried with a prefix."""
    body = (aegisub_dir / "en" / "sitemap.xml").read_bytes()
    nodes = list(xmliter(body, "url"))
    root = lxml.etree.fromstring(body)
    expected = [u.findtext(f"{{{SITEMAPS_NS}}}loc") for u in root]
    assert len(nodes) == len(expected) == 170
    assert [n.xpath("s:loc/text()", namespaces={"s": SITEMAPS_NS}).extract_first()
            for n in nodes] == expected
    nodes = list(xmliter_lxml(body, "url", namespace=SITEMAPS_NS, prefix="s"))
    assert [n.xpath("s:loc/text()").extract_first() for n in nodes] == expected
    # without the namespace, lxml's iterparse finds no <url> element
    assert list(xmliter_lxml(body, "url")) == []


@pytest.mark.parametrize("iterator", ITERATORS)
@pytest.mark.parametrize(
    "xml, nodename, expected",
    [
        ("<products><product id='1'>a</product><product id='2'>b</product></products>",
         "product", [("1", "a"), ("2", "b")]),
        ("<?xml version='1.0'?>\n<r>\n  <p id='1'>\n<x>é</x></p>\n<q/>\n<p id='2'></p></r>",
         "p", [("1", "\né"), ("2", None)]),
        ("<r><item id='1'>x</item><items id='no'>y</items><item id='2'>z</item></r>",
         "item", [("1", "x"), ("2", "z")]),
        ("<r></r>", "item", []),
    ],
)
def test_xml_cases(iterator, xml, nodename, expected):
    got = [(n.xpath("@id").extract_first(), n.xpath("string(.)").extract_first() or None)
           for n in iterator(xml, nodename)]
    assert got == expected


@pytest.mark.parametrize(
    "xml, nodename, expected",
    [
        # a prefix declared in the document, another namespace's <b:i> skipped
        ('<r xmlns:a="urn:a"><a:i>1</a:i><b:i xmlns:b="urn:b">x</b:i><a:i>2</a:i></r>',
         "a:i", ["1", "2"]),
        # the same local name without prefix is another element
        ('<r xmlns:a="urn:a"><i>0</i><a:i>1</a:i></r>', "a:i", ["1"]),
        ('<r xmlns:a="urn:a"><a:i>1</a:i><i>0</i></r>', "i", ["0"]),
        # an undeclared prefix (broken document): the node as written
        ("<r><a:i>1</a:i></r>", "a:i", ["1"]),
        # a default namespace
        ('<r xmlns="urn:d"><i>1</i><i>2</i></r>', "i", ["1", "2"]),
    ],
)
def test_xmliter_prefixes_and_namespaces(xml, nodename, expected):
    assert [n.xpath("string(.)").extract_first() for n in xmliter(xml, nodename)] == expected


def test_xmliter_encoding_from_response():
    body = "<?xml version='1.0' encoding='latin-1'?><r><i>café</i></r>".encode("latin-1")
    response = XmlResponse("http://a/f.xml", body=body)
    assert [n.xpath("text()").extract_first() for n in xmliter(response, "i")] == ["café"]
    assert [n.xpath("text()").extract_first() for n in xmliter_lxml(response, "i")] == ["café"]


def test_xmliter_tolerates_garbage_around_nodes():
    # the regex iterator does not need the whole document to be well-formed
    text = "<r><junk><i>1</i><i>2</i>"
    assert [n.xpath("text()").extract_first() for n in xmliter(text, "i")] == ["1", "2"]


def test_xmliter_lxml_does_not_load_external_entities(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    xml = (f'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file://{secret}">]>'
           "<r><i>&x;</i></r>")
    assert all("TOP-SECRET" not in n.extract() for n in xmliter_lxml(xml, "i"))


@pytest.mark.parametrize("iterator", [xmliter, xmliter_lxml, csviter])
@pytest.mark.parametrize("obj", [None, 42, ["<r/>"]])
def test_bad_input_type(iterator, obj):
    with pytest.raises(TypeError, match="obj must be Response, str or bytes"):
        list(iterator(obj, "i"))


def test_xmliter_plain_response_as_utf8():
    response = Response("http://a/f", body="<r><i>é</i></r>".encode())
    assert [n.xpath("text()").extract_first() for n in xmliter(response, "i")] == ["é"]


# --- CSV -------------------------------------------------------------------------------


def test_population_csv(csv_dir):
    path = csv_dir / "population" / "main" / "data" / "population.csv"
    body = path.read_bytes()
    response = TextResponse("http://a/population.csv", body=body, encoding="utf-8")
    rows = list(csviter(response))
    lines = body.decode("utf-8").splitlines()
    assert len(rows) == len(lines) - 1 == 17195
    assert rows[0] == {"Country Name": "Aruba", "Country Code": "ABW", "Year": "1960",
                       "Value": "54922"}
    # quoted names with commas stay one field
    quoted = [line for line in lines[1:] if line.startswith('"')]
    assert len(quoted) == sum(1 for r in rows if "," in r["Country Name"]) > 0
    assert rows[lines.index('"Bahamas, The",BHS,1960,116317') - 1]["Country Name"] == "Bahamas, The"
    assert sum(int(r["Year"]) for r in rows) == sum(int(line.rsplit(",", 2)[1]) for line in lines[1:])


def test_country_codes_csv_non_ascii(csv_dir):
    path = csv_dir / "country-codes" / "main" / "data" / "country-codes.csv"
    body = path.read_bytes()
    rows = list(csviter(body))
    expected = list(csv.DictReader(io.StringIO(body.decode("utf-8"), newline="")))
    assert len(rows) == 249
    assert rows == expected
    assert all(len(r) == 56 for r in rows)
    (france,) = [r for r in rows if r["ISO3166-1-Alpha-2"] == "FR"]
    assert france["official_name_ru"] == "Франция"
    assert france["official_name_cn"] == "法国"


@pytest.mark.parametrize("delimiter, quotechar", [("\t", None), (";", "'"), ("|", "'")])
def test_delimiter_and_quotechar(csv_dir, delimiter, quotechar):
    path = csv_dir / "country-codes" / "main" / "data" / "country-codes.csv"
    rows = list(csviter(path.read_bytes()))
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, quotechar=quotechar or '"',
                        quoting=csv.QUOTE_MINIMAL)
    writer.writerow(list(rows[0]))
    writer.writerows(list(r.values()) for r in rows)
    text = out.getvalue()
    response = TextResponse("http://a/c.csv", body=text.encode("utf-8"), encoding="utf-8")
    assert list(csviter(response, delimiter=delimiter, quotechar=quotechar)) == rows
    # read with the default delimiter, they are not the same rows
    assert list(csviter(response)) != rows


def test_headers_argument_makes_first_line_data(csv_dir):
    path = csv_dir / "population" / "main" / "data" / "population.csv"
    rows = list(csviter(path.read_bytes(), headers=["name", "code", "year", "value"]))
    assert len(rows) == 17196
    assert rows[0] == {"name": "Country Name", "code": "Country Code", "year": "Year",
                       "value": "Value"}
    assert rows[1]["name"] == "Aruba"


def test_truncated_population_warns_for_the_last_row(csv_dir, caplog):
    body = (csv_dir / "population" / "main" / "data" / "population.csv").read_bytes()
    last_line_start = body.rstrip(b"\n").rfind(b"\n") + 1
    truncated = body[: body.index(b",", body.index(b",", last_line_start) + 1)]  # 2 fields
    with caplog.at_level(logging.WARNING, logger="crawlfw.utils.iterators"):
        rows = list(csviter(truncated))
    assert len(rows) == 17194
    assert [r.getMessage() for r in caplog.records] == [
        "ignoring row 17196 (length: 2, should be: 4)"
    ]


@pytest.mark.parametrize(
    "text, kwargs, rows, warnings",
    [
        ("a,b\n1,2\n3\n4,5,6\n7,8\n", {},
         [{"a": "1", "b": "2"}, {"a": "7", "b": "8"}],
         ["ignoring row 3 (length: 1, should be: 2)", "ignoring row 4 (length: 3, should be: 2)"]),
        # line numbers count physical lines: a quoted field spans two
        ('a,b\n"x\ny",1\nshort\n', {},
         [{"a": "x\ny", "b": "1"}],
         ["ignoring row 4 (length: 1, should be: 2)"]),
        ("a,b\r\n1,2\r\n", {}, [{"a": "1", "b": "2"}], []),
        ("", {}, [], []),
        ("a,b\n", {}, [], []),
        ("1,2\n3,4\n", {"headers": ("x", "y")}, [{"x": "1", "y": "2"}, {"x": "3", "y": "4"}], []),
        ("a;b\n'1;2';3\n", {"delimiter": ";", "quotechar": "'"}, [{"a": "1;2", "b": "3"}], []),
        # a blank line is a row of length 0
        ("a\n1\n\n2\n", {}, [{"a": "1"}, {"a": "2"}], ["ignoring row 3 (length: 0, should be: 1)"]),
    ],
)
def test_csv_cases(text, kwargs, rows, warnings, caplog):
    with caplog.at_level(logging.WARNING, logger="crawlfw.utils.iterators"):
        assert list(csviter(text, **kwargs)) == rows
    assert [r.getMessage() for r in caplog.records] == warnings


@pytest.mark.parametrize(
    "obj, kwargs",
    [
        ("prix,ville\n5€,Orléans\n".encode("latin-1", "replace"), {"encoding": "latin-1"}),
        (TextResponse("http://a/", body="prix,ville\n5€,Orléans\n".encode("cp1252"),
                      encoding="cp1252"), {}),
        (Response("http://a/", body="prix,ville\n5€,Orléans\n".encode()), {}),
    ],
)
def test_csv_encodings(obj, kwargs):
    (row,) = list(csviter(obj, **kwargs))
    assert row["ville"] == "Orléans"


def test_csv_bad_delimiter():
    with pytest.raises(TypeError):
        list(csviter("a,b\n1,2\n", delimiter="::"))
