"""Issue 22: nothing a crawl stores names code. ``request_from_dict`` (the JOBDIR and the
Redis frontiers' way back from storage) accepts ``_class`` only if it names a Request
subclass already defined, and callbacks only as the spider's own methods; nothing is
imported or called to find out. A real redis-server holds a tampered frontier."""

import json
import logging
import sys

import pytest

import crawlfw
from crawlfw.core.frontier.redis_frontier import RedisFrontier
from crawlfw.dupefilters import RFPDupeFilter
from crawlfw.utils.reqser import request_from_dict, request_to_dict
from crawlfw.utils.test import get_crawler

EVIL = '''
import pathlib
pathlib.Path(__file__).with_name("IMPORTED").write_text("imported")

class Evil:
    def __init__(self, *args, **kwargs):
        pathlib.Path(__file__).with_name("CALLED").write_text("called")
'''


class Spider(crawlfw.Spider):
    name = "nocode"
    not_a_method = print

    def parse_item(self, response):
        pass


@pytest.fixture
def spider():
    return get_crawler(Spider)._create_spider()


@pytest.fixture
def evil_module(tmp_path, monkeypatch):
    (tmp_path / "evilmod_nocode.py").write_text(EVIL)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("evilmod_nocode", None)


@pytest.mark.parametrize("path", ["evilmod_nocode.Evil", "os.system", "builtins.print",
                                  "crawlfw.http.Response", "crawlfw.http", 42])
def test_class_must_be_a_defined_request_subclass(spider, evil_module, path):
    d = request_to_dict(crawlfw.FormRequest("http://a.example/", formdata={"q": "1"}), spider)
    d["_class"] = path
    with pytest.raises(ValueError, match="not a Request subclass"):
        request_from_dict(d, spider)
    assert not (evil_module / "IMPORTED").exists()
    assert "evilmod_nocode" not in sys.modules


def test_request_subclasses_still_round_trip(spider):
    class MyRequest(crawlfw.Request):
        pass

    for request in (crawlfw.FormRequest("http://a.example/", formdata={"q": "1"}),
                    MyRequest("http://a.example/m", callback=spider.parse_item)):
        back = request_from_dict(request_to_dict(request, spider), spider)
        assert type(back) is type(request) and back.url == request.url


@pytest.mark.parametrize("name", ["not_a_method", "__class__", "crawler", "name"])
def test_callback_must_be_a_spider_method(spider, name):
    d = request_to_dict(crawlfw.Request("http://a.example/", meta={"x": 1}), spider)
    d["callback"] = name
    with pytest.raises(ValueError):
        request_from_dict(d, spider)


@pytest.mark.slow
def test_tampered_redis_frontier_is_dropped_with_an_error(redis_server, spider, evil_module,
                                                          caplog):
    frontier = RedisFrontier(redis_server.url, "{nocode}", RFPDupeFilter(), worker="w1",
                             lease_timeout_s=30.0)
    frontier.open(spider)
    try:
        frontier.push(crawlfw.FormRequest("http://127.0.0.1/evil", formdata={"q": "1"}))
        frontier.push(crawlfw.Request("http://127.0.0.1/fine", meta={"k": 1}))
        for field, raw in frontier.client.hgetall("{nocode}:requests").items():
            d = json.loads(raw)
            if d["url"].endswith("/evil"):
                d["_class"] = "evilmod_nocode.Evil"
                frontier.client.hset("{nocode}:requests", field, json.dumps(d))
        with caplog.at_level(logging.ERROR):
            leased = frontier.lease(10)
    finally:
        frontier.client.close()
    assert [r.url for r in leased] == ["http://127.0.0.1/fine"]
    assert "evilmod_nocode.Evil" in caplog.text and "cannot be read" in caplog.text
    assert not (evil_module / "IMPORTED").exists()
    assert not (evil_module / "CALLED").exists()
