"""ISpiderLoader: the default SpiderLoader implements it; incomplete classes do not."""

import pytest

from crawlfw.interfaces import ISpiderLoader, ISpiderManager
from crawlfw.settings import Settings
from crawlfw.spiderloader import SpiderLoader


def test_spider_loader_implements_the_interface():
    assert issubclass(SpiderLoader, ISpiderLoader)
    assert isinstance(SpiderLoader.from_settings(Settings({"SPIDER_MODULES": []})), ISpiderLoader)


class Complete:
    @classmethod
    def from_settings(cls, settings):
        return cls()

    def load(self, spider_name):
        raise KeyError(spider_name)

    def list(self):
        return []

    def find_by_request(self, request):
        return []


@pytest.mark.parametrize("missing", ["from_settings", "load", "list", "find_by_request"])
def test_a_class_missing_a_method_does_not(missing):
    incomplete = type("Incomplete", (), {k: v for k, v in vars(Complete).items() if k != missing})
    assert issubclass(Complete, ISpiderLoader)
    assert not issubclass(incomplete, ISpiderLoader)


def test_old_name():
    assert ISpiderManager is ISpiderLoader
