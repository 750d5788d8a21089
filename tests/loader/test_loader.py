"""ItemLoader (crawlfw.loader): every attribute and method of the Scrapy 1.2 "Item
Loaders" page, processor rules 1-8, nested loaders and error messages."""

import re

import pytest

from crawlfw.http import HtmlResponse, Response
from crawlfw.item import Field, Item
from crawlfw.loader import ItemLoader
from crawlfw.loader.processors import Compose, Identity, Join, MapCompose, TakeFirst
from crawlfw.selector import Selector, SelectorList


class NameItem(Item):
    name = Field()


class SampleItem(NameItem):
    url = Field()
    summary = Field()


class SampleItemLoader(ItemLoader):
    default_item_class = SampleItem
    name_in = MapCompose(lambda v: v.title())


class DefaultedItemLoader(ItemLoader):
    default_item_class = SampleItem
    default_input_processor = MapCompose(lambda v: v[:-1])


def processor_with_args(value, other=None, loader_context=None):
    if "key" in loader_context:
        return loader_context["key"]
    return value


class ContextItemLoader(ItemLoader):
    default_item_class = SampleItem
    name_in = MapCompose(processor_with_args)


class FieldMetaItem(Item):
    both = Field(input_processor=MapCompose(str.upper), output_processor=Join("+"))
    meta_only = Field(input_processor=MapCompose(str.upper))
    plain = Field()


class FieldMetaLoader(ItemLoader):
    default_item_class = FieldMetaItem
    default_input_processor = MapCompose(lambda v: v + "!")
    default_output_processor = TakeFirst()
    both_in = MapCompose(str.lower)


HTML = """<html><body>
  <div id="id">marta</div>
  <p>paragraph</p>
  <a href="http://www.scrapy.org">homepage</a>
  <img src="/images/logo.png" width="244" height="65" alt="Scrapy">
  <ul><li><b>one</b></li><li><b>two</b></li></ul>
</body></html>"""


@pytest.fixture
def response():
    return HtmlResponse("http://www.example.com/", body=HTML.encode())


# -- defaults and construction ---------------------------------------------------------


def test_load_item_using_default_loader():
    item = SampleItem()
    item["summary"] = "lala"
    loader = ItemLoader(item=item)
    loader.add_value("name", "marta")
    loaded = loader.load_item()
    assert loaded is item
    assert loaded["summary"] == "lala"
    assert loaded["name"] == ["marta"]


def test_load_item_using_custom_loader():
    loader = SampleItemLoader()
    loader.add_value("name", "marta")
    item = loader.load_item()
    assert type(item) is SampleItem
    assert item["name"] == ["Marta"]


def test_default_item_class_is_item():
    loader = ItemLoader()
    assert type(loader.item) is Item
    assert ItemLoader.default_item_class is Item
    assert isinstance(ItemLoader.default_input_processor, Identity)
    assert isinstance(ItemLoader.default_output_processor, Identity)
    assert ItemLoader.default_selector_class is Selector


def test_dict_item():
    loader = ItemLoader(item={})
    loader.add_value("anything", "x")
    assert loader.load_item() == {"anything": ["x"]}


def test_context_contents(response):
    loader = ItemLoader(response=response, unit="cm")
    assert loader.context["unit"] == "cm"
    assert loader.context["item"] is loader.item
    assert loader.context["response"] is response
    assert loader.context["selector"] is loader.selector


def test_selector_from_response_is_the_responses_own(response):
    loader = ItemLoader(response=response)
    assert loader.selector is response.selector  # the page is parsed once


def test_custom_selector_class(response):
    class MySelector(Selector):
        __slots__ = ()

    class MyLoader(ItemLoader):
        default_selector_class = MySelector

    loader = MyLoader(response=response)
    assert type(loader.selector) is MySelector
    assert loader.get_xpath("//p/text()") == ["paragraph"]


