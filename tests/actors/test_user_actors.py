"""User actors (``ACTORS``): started in each crawl's tree, fed the crawl's events, able
to send requests and items into the crawl, restarted when they fail within the crawl's
restart intensity, and the crawl closed with ``<role>_failed`` past it."""

import subprocess
import sys
import threading

import pytest

import crawlfw
import crawlfw.actors
import crawlfw.exceptions
from crawlfw.actors import UserActor
from crawlfw.core.flow._reasons import is_failure_reason
from crawlfw.crawler import CrawlerRunner
from crawlfw.exceptions import CrawlStartError
from tests.support.countserver import CountingServer
from tests.support.crawl import run_crawl


@pytest.fixture
def server():
    s = CountingServer()
    yield s
    s.stop()


class ListSpider(crawlfw.Spider):
    name = "list"
    urls = ()

    def start_requests(self):
        for url in self.urls:
            yield crawlfw.Request(url)

    def parse(self, response):
        yield {"url": response.url}


class Feeder(UserActor):
    """On ``spider_opened`` schedules ``FEEDER_URL`` and adds one item of its own; counts
    ``item_scraped`` events."""

    events = ("spider_opened", "item_scraped")
    seen = []

    def handle_spider_opened(self, message):
        self.crawl(crawlfw.Request(self.crawler.settings["FEEDER_URL"]))
        self.add_items([{"from": "feeder"}])

    def handle_item_scraped(self, message):
        Feeder.seen.append(message["item"])


def test_user_actor_sends_requests_and_items_and_gets_events(server):
    Feeder.seen = []
    result = run_crawl(ListSpider, {"ACTORS": {f"{__name__}.Feeder": 10},
                                    "FEEDER_URL": f"{server.url}/page/7"},
                       urls=[f"{server.url}/page/1"])
    assert result.finish_reason == "finished"
    assert sorted(map(str, result.items)) == sorted(map(str, [
        {"url": f"{server.url}/page/1"}, {"url": f"{server.url}/page/7"}, {"from": "feeder"}]))
    assert result.stats["item_scraped_count"] == 3
    assert "/page/7" in server.paths


class IdleFeeder(UserActor):
    """On its first ``spider_idle`` adds an item and schedules a request (Scrapy's
    "schedule more work when idle" pattern, from an actor)."""

    events = ("spider_idle",)
    turns = []

    def handle_spider_idle(self, message):
        IdleFeeder.turns.append(len(IdleFeeder.turns) + 1)
        if len(IdleFeeder.turns) == 1:
            self.add_items([{"from": "idle"}])
            self.crawl(crawlfw.Request(self.crawler.settings["FEEDER_URL"]))


def test_what_an_actor_adds_on_spider_idle_is_processed_before_the_close(server, caplog):
    """docs/actors.md: the crawl does not close before items (and requests) an actor
    adds are processed, also when it adds them from its ``spider_idle`` handler."""
    IdleFeeder.turns = []
    result = run_crawl(ListSpider, {"ACTORS": {f"{__name__}.IdleFeeder": 10},
                                    "FEEDER_URL": f"{server.url}/page/9"},
                       urls=[f"{server.url}/page/1"])
    assert result.finish_reason == "finished"
    assert "dropped" not in caplog.text
    assert sorted(map(str, result.items)) == sorted(map(str, [
        {"url": f"{server.url}/page/1"}, {"from": "idle"}, {"url": f"{server.url}/page/9"}]))
    assert server.paths == ["/page/1", "/page/9"]
    assert IdleFeeder.turns == [1, 2]  # idle again once that work was done, then closed


class Flaky(UserActor):
    """Raises on the first item_scraped event of the test, then counts the rest."""

    events = ("item_scraped",)
    crashed = threading.Event()
    later = []

    def handle_item_scraped(self, message):
        if not Flaky.crashed.is_set():
            Flaky.crashed.set()
            raise RuntimeError("flaky user actor")
        Flaky.later.append(message["item"])


def test_failing_user_actor_is_restarted_and_the_crawl_finishes(server, caplog):
    Flaky.crashed.clear()
    Flaky.later = []
    # /slow/ pages (held 0.2 s each, one at a time): the crawl outlasts the restart even
    # on a loaded machine
    urls = [f"{server.url}/slow/{i}" for i in range(6)]
    result = run_crawl(ListSpider, {"ACTORS": {f"{__name__}.Flaky": 10},
                                    "SUPERVISOR_BACKOFF": 0, "CONCURRENT_REQUESTS": 1},
                       urls=urls)
    assert Flaky.crashed.is_set()
    assert result.finish_reason == "finished"
    assert len(result.items) == 6
    assert result.stats["supervisor/restarts/custom"] == 1
    assert f"Actor custom ({__name__}.Flaky) of crawl list-" in caplog.text
    assert "RuntimeError: flaky user actor" in caplog.text
    assert Flaky.later  # the restarted actor got the later events


class Counter(UserActor):
    """Raises on the first item_scraped event, then records the rest."""

    events = ("item_scraped",)
    died_on = []
    later = []

    def handle_item_scraped(self, message):
        if not Counter.died_on:
            Counter.died_on.append(message["item"])
            raise RuntimeError("counter fails once")
        Counter.later.append(message["item"])


