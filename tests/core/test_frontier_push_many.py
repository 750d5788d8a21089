"""The push_many shortcuts of MemoryFrontier (crawlfw's own RFPDupeFilter taken inline,
stats counted once per batch) and SqliteFrontier (a duplicate in the seen cache answered
without push, its count once per batch) (#20) give what the general path
(FrontierBase.push_many: push one by one, the dupefilter asked through its methods)
gives, on a table of batches: the same answers, the same fingerprints, the same stats,
the same log lines and the same queue order."""

import logging
import random

import pytest

from crawlfw import Spider
from crawlfw.core.frontier.api import FrontierBase
from crawlfw.core.frontier.frontier import MemoryFrontier
from crawlfw.core.frontier.sqlite_frontier import SqliteFrontier
from crawlfw.dupefilters import RFPDupeFilter
from crawlfw.http import Request
from crawlfw.squeues import FifoMemoryQueue, LifoMemoryQueue
from crawlfw.utils.test import get_crawler

_URLS = [
    "http://a.example/", "http://a.example/1", "http://a.example/1#frag",
    "http://A.example/2?b=2&a=1", "http://a.example/2?a=1&b=2", "https://b.example:8443/x",
    "http://b.example/x", "http://c.example/%7Euser", "http://c.example/~user",
    # the same resource spelt three ways (one fingerprint), upper case, odd ports
    "http://d.example/caf\u00e9?q=\u20ac", "http://d.example/caf%C3%A9?q=%E2%82%AC",
    "http://D.EXAMPLE:80/caf\u00e9?q=\u20ac#x", "http://[::1]:8080/v6", "http://e.example:0080/p",
]


class _ShiftedUrl(Request):
    """A subclass whose ``url`` is not its ``_url``: the fingerprint follows ``url``."""

    @property
    def url(self):
        return self._url + "?shifted"


def _request(rng: random.Random) -> Request:
    url = rng.choice(_URLS)
    kind = rng.randrange(11)
    if kind == 0:
        return Request(url, dont_filter=True)
    if kind == 1:
        return Request(url, method="POST", body=rng.choice([b"", b"x", b"y"]))
    if kind == 2:
        return Request(url, priority=rng.choice([-1, 1, 5]))
    if kind == 3:
        return Request(url, meta={"is_start_request": True})
    if kind == 4:
        return Request(url, meta={"download_slot": "shared"})
    if kind == 5:
        return _ShiftedUrl(url)
    if kind == 6:
        return Request(url, method="get")  # upper-cased: the GET memo applies
    if kind == 7:
        return Request(url, body=b"x")  # a GET with a body: no memo
    if kind == 8:
        return Request(url, priority=2, meta={"is_start_request": True, "download_slot": "s"})
    return Request(url)


def _batches(seed: int):
    rng = random.Random(seed)
    return [[_request(rng) for _ in range(rng.randrange(0, 12))]
            for _ in range(rng.randrange(1, 6))]


def _frontier(kind, jobdir, dupefilter, mqclass, stats):
    if kind == "memory":
        return MemoryFrontier(dupefilter, mqclass, stats=stats)
    jobdir.mkdir()
    return SqliteFrontier(str(jobdir), dupefilter, lifo=mqclass is LifoMemoryQueue, fsync=False,
                          stats=stats)


def _run(batches, push_many, *, mqclass, debug, starts, kind="memory", jobdir=None):
    crawler = get_crawler(Spider)
    spider = crawler._create_spider("push")
    frontier = _frontier(kind, jobdir, RFPDupeFilter(debug=debug), mqclass, crawler.stats)
    frontier.open(spider)
    crawlfw_logger = logging.getLogger("crawlfw")
    records = []
    handler = logging.Handler(logging.DEBUG)
    handler.emit = records.append
    crawlfw_logger.addHandler(handler)
    level = crawlfw_logger.level
    crawlfw_logger.setLevel(logging.DEBUG)
    try:
        answers = []
        for i, batch in enumerate(batches):
            start = {"consumed": len(batch), "exhausted": i == len(batches) - 1} if starts else None
            answers.append(push_many(frontier, batch, start=start))
    finally:
        crawlfw_logger.removeHandler(handler)
        crawlfw_logger.setLevel(level)
    order = [(r.method, r.url, r.body, r.priority) for r in frontier.lease(10_000, 0.0)]
    stats = {k: v for k, v in crawler.stats.get_stats().items() if k != "start_time"}
    seen = sorted(frontier.df.fingerprints if kind == "memory" else frontier._seen_cache)
    meta = {k: v for k, v in frontier.meta.items() if k in ("start_requests", "start_exhausted")}
    if kind != "memory":
        frontier.close("finished")
    return {"answers": answers, "fingerprints": seen, "stats": stats,
            "logs": [r.getMessage() for r in records], "order": order, "meta": meta}


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("debug", [False, True])
def test_shortcut_matches_the_general_path(seed, debug):
    mqclass = LifoMemoryQueue if seed % 2 else FifoMemoryQueue
    starts = seed % 3 == 0
    fast = _run(_batches(seed), MemoryFrontier.push_many, mqclass=mqclass, debug=debug,
                starts=starts)
    general = _run(_batches(seed), FrontierBase.push_many, mqclass=mqclass, debug=debug,
                   starts=starts)
    assert fast == general


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("debug", [False, True])
def test_jobdir_shortcut_matches_the_general_path(tmp_path, seed, debug):
    mqclass = LifoMemoryQueue if seed % 2 else FifoMemoryQueue
    starts = seed % 3 == 0
    fast = _run(_batches(seed), SqliteFrontier.push_many, mqclass=mqclass, debug=debug,
                starts=starts, kind="sqlite", jobdir=tmp_path / "fast")
    general = _run(_batches(seed), FrontierBase.push_many, mqclass=mqclass, debug=debug,
                   starts=starts, kind="sqlite", jobdir=tmp_path / "general")
    assert fast == general


def test_a_replaced_dupefilter_method_is_called():
    crawler = get_crawler(Spider)
    frontier = MemoryFrontier(RFPDupeFilter(), stats=crawler.stats)
    frontier.open(crawler._create_spider("push"))
    asked = []
    frontier.df.request_seen = lambda request: asked.append(request.url) or True
    assert frontier.push_many([Request("http://a.example/")]) == [False]
    assert asked == ["http://a.example/"]


def test_the_counts_of_a_batch_cut_short_by_an_error_are_kept():
    crawler = get_crawler(Spider)
    spider = crawler._create_spider("push")
    frontier = MemoryFrontier(RFPDupeFilter(), stats=crawler.stats)
    frontier.open(spider)

    class BrokenMeta(dict):
        def get(self, key, default=None):
            raise RuntimeError("broken request")

    broken = Request("http://b.example/")
    broken._meta = BrokenMeta(x=1)
    batch = [Request("http://a.example/"), Request("http://a.example/"),
             Request("http://a.example/"), broken]
    with pytest.raises(RuntimeError, match="broken request"):
        frontier.push_many(batch)
    stats = crawler.stats
    assert stats.get_value("scheduler/enqueued") == 1
    assert stats.get_value("dupefilter/filtered") == 2
    assert len(frontier) == 1