def test_explicit_selector_wins(response):
    sel = Selector(text="<p>other</p>")
    loader = ItemLoader(selector=sel, response=response)
    assert loader.selector is sel
    assert loader.get_xpath("//p/text()") == ["other"]


def test_binary_response_gives_no_selector():
    loader = ItemLoader(response=Response("http://e.com/x.bin", body=b"\x00\x01"))
    assert loader.selector is None
    with pytest.raises(RuntimeError, match="must be instantiated with a selector or a response"):
        loader.add_xpath("name", "//p")


# -- values ----------------------------------------------------------------------------


def test_add_value():
    loader = SampleItemLoader()
    loader.add_value("name", "marta")
    assert loader.get_collected_values("name") == ["Marta"]
    assert loader.get_output_value("name") == ["Marta"]
    loader.add_value("name", "pepe")
    assert loader.get_collected_values("name") == ["Marta", "Pepe"]
    assert loader.get_output_value("name") == ["Marta", "Pepe"]
    # a list of values
    loader.add_value("name", ["jose", "luis"])
    assert loader.get_collected_values("name") == ["Marta", "Pepe", "Jose", "Luis"]
    # None is ignored
    loader.add_value("name", None)
    assert loader.get_collected_values("name") == ["Marta", "Pepe", "Jose", "Luis"]


@pytest.mark.parametrize(
    "value, expected",
    [
        (0, [0]),
        ("", [""]),  # a str is one value, even empty
        ([], []),
        ({"a": 1}, [{"a": 1}]),  # a dict is one value
        (("x", "y"), ["x", "y"]),
        (b"raw", [b"raw"]),
    ],
)
def test_add_value_wraps_non_iterables(value, expected):
    loader = ItemLoader(item={})
    loader.add_value("f", value)
    assert loader.get_collected_values("f") == expected


def test_add_value_without_field_name_takes_a_dict():
    loader = SampleItemLoader()
    loader.add_value(None, {"name": "marta", "url": "http://x"})
    assert loader.get_collected_values("name") == ["Marta"]
    assert loader.get_collected_values("url") == ["http://x"]
    loader.replace_value(None, {"name": "pepe"})
    assert loader.get_collected_values("name") == ["Pepe"]
    loader.add_value("", {"summary": "s"})
    assert loader.load_item() == {"name": ["Pepe"], "url": ["http://x"], "summary": ["s"]}


def test_replace_value():
    loader = SampleItemLoader()
    loader.replace_value("name", "marta")
    assert loader.get_collected_values("name") == ["Marta"]
    loader.replace_value("name", "pepe")
    assert loader.get_collected_values("name") == ["Pepe"]
    loader.replace_value("name", None)  # None changes nothing
    assert loader.get_collected_values("name") == ["Pepe"]


@pytest.mark.parametrize(
    "value, processors, kw, expected",
    [
        ("marta", (), {}, "marta"),
        ("marta", (str.upper,), {}, "MARTA"),
        (["marta", "other"], (TakeFirst(), str.upper), {}, "MARTA"),
        (["name:foo"], (TakeFirst(),), {"re": "name:(.*)$"}, "foo"),
        (["name:foo"], (TakeFirst(),), {"re": re.compile("name:(.*)$")}, "foo"),
        ("name:foo", (), {"re": "name:(.*)$"}, ["foo"]),
        (["name:foo", "x", "name:bar"], (), {"re": "name:(.*)$"}, ["foo", "bar"]),
        (["a1b2", "c3"], (), {"re": r"(\d)"}, ["1", "2", "3"]),
        (["price: 1 &amp; 2 &euro;"], (TakeFirst(),), {"re": r"price: (.*)"}, "1 &amp; 2 \u20ac"),
        (["x: 7"], (), {"re": r"(?P<extract>\d)"}, ["7"]),
        (None, (TakeFirst(),), {}, None),
    ],
)
def test_get_value(value, processors, kw, expected):
    assert ItemLoader().get_value(value, *processors, **kw) == expected