def test_a_restarted_user_actor_gets_every_event_sent_while_it_was_down(server, caplog):
    Counter.died_on, Counter.later = [], []
    urls = [f"{server.url}/slow/{i}" for i in range(6)]
    # Restarted 0.5 s after its death: the next items are scraped meanwhile.
    result = run_crawl(ListSpider, {"ACTORS": {f"{__name__}.Counter": 10},
                                    "SUPERVISOR_BACKOFF": 0.5, "CONCURRENT_REQUESTS": 1},
                       urls=urls)
    assert result.finish_reason == "finished"
    assert result.stats["supervisor/restarts/custom"] == 1
    assert "died handling a 'item_scraped' message: not sent again" in caplog.text
    # Every event but the one it died on reached the new instance, in order.
    assert Counter.died_on + Counter.later == result.items


class Broken(UserActor):
    role = "watchdog"

    def on_start(self):
        raise RuntimeError("watchdog cannot start")


def test_user_actor_past_the_intensity_fails_the_crawl(server, caplog):
    result = run_crawl(ListSpider, {"ACTORS": {f"{__name__}.Broken": 10},
                                    "SUPERVISOR_BACKOFF": 0, "SUPERVISOR_MAX_RESTARTS": 2},
                       urls=[f"{server.url}/slow/{i}" for i in range(3)], timeout_s=30)
    assert result.finish_reason == "watchdog_failed"
    assert is_failure_reason("watchdog_failed")
    assert result.crawler.failed
    assert result.stats["supervisor/restarts/watchdog"] == 2
    assert "Restart intensity of crawl list-" in caplog.text
    assert f"watchdog ({__name__}.Broken) failed again" in caplog.text


class NotAnActor:
    pass


class OwnRole(UserActor):
    role = "engine"


class BadEvents(UserActor):
    events = ("item_scrapped",)


@pytest.mark.parametrize("path, error", [
    ("tests.nope.Actor", "ACTORS: cannot load 'tests.nope.Actor': ModuleNotFoundError"),
    (f"{__name__}.NotAnActor", f"ACTORS: {__name__}.NotAnActor is not a subclass of "
                               "crawlfw.actors.UserActor"),
    (f"{__name__}.OwnRole", f"ACTORS: {__name__}.OwnRole takes crawlfw's own role 'engine'"),
    (f"{__name__}.BadEvents", "subscribes to unknown events ['item_scrapped']"),
])
def test_bad_actors_entries_refuse_the_start(path, error):
    runner = CrawlerRunner({"ACTORS": {path: 1}})
    try:
        with pytest.raises(CrawlStartError) as info:
            runner.crawl(ListSpider)
        assert error in str(info.value)
    finally:
        runner.shutdown()


SPIDER_FILE = '''
import crawlfw
import crawlfw.actors
import crawlfw.exceptions
from crawlfw.actors import UserActor


class Watchdog(UserActor):
    role = "watchdog"

    def on_start(self):
        raise RuntimeError("watchdog cannot start")


class S(crawlfw.Spider):
    name = "watched"
    custom_settings = {"ACTORS": {__name__ + ".Watchdog": 1}}
    start_urls = [%r]

    def parse(self, response):
        yield {"url": response.url}
'''


@pytest.mark.slow
def test_failing_user_actor_exits_non_zero_from_the_command_line(server, tmp_path):
    spider = tmp_path / "watched.py"
    spider.write_text(SPIDER_FILE % f"{server.url}/slow/1")
    proc = subprocess.run(
        [sys.executable, "-m", "crawlfw.cmdline", "runspider", str(spider),
         "-s", "SUPERVISOR_BACKOFF=0", "-s", "CONTROL_ENDPOINT=0"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "RuntimeError: watchdog cannot start" in proc.stderr
    assert "Restart intensity of crawl watched-1 exhausted" in proc.stderr
    assert "Spider closed (watchdog_failed)" in proc.stderr


class Recorder(UserActor):
    """Subscribes to every event and records the message types and their keys."""

    events = tuple(sorted(crawlfw.actors.EVENTS))
    got = {}

    def __getattr__(self, name):
        if name.startswith("handle_"):
            return lambda message: Recorder.got.setdefault(message["type"], set(message))
        raise AttributeError(name)


class DropOne:
    def process_item(self, item, spider):
        if item.get("drop"):
            raise crawlfw.exceptions.DropItem("dropped on purpose")
        return item


class EventfulSpider(crawlfw.Spider):
    name = "eventful"
    base = ""

    def start_requests(self):
        yield crawlfw.Request(self.base + "/page/1")
        yield crawlfw.Request(self.base + "/page/1")  # a duplicate: request_dropped
        yield crawlfw.Request(self.base + "/page/2", callback=self.fails)

    def parse(self, response):
        yield {"url": response.url}
        yield {"url": response.url, "drop": True}

    def fails(self, response):
        raise ValueError("callback fails")


def test_every_event_reaches_a_subscribed_actor(server):
    Recorder.got = {}
    result = run_crawl(EventfulSpider, {"ACTORS": {f"{__name__}.Recorder": 1},
                                        "ITEM_PIPELINES": {f"{__name__}.DropOne": 1}},
                       base=server.url)
    assert result.finish_reason == "finished"
    assert Recorder.got == {
        "spider_opened": {"type"},
        "request_scheduled": {"type", "request"},
        "request_dropped": {"type", "request"},
        "response_downloaded": {"type", "response", "request", "slot"},
        "response_received": {"type", "response", "request", "slot"},
        "item_scraped": {"type", "item", "response"},
        "item_dropped": {"type", "item", "response", "exception"},
        "spider_error": {"type", "failure", "response"},
        "spider_idle": {"type"},
    }
