"""RFPDupeFilter over the compact seen set (crawlfw/utils/_seen.py): Scrapy's interface
kept (``request_seen``, ``fingerprints`` as a set of hex fingerprints, ``requests.seen``),
its settings, its files, and MemoryFrontier.push_many's inline copy of its rule."""

import os
import random

import pytest

from crawlfw.core.frontier.api import FrontierBase
from crawlfw.core.frontier.frontier import MemoryFrontier
from crawlfw.dupefilters import RFPDupeFilter
from crawlfw.http import Request
from crawlfw.settings import Settings
from crawlfw.settings._validation import check_settings
from crawlfw.spiders import Spider
from crawlfw.utils._seen import MIN_MEMORY_LIMIT, BloomSeenSet, SeenSet
from crawlfw.utils.request import request_fingerprint
from crawlfw.utils.test import get_crawler


def test_request_seen_and_fingerprints_as_in_scrapy(tmp_path):
    df = RFPDupeFilter()
    r1, r2 = Request("http://example.com/a?x=1&y=2"), Request("http://example.com/a?y=2&x=1")
    assert df.request_seen(r1) is False
    assert df.request_seen(r2) is True  # same canonical URL
    assert df.request_seen(Request("http://example.com/a", method="POST")) is False
    fp = request_fingerprint(r1)
    assert fp in df.fingerprints and len(df.fingerprints) == 2
    assert request_fingerprint(Request("http://example.com/b")) not in df.fingerprints
    df.fingerprints.add(request_fingerprint(Request("http://example.com/b")))
    assert df.request_seen(Request("http://example.com/b")) is True
    df.close("finished")
    assert len(df.fingerprints) == 0


def test_requests_seen_file_is_written_and_read_back(tmp_path):
    df = RFPDupeFilter(str(tmp_path))
    r = Request("http://example.com/a")
    assert not df.request_seen(r) and df.request_seen(r)
    df.close("finished")
    assert (tmp_path / "requests.seen").read_text() == request_fingerprint(r) + "\n"
    again = RFPDupeFilter(str(tmp_path))
    assert again.request_seen(r) is True
    assert not again.request_seen(Request("http://example.com/other"))
    again.close("finished")
    assert len((tmp_path / "requests.seen").read_text().splitlines()) == 2


def test_a_set_of_the_users_still_works():
    df = RFPDupeFilter()
    df.fingerprints = set()
    r = Request("http://example.com/a")
    assert not df.request_seen(r) and df.request_seen(r)
    assert df.fingerprints == {request_fingerprint(r)}
    df.close("finished")


@pytest.mark.parametrize("settings, kind, limit", [
    ({}, SeenSet, 32 * 1024 * 1024),
    ({"DUPEFILTER_MEMORY_LIMIT": "2097152"}, SeenSet, 2 * 1024 * 1024),
    ({"DUPEFILTER_BLOOM_ERROR_RATE": "0.001"}, BloomSeenSet, None),
])
def test_from_settings(settings, kind, limit):
    df = RFPDupeFilter.from_settings(Settings(settings))
    assert type(df.fingerprints.seen) is kind
    if limit is not None:
        assert df.fingerprints.seen.memory_limit_bytes == limit
    else:
        assert df.fingerprints.seen.error_rate == 0.001


@pytest.mark.parametrize("settings, problem", [
    ({"DUPEFILTER_MEMORY_LIMIT": 1000}, "Setting 'DUPEFILTER_MEMORY_LIMIT' must be at least "
                                        f"{MIN_MEMORY_LIMIT} bytes, got 1000"),
    ({"DUPEFILTER_MEMORY_LIMIT": "lots"}, "Setting 'DUPEFILTER_MEMORY_LIMIT' must be an "
                                          "integer, got 'lots'"),
    ({"DUPEFILTER_BLOOM_ERROR_RATE": 1.5}, "Setting 'DUPEFILTER_BLOOM_ERROR_RATE' must be "
                                           "above 0 and at most 0.5 (0 keeps the exact seen "
                                           "set), got 1.5"),
    ({"DUPEFILTER_BLOOM_ERROR_RATE": 0}, None),
])
def test_settings_out_of_range_are_refused_before_the_crawl(settings, problem):
    problems = check_settings(Settings(settings))
    assert problems == ([] if problem is None else [f"{problem} (set in the project's settings)"])


def test_open_sweeps_what_a_killed_crawl_left_and_close_removes_the_spill(tmp_path):
    dead = tmp_path / "seen-1-x"
    dead.mkdir()
    (dead / ".lock").touch()
    df = RFPDupeFilter(memory_limit=MIN_MEMORY_LIMIT, tempdir=str(tmp_path))
    df.open()
    assert list(tmp_path.iterdir()) == []
    for i in range(70_000):
        df.request_seen(Request(f"http://example.com/{i}"))
    seen = df.fingerprints.seen
    assert seen.spills and os.path.exists(seen.spill_path)
    assert df.request_seen(Request("http://example.com/7"))  # found on disk
    df.close("finished")
    assert list(tmp_path.iterdir()) == []


def _push_many(push_many, df, batches):
    crawler = get_crawler(Spider)
    frontier = MemoryFrontier(df, stats=crawler.stats)
    frontier.open(crawler._create_spider("push"))
    answers = [push_many(frontier, batch) for batch in batches]
    stats = {k: v for k, v in crawler.stats.get_stats().items() if k != "start_time"}
    return answers, sorted(df.fingerprints), stats