def test_add_value_with_re_and_processors():
    loader = SampleItemLoader()
    loader.add_value("name", ["name:marta", "name:pepe"], TakeFirst(), re="name:(.*)")
    assert loader.get_collected_values("name") == ["Marta"]
    loader.replace_value("url", "a: http://x", re=r"a: (\S+)")
    assert loader.get_collected_values("url") == ["http://x"]


def test_get_collected_values_of_unset_field_has_no_side_effect():
    loader = SampleItemLoader()
    assert loader.get_collected_values("name") == []
    assert loader.get_output_value("name") == []
    assert loader.load_item() == {}


def test_load_item_skips_none_output():
    class L(ItemLoader):
        default_item_class = SampleItem
        default_output_processor = TakeFirst()

    loader = L()
    loader.add_value("name", ["", None])  # collected, but TakeFirst finds nothing
    loader.add_value("url", "u")
    assert loader.load_item() == {"url": "u"}


def test_add_value_on_unknown_field():
    loader = SampleItemLoader()
    with pytest.raises(KeyError) as excinfo:
        loader.add_value("wrong_field", ["lala", "lolo"])
    assert excinfo.value.args == ("SampleItem does not support field: wrong_field",)
    with pytest.raises(KeyError, match="SampleItem does not support field: nope"):
        loader.add_value(None, {"name": "a", "nope": "b"})


def test_load_item_with_unknown_field_and_custom_processor():
    class L(SampleItemLoader):
        wrong_in = Identity()

    loader = L()
    loader.add_value("wrong", "x")
    with pytest.raises(KeyError, match="SampleItem does not support field: wrong"):
        loader.load_item()


# -- processors --------------------------------------------------------------------------


def test_input_processor_receives_an_iterable():
    seen = []

    class L(ItemLoader):
        default_item_class = SampleItem
        name_in = seen.append

    L().add_value("name", "single")
    L().add_value("name", ["a", "b"])
    assert seen == [["single"], ["a", "b"]]


def test_output_processor_runs_at_load_item_only():
    calls = []

    class L(ItemLoader):
        default_item_class = SampleItem

        def name_out(self, values):
            calls.append(list(values))
            return "-".join(values)

    loader = L()
    loader.add_value("name", "a")
    loader.add_value("name", "b")
    assert calls == []
    assert loader.load_item()["name"] == "a-b"
    assert calls == [["a", "b"]]


def test_map_compose_filter():
    def filter_world(x):
        return None if x == "world" else x

    proc = MapCompose(filter_world, str.upper)
    assert proc(["hello", "world", "this", "is", "scrapy"]) == ["HELLO", "THIS", "IS", "SCRAPY"]


def test_default_input_processor():
    loader = DefaultedItemLoader()
    loader.add_value("name", "marta")
    assert loader.get_output_value("name") == ["mart"]


def test_inherited_default_input_processor():
    class InheritDefaultedItemLoader(DefaultedItemLoader):
        pass

    loader = InheritDefaultedItemLoader()
    loader.add_value("name", "marta")
    assert loader.get_output_value("name") == ["mart"]


def test_input_processor_inheritance():
    class ChildItemLoader(SampleItemLoader):
        url_in = MapCompose(lambda v: v.lower())

    loader = ChildItemLoader()
    loader.add_value("url", "HTTP://scrapy.ORG")
    assert loader.get_output_value("url") == ["http://scrapy.org"]
    loader.add_value("name", "marta")
    assert loader.get_output_value("name") == ["Marta"]

    class ChildChildItemLoader(ChildItemLoader):
        url_in = MapCompose(lambda v: v.upper())
        summary_in = MapCompose(lambda v: v)

    loader = ChildChildItemLoader()
    loader.add_value("url", "http://scrapy.org")
    assert loader.get_output_value("url") == ["HTTP://SCRAPY.ORG"]
    loader.add_value("name", "marta")
    assert loader.get_output_value("name") == ["Marta"]


