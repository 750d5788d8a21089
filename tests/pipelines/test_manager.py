import logging

import pytest

from crawlfw.exceptions import DropItem
from crawlfw.pipelines import ItemPipelineManager
from crawlfw.settings import Settings
from crawlfw.spiders import Spider
from tests.extensions._crawler import get_crawler


class AddA:
    def process_item(self, item, spider):
        item["trail"].append("A")
        return item


class AddB:
    def process_item(self, item, spider):
        item["trail"].append("B")
        return item


class Dropper:
    def process_item(self, item, spider):
        if item.get("drop"):
            raise DropItem("dropped on purpose")
        return item


class ReturnsNone:
    def process_item(self, item, spider):
        return None


class Replacer:
    def process_item(self, item, spider):
        return {"replaced": True, "trail": item["trail"] if item else None}


class OpenClose:
    def __init__(self):
        self.events = []

    def open_spider(self, spider):
        self.events.append(("open", spider.name))

    def close_spider(self, spider):
        self.events.append(("close", spider.name))


def _path(cls):
    return f"{__name__}.{cls.__name__}"


@pytest.fixture
def spider():
    return Spider(name="pipes")


def test_order_from_settings(spider):
    settings = Settings({"ITEM_PIPELINES": {_path(AddB): 200, _path(AddA): 100}})
    manager = ItemPipelineManager.from_settings(settings)
    assert manager.process_item({"trail": []}, spider) == {"trail": ["A", "B"]}


def test_base_and_user_settings_merge(spider):
    settings = Settings({
        "ITEM_PIPELINES_BASE": {_path(AddA): 300},
        "ITEM_PIPELINES": {_path(AddB): 100},
    })
    manager = ItemPipelineManager.from_settings(settings)
    assert manager.process_item({"trail": []}, spider)["trail"] == ["B", "A"]


def test_each_pipeline_gets_previous_result(spider):
    manager = ItemPipelineManager(AddA(), Replacer(), AddB())
    assert manager.process_item({"trail": []}, spider) == {"replaced": True, "trail": ["A", "B"]}


def test_drop_item_propagates_and_stops(spider):
    a, b = AddA(), AddB()
    manager = ItemPipelineManager(a, Dropper(), b)
    item = {"trail": [], "drop": True}
    with pytest.raises(DropItem, match="dropped on purpose"):
        manager.process_item(item, spider)
    assert item["trail"] == ["A"]


def test_none_passed_on_with_warning(spider, caplog):
    manager = ItemPipelineManager(ReturnsNone(), Replacer())
    with caplog.at_level(logging.WARNING, logger="crawlfw.pipelines"):
        result = manager.process_item({"trail": []}, spider)
    assert result == {"replaced": True, "trail": None}
    [record] = caplog.records
    assert "ReturnsNone" in record.getMessage()


def test_no_pipelines_returns_item(spider):
    item = {"a": 1}
    assert ItemPipelineManager().process_item(item, spider) is item


def test_open_close_spider(spider):
    oc = OpenClose()
    manager = ItemPipelineManager(oc, AddA())
    manager.open_spider(spider)
    manager.close_spider(spider)
    assert oc.events == [("open", "pipes"), ("close", "pipes")]


def test_component_name_in_log(caplog):
    crawler = get_crawler({"ITEM_PIPELINES": {_path(AddA): 1}})
    with caplog.at_level(logging.INFO, logger="crawlfw.middleware"):
        ItemPipelineManager.from_crawler(crawler)
    assert any(r.getMessage().startswith("Enabled item pipelines:\n") for r in caplog.records)
