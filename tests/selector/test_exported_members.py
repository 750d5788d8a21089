"""The public names of crawlfw.selector and friends (pinned, httpx's style)."""

import pytest

import crawlfw
import crawlfw.item
import crawlfw.link
import crawlfw.linkextractors
import crawlfw.loader
import crawlfw.loader.processors
import crawlfw.selector


@pytest.mark.parametrize(
    "module, names",
    [
        (crawlfw.selector, ["Selector", "SelectorList", "XPathSelector", "HtmlXPathSelector",
                            "XmlXPathSelector"]),
        (crawlfw.item, ["BaseItem", "Field", "ItemMeta", "DictItem", "Item",
                        "AnyItem", "ITEM_TYPES", "is_item"]),  # the last three: issue 17
        (crawlfw.loader, ["ItemLoader"]),
        (crawlfw.loader.processors, ["MapCompose", "Compose", "TakeFirst", "Identity",
                                     "SelectJmes", "Join"]),
        (crawlfw.linkextractors, ["IGNORED_EXTENSIONS", "FilteringLinkExtractor", "LinkExtractor"]),
        (crawlfw.link, ["Link"]),
    ],
)
def test_all(module, names):
    assert sorted(module.__all__) == sorted(names)
    for name in names:
        assert getattr(module, name) is not None


def test_top_level_names():
    from crawlfw.item import Field, Item
    from crawlfw.selector import Selector

    assert crawlfw.Selector is Selector
    assert crawlfw.Item is Item
    assert crawlfw.Field is Field


def test_scrapy_1_2_module_paths():
    from crawlfw.linkextractors import LinkExtractor
    from crawlfw.linkextractors.lxmlhtml import LxmlLinkExtractor
    from crawlfw.loader.common import wrap_loader_context  # noqa: F401
    from crawlfw.selector.unified import Selector, SelectorList  # noqa: F401

    assert LinkExtractor is LxmlLinkExtractor