def test_empty_map_compose():
    class IdentityDefaultedItemLoader(DefaultedItemLoader):
        name_in = MapCompose()

    loader = IdentityDefaultedItemLoader()
    loader.add_value("name", "marta")
    assert loader.get_output_value("name") == ["marta"]


def test_identity_input_processor():
    class IdentityDefaultedItemLoader(DefaultedItemLoader):
        name_in = Identity()

    loader = IdentityDefaultedItemLoader()
    loader.add_value("name", "marta")
    assert loader.get_output_value("name") == ["marta"]


def test_extend_custom_input_processors():
    class ChildItemLoader(SampleItemLoader):
        name_in = MapCompose(SampleItemLoader.name_in, str.swapcase)

    loader = ChildItemLoader()
    loader.add_value("name", "marta")
    assert loader.get_output_value("name") == ["mARTA"]


def test_extend_default_input_processors():
    class ChildDefaultedItemLoader(DefaultedItemLoader):
        name_in = MapCompose(DefaultedItemLoader.default_input_processor, str.swapcase)

    loader = ChildDefaultedItemLoader()
    loader.add_value("name", "marta")
    assert loader.get_output_value("name") == ["MART"]


@pytest.mark.parametrize(
    "out, expected",
    [
        (TakeFirst(), "mar"),
        (Join(), "mar ta"),
        (Join("<br>"), "mar<br>ta"),
        (Compose(lambda v: v[0]), "mar"),
        (Compose(lambda v: v[0], lambda v: v.upper()), "MAR"),
        (Identity(), ["mar", "ta"]),
    ],
)
def test_output_processors(out, expected):
    class L(ItemLoader):
        default_item_class = SampleItem
        name_out = out

    loader = L()
    loader.add_value("name", ["mar", "ta"])
    assert loader.get_output_value("name") == expected
    assert loader.load_item() == {"name": expected}


def test_partial_processor():
    from functools import partial

    def join(values, sep=None, loader_context=None, ignored=None):
        if sep is not None:
            return sep.join(values)
        elif loader_context and "sep" in loader_context:
            return loader_context["sep"].join(values)
        return "".join(values)

    class L(ItemLoader):
        default_item_class = SampleItem
        name_out = Compose(partial(join, sep="+"))
        url_out = Compose(partial(join, loader_context={"sep": "."}))
        summary_out = Compose(partial(join, ignored="foo"))

    loader = L()
    loader.add_value("name", ["rabbit", "hole"])
    loader.add_value("url", ["rabbit", "hole"])
    loader.add_value("summary", ["rabbit", "hole"])
    item = loader.load_item()
    assert item["name"] == "rabbit+hole"
    assert item["url"] == "rabbit.hole"
    assert item["summary"] == "rabbithole"


# Rule 5: <field>_in/_out > Field metadata > loader defaults.
@pytest.mark.parametrize(
    "field, value, collected, output",
    [
        ("both", "MiX", ["mix"], "mix"),  # both_in (loader) over Field input_processor
        ("meta_only", "MiX", ["MIX"], "MIX"),  # Field input_processor over loader default
        ("plain", "MiX", ["MiX!"], "MiX!"),  # loader defaults
    ],
)
def test_processor_precedence(field, value, collected, output):
    loader = FieldMetaLoader()
    loader.add_value(field, [value, value])
    assert loader.get_collected_values(field) == collected * 2
    expected_out = "+".join(collected * 2) if field == "both" else collected[0]
    assert loader.get_output_value(field) == expected_out