@pytest.mark.slow  # (2-5 s each)
@pytest.mark.parametrize("seed", range(3))
def test_the_inline_rule_spills_as_request_seen_does(tmp_path, seed):
    """MemoryFrontier.push_many's inline rule on a set that spills gives the general
    path's answers (tests/core/test_frontier_push_many.py compares them in memory)."""
    rng = random.Random(seed)
    urls = [f"http://h{rng.randrange(50)}.example/{rng.randrange(400_000)}"
            for _ in range(80_000)]
    batches = [[Request(u) for u in urls[i:i + 500]] for i in range(0, len(urls), 500)]
    results = []
    for push_many in (MemoryFrontier.push_many, FrontierBase.push_many):
        df = RFPDupeFilter(memory_limit=MIN_MEMORY_LIMIT, tempdir=str(tmp_path))
        results.append(_push_many(push_many, df, batches))
        assert df.fingerprints.seen.spills > 0
        df.close("finished")
    assert results[0] == results[1]
    assert sum(a.count(True) for a in results[0][0]) == len(set(urls))


def test_the_inline_rule_with_a_bloom_filter():
    df = RFPDupeFilter(bloom_error_rate=0.001)
    batch = [Request(f"http://example.com/{i % 700}") for i in range(1000)]
    crawler = get_crawler(Spider)
    frontier = MemoryFrontier(df, stats=crawler.stats)
    frontier.open(crawler._create_spider("push"))
    answers = frontier.push_many(batch)
    assert answers == [True] * 700 + [False] * 300
    assert crawler.stats.get_value("dupefilter/filtered") == 300
    assert len(df.fingerprints) == 700


def test_scrapy_2_constructors_and_fingerprinter():
    # Scrapy 2.19: from_crawler on both classes, RFPDupeFilter(path, debug, *, fingerprinter)
    from crawlfw.dupefilters import BaseDupeFilter, RFPDupeFilter
    from crawlfw.http import Request
    from crawlfw.utils.request import request_fingerprint
    from crawlfw.utils.test import get_crawler

    crawler = get_crawler(settings_dict={"DUPEFILTER_DEBUG": True})
    assert type(BaseDupeFilter.from_crawler(crawler)) is BaseDupeFilter
    df = RFPDupeFilter.from_crawler(crawler)
    assert df.debug and df.fingerprinter is None
    request = Request("http://example.com/a")
    assert df.request_fingerprint(request) == request_fingerprint(request)

    class Scrapy12Style(RFPDupeFilter):  # overrides from_settings only: still used
        @classmethod
        def from_settings(cls, settings):
            made = super().from_settings(settings)
            made.built_by = "from_settings"
            return made

    assert Scrapy12Style.from_crawler(crawler).built_by == "from_settings"

    class ByPath:
        def fingerprint(self, request):
            return request.url.encode()[-4:]

    custom = RFPDupeFilter(fingerprinter=ByPath())
    assert custom.request_fingerprint(request) == b"om/a".hex()
    assert not custom.request_seen(request)
    assert custom.request_seen(Request("http://other.org/om/a"))  # same 4 last bytes
    custom.close("finished")
    df.close("finished")


def test_the_recent_fingerprints_answer_as_the_set_and_stay_bounded(monkeypatch):
    """Fingerprints' two generations of recent fingerprints (a cache in front of the
    compact set) give the same answers as a plain set, across rotations and discards,
    and hold at most two generations; the frontier's inline copy of the rule too."""
    import random

    import crawlfw.core.frontier.frontier as frontier_module
    import crawlfw.utils._seen as seen_module
    from crawlfw.dupefilters import RFPDupeFilter
    from crawlfw.http import Request

    monkeypatch.setattr(seen_module, "HOT_FINGERPRINTS", 8)
    monkeypatch.setattr(frontier_module, "HOT_FINGERPRINTS", 8)
    rng = random.Random(20261129)
    pool = [f"{rng.getrandbits(160):040x}" for _ in range(60)]
    df = RFPDupeFilter()
    fps, reference = df.fingerprints, set()
    for step in range(2000):
        fp = rng.choice(pool)
        if step % 97 == 0 and fp in reference:
            fps.discard(fp)
            reference.discard(fp)
            continue
        assert fps.add_new(fp) is (fp not in reference), step
        reference.add(fp)
        assert len(fps.hot) < 8 and len(fps.prev) <= 8
        assert all(x in reference for x in fps.hot | fps.prev)
    assert {fp for fp in pool if fp in fps} == reference
    df.close("finished")

    # the frontier's inline rule, pushing requests whose URLs repeat
    from crawlfw.core.frontier.frontier import MemoryFrontier
    from crawlfw.utils.test import get_crawler

    crawler = get_crawler()
    frontier = MemoryFrontier(RFPDupeFilter(), stats=crawler.stats)
    frontier.open(crawler._create_spider("push"))
    urls = [f"http://example.com/{rng.randrange(40)}" for _ in range(500)]
    queued = frontier.push_many([Request(u) for u in urls])
    first_seen = set()
    expected = [not (u in first_seen or first_seen.add(u)) for u in urls]
    assert queued == expected
    assert len(frontier.df.fingerprints.hot) < 8 and len(frontier.df.fingerprints.prev) <= 8
    frontier.close("finished")
