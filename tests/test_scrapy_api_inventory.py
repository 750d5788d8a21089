"""crawlfw against the machine-made inventory of Scrapy 2.19's public API (issue 29).

``tests/data/scrapy_2_19_api.json`` is written by ``tools/scrapy_api_inventory.py`` from
Scrapy 2.19 itself; the comparison is ``tools/scrapy_api_gaps.py`` (no scrapy import).
Every difference must be on the allow-list ``tests/data/scrapy_2_19_api_gaps.json`` with
its reason, and the list must be the one docs/coming-from-scrapy2.md shows.
"""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load_tool():
    spec = importlib.util.spec_from_file_location("scrapy_api_gaps",
                                                  ROOT / "tools" / "scrapy_api_gaps.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("scrapy_api_gaps", module)
    spec.loader.exec_module(module)
    return module


tool = _load_tool()


@pytest.fixture(scope="module")
def gaps():
    return tool.find_gaps()


def test_the_inventory_is_scrapy_2_19():
    inventory = tool.load_inventory()
    assert inventory["scrapy_version"] == "2.19.0"
    assert len(inventory["modules"]) > 150 and len(inventory["default_settings"]) > 200
    # a sample of what real projects import, so a truncated inventory cannot pass
    names = inventory["modules"]
    assert "install_reactor" in names["scrapy.utils.reactor"]["names"]
    assert "get_retry_request" in names["scrapy.downloadermiddlewares.retry"]["names"]
    assert "RETRY_EXCEPTIONS" in inventory["default_settings"]


def test_every_gap_is_listed_with_its_reason(gaps):
    unlisted = tool.unlisted_gaps(gaps)
    assert unlisted == {}, (
        "Scrapy 2.19 names crawlfw lacks (or whose signature differs), not on "
        "tests/data/scrapy_2_19_api_gaps.json:\n"
        + "\n".join(f"  {name}: {what}" for name, what in sorted(unlisted.items())))


def test_no_stale_allow_list_entry(gaps):
    assert tool.stale_entries(gaps) == [], "provided now: remove them from the allow-list"


def test_every_entry_has_a_reason():
    for name, reason in tool.load_allowed().items():
        assert name.startswith("scrapy") and len(reason) > 20, name


def test_the_docs_show_the_allow_list():
    assert tool.docs_table_is_current(), (
        "docs/coming-from-scrapy2.md's table differs from the allow-list: run "
        "python3 tools/scrapy_api_gaps.py --write-docs")


@pytest.mark.parametrize("name", [
    "scrapy.utils.reactor.install_reactor",
    "scrapy.utils.reactor.is_asyncio_reactor_installed",
    "scrapy.utils.defer.maybe_deferred_to_future",
    "scrapy.utils.defer.deferred_from_coro",
    "scrapy.utils.defer.ensure_awaitable",
    "scrapy.utils.misc.walk_modules_iter",
    "scrapy.http.JsonResponse",
    "scrapy.spidermiddlewares.base.BaseSpiderMiddleware",
    "scrapy.downloadermiddlewares.retry.get_retry_request",
    "scrapy.settings.default_settings.RETRY_EXCEPTIONS",
    "scrapy.settings.default_settings.TWISTED_REACTOR",
])
def test_what_real_projects_import_is_provided(gaps, name):
    assert name not in gaps and tool._covering(tool.load_allowed(), name) is None


def test_a_missing_name_fails(monkeypatch):
    inventory = json.loads(json.dumps(tool.load_inventory()))
    inventory["modules"]["scrapy.utils.misc"]["names"]["no_such_helper"] = {
        "kind": "function", "signature": []}
    inventory["modules"]["scrapy.utils.nosuchmodule"] = {"found_by": ["package"], "names": {}}
    inventory["default_settings"]["NO_SUCH_SETTING"] = "None"
    gaps = tool.find_gaps(inventory)
    unlisted = tool.unlisted_gaps(gaps)
    assert set(unlisted) >= {"scrapy.utils.misc.no_such_helper", "scrapy.utils.nosuchmodule",
                             "scrapy.settings.default_settings.NO_SUCH_SETTING"}


@pytest.mark.parametrize("scrapy_sig, ours, ok", [
    ([{"name": "a", "kind": "positional_or_keyword"}], [{"name": "a", "kind": "positional_or_keyword"}], True),
    # crawlfw requiring more than Scrapy
    ([{"name": "a", "kind": "positional_or_keyword"}],
     [{"name": "a", "kind": "positional_or_keyword"}, {"name": "b", "kind": "positional_or_keyword"}],
     False),
    # a keyword Scrapy accepts, taken by **kwargs
    ([{"name": "x", "kind": "keyword_only", "default": "1"}], [{"name": "kw", "kind": "var_keyword"}],
     True),
    ([{"name": "x", "kind": "keyword_only", "default": "1"}], [], False),
    # the same position under another name
    ([{"name": "a", "kind": "positional_or_keyword"}], [{"name": "b", "kind": "positional_or_keyword"}],
     False),
    ([{"name": "args", "kind": "var_positional"}], [], False),
])
def test_signature_compatibility(scrapy_sig, ours, ok):
    assert (tool.incompatibility(scrapy_sig, ours) is None) is ok