def test_get_input_and_output_processor():
    loader = FieldMetaLoader()
    assert loader.get_input_processor("both") is FieldMetaLoader.both_in
    assert loader.get_input_processor("meta_only") is FieldMetaItem.fields["meta_only"]["input_processor"]
    assert loader.get_input_processor("plain") is FieldMetaLoader.default_input_processor
    assert loader.get_output_processor("both") is FieldMetaItem.fields["both"]["output_processor"]
    assert loader.get_output_processor("plain") is FieldMetaLoader.default_output_processor
    with pytest.raises(KeyError, match="FieldMetaItem does not support field: nope"):
        loader.get_input_processor("nope")
    assert ItemLoader(item={}).get_output_processor("anything") is ItemLoader.default_output_processor


# Rules 6-8: the loader context.
def test_loader_context_on_declaration():
    class L(ItemLoader):
        default_item_class = SampleItem
        url_in = MapCompose(processor_with_args, key="val")

    loader = L()
    loader.add_value("url", "text")
    assert loader.get_output_value("url") == ["val"]
    loader.replace_value("url", "text2")
    assert loader.get_output_value("url") == ["val"]


def test_loader_context_on_instantiation():
    loader = ContextItemLoader(key="val")
    loader.add_value("name", "marta")
    assert loader.get_output_value("name") == ["val"]
    loader = ContextItemLoader()
    loader.add_value("name", "marta")
    assert loader.get_output_value("name") == ["marta"]


def test_loader_context_on_assign():
    loader = ContextItemLoader()
    loader.context["key"] = "val"
    loader.add_value("name", "marta")
    assert loader.get_output_value("name") == ["val"]


def test_loader_context_overrides_processor_defaults():
    class L(ItemLoader):
        default_item_class = SampleItem
        url_in = MapCompose(processor_with_args, key="processor")

    loader = L(key="loader")
    loader.add_value("url", "text")
    assert loader.get_output_value("url") == ["loader"]


def test_item_passed_to_input_processor_functions():
    def processor(value, loader_context):
        return loader_context["item"]["name"]

    class L(SampleItemLoader):
        url_in = MapCompose(processor)

    item = SampleItem(name="marta")
    loader = L(item=item)
    loader.add_value("url", "text")
    assert loader.get_output_value("url") == ["marta"]
    item["name"] = "other"
    loader.replace_value("url", "text2")
    assert loader.get_output_value("url") == ["other"]


def test_plain_function_processors_get_context():
    def name_out(values, loader_context):
        return loader_context["sep"].join(values)

    class L(ItemLoader):
        default_item_class = SampleItem

    L.name_out = staticmethod(name_out)
    loader = L(sep="|")
    loader.add_value("name", ["a", "b"])
    assert loader.load_item()["name"] == "a|b"
    assert loader.get_value(["x", "y"], name_out) == "x|y"


# -- processor errors --------------------------------------------------------------------


def test_error_input_processor():
    class L(ItemLoader):
        default_item_class = SampleItem
        name_in = MapCompose(float)

    loader = L()
    with pytest.raises(ValueError) as excinfo:
        loader.add_value("name", ["marta", "other"])
    message = str(excinfo.value)
    assert message.startswith("Error with input processor MapCompose: field='name'")
    assert "value=['marta', 'other']" in message
    assert "Error in MapCompose with <class 'float'> value=['marta', 'other']" in message


def test_error_output_processor():
    class L(ItemLoader):
        default_item_class = SampleItem
        name_out = Compose(Join(), float)

    loader = L()
    loader.add_value("name", "marta")
    with pytest.raises(ValueError) as excinfo:
        loader.load_item()
    message = str(excinfo.value)
    assert message.startswith("Error with output processor Compose: field='name' value=['marta']")
    assert "could not convert string to float" in message


def test_error_output_processor_function():
    def explode(values):
        raise RuntimeError("boom")

    class L(ItemLoader):
        default_item_class = SampleItem
        url_out = staticmethod(explode)

    loader = L()
    loader.add_value("url", "u")
    with pytest.raises(ValueError, match=r"output processor .*explode: field='url' value=\['u'\] "
                                         r"error='RuntimeError: boom'"):
        loader.get_output_value("url")


def test_error_processor_as_argument():
    loader = SampleItemLoader()
    with pytest.raises(ValueError, match=r"Error with processor Compose value=\['marta', 'other'\]"):
        loader.add_value("name", ["marta", "other"], Compose(float))
    with pytest.raises(ValueError, match=r"Error with processor int value='x'"):
        loader.get_value("x", int)


# -- selectors -----------------------------------------------------------------------------


def test_no_selector():
    loader = SampleItemLoader()
    assert loader.selector is None
    for call in (
        lambda: loader.add_xpath("name", "//p"),
        lambda: loader.replace_xpath("name", "//p"),
        lambda: loader.get_xpath("//p"),
        lambda: loader.add_css("name", "p"),
        lambda: loader.replace_css("name", "p"),
        lambda: loader.get_css("p"),
        lambda: loader.nested_xpath("//p"),
        lambda: loader.nested_css("p"),
    ):
        with pytest.raises(RuntimeError, match="SampleItemLoader must be instantiated with a selector"):
            call()


@pytest.mark.parametrize("source", ["selector", "response"])
def test_xpath_methods(response, source):
    kwargs = {"selector": Selector(response)} if source == "selector" else {"response": response}
    loader = SampleItemLoader(**kwargs)
    loader.add_xpath("name", '//div[@id="id"]/text()')
    assert loader.get_output_value("name") == ["Marta"]
    loader.add_xpath("name", ["//p/text()", "//a/text()"])
    assert loader.get_output_value("name") == ["Marta", "Paragraph", "Homepage"]
    loader.replace_xpath("name", "//p/text()")
    assert loader.get_output_value("name") == ["Paragraph"]
    loader.replace_xpath("name", ["//div/text()", "//a/text()"])
    assert loader.get_output_value("name") == ["Marta", "Homepage"]
    assert loader.get_xpath("//p/text()") == ["paragraph"]
    assert loader.get_xpath("//p/text()", TakeFirst()) == "paragraph"
    assert loader.get_xpath("//p/text()", TakeFirst(), re="pa") == "pa"
    assert loader.get_xpath(["//p/text()", '//div[@id="id"]/text()']) == ["paragraph", "marta"]
    loader.add_xpath("url", "//a/@href", re=r"www\.(\w+)")
    assert loader.get_output_value("url") == ["scrapy"]


@pytest.mark.parametrize("source", ["selector", "response"])
def test_css_methods(response, source):
    kwargs = {"selector": Selector(response)} if source == "selector" else {"response": response}
    loader = SampleItemLoader(**kwargs)
    loader.add_css("name", "div#id::text")
    assert loader.get_output_value("name") == ["Marta"]
    loader.add_css("name", ["p::text", "a::text"])
    assert loader.get_output_value("name") == ["Marta", "Paragraph", "Homepage"]
    loader.replace_css("name", "p::text")
    assert loader.get_output_value("name") == ["Paragraph"]
    loader.replace_css("name", ["div::text", "a::text"])
    assert loader.get_output_value("name") == ["Marta", "Homepage"]
    assert loader.get_css("p::text") == ["paragraph"]
    assert loader.get_css("p::text", TakeFirst()) == "paragraph"
    assert loader.get_css("p::text", TakeFirst(), re="pa") == "pa"
    loader.add_css("url", "a::attr(href)")
    loader.add_css("url", "img::attr(src)")
    assert loader.get_output_value("url") == ["http://www.scrapy.org", "/images/logo.png"]
    loader.replace_css("url", "a::attr(href)", re=r"http://www\.(.+)")
    assert loader.get_output_value("url") == ["scrapy.org"]
    assert loader.get_css("a", re=r'href="(.+?)"') == ["http://www.scrapy.org"]


def test_invalid_selector_expressions(response):
    loader = SampleItemLoader(response=response)
    with pytest.raises(ValueError, match=r"XPath error: .* in //p\["):
        loader.add_xpath("name", "//p[")
    with pytest.raises(ValueError, match=r"CSS error: .* in 'p\[\['"):
        loader.add_css("name", "p[[")


def test_selector_list_as_selector(response):
    loader = SampleItemLoader(selector=response.xpath("//li"))
    assert loader.get_css("b::text") == ["one", "two"]


# -- nested loaders ------------------------------------------------------------------------

NESTED = """<html><body>
  <header><a href="http://www.example.com/">homepage</a><img src="/images/logo.png"></header>
  <footer><a href="http://www.example.com/about">about</a><img src="/images/footer.png"></footer>
</body></html>"""


@pytest.fixture
def nested_selector():
    return Selector(text=NESTED)


def test_nested_xpath(nested_selector):
    loader = ItemLoader(item={}, selector=nested_selector)
    nested = loader.nested_xpath("//header")
    nested.add_xpath("name", "a/text()")
    nested.add_xpath("url", "img/@src")
    assert isinstance(nested.selector, SelectorList)
    assert nested.item is loader.item
    assert loader.get_output_value("name") == ["homepage"]
    assert loader.get_output_value("url") == ["/images/logo.png"]
    assert nested.get_output_value("name") == ["homepage"]
    assert loader.load_item() == {"name": ["homepage"], "url": ["/images/logo.png"]}
    assert nested.load_item() is loader.load_item()


def test_nested_css(nested_selector):
    loader = ItemLoader(item={}, selector=nested_selector)
    nested = loader.nested_css("header")
    nested.add_css("name", "a::text")
    nested.add_css("url", "img::attr(src)")
    assert loader.load_item() == {"name": ["homepage"], "url": ["/images/logo.png"]}


def test_nested_replace(nested_selector):
    loader = ItemLoader(item={}, selector=nested_selector)
    nested1 = loader.nested_xpath("//footer")
    nested2 = nested1.nested_xpath("a")
    loader.add_xpath("url", "//footer/a/@href")
    assert loader.get_output_value("url") == ["http://www.example.com/about"]
    nested1.replace_xpath("url", "img/@src")
    assert loader.get_output_value("url") == ["/images/footer.png"]
    nested2.replace_xpath("url", "@href")
    assert loader.get_output_value("url") == ["http://www.example.com/about"]


def test_nested_ordering(nested_selector):
    loader = ItemLoader(item={}, selector=nested_selector)
    nested1 = loader.nested_xpath("//header")
    nested2 = loader.nested_xpath("//footer")
    nested1.add_xpath("url", "img/@src")
    loader.add_xpath("url", "//img/@src")
    nested2.add_xpath("url", "img/@src")
    nested1.add_xpath("url", "a/@href")
    loader.add_xpath("url", "//header/a/@href")
    nested2.add_xpath("url", "a/@href")
    assert loader.get_output_value("url") == [
        "/images/logo.png",
        "/images/logo.png",
        "/images/footer.png",
        "/images/footer.png",
        "http://www.example.com/",
        "http://www.example.com/",
        "http://www.example.com/about",
    ]


def test_nested_loader_context_and_class(nested_selector):
    loader = SampleItemLoader(selector=nested_selector, key="v")
    nested = loader.nested_css("footer", extra=1)
    assert type(nested) is SampleItemLoader
    assert nested.context["extra"] == 1
    assert nested.context["item"] is loader.item
    nested.add_css("name", "a::text")  # the subclass's name_in applies
    assert loader.load_item() == {"name": ["About"]}


def test_nested_loader_inherits_the_parent_context(response):
    loader = SampleItemLoader(response=response, unit="cm")
    nested = loader.nested_xpath("//ul", unit="mm", extra=2)
    assert nested.context["unit"] == "mm" and nested.context["extra"] == 2
    assert nested.context["response"] is response
    assert nested.context["item"] is loader.item
    assert loader.context["unit"] == "cm" and "extra" not in loader.context
    assert nested.nested_css("li").context["extra"] == 2
