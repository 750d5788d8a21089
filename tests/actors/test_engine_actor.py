"""EngineActor on its own: the Scheduler, SpiderRunner, Downloader and Supervisor are
recording actors, and the test plays their parts by telling the engine their answers.
It checks the credit the engine grants (never more than its download capacity), where
it sends each request and response, and its idle detection and close."""

import threading

import pykka
import pytest

import crawlfw
from crawlfw import signals
from crawlfw.actors.downloader import DownloaderPool
from crawlfw.actors.engine import EngineActor
from crawlfw.http import HtmlResponse, Request
from crawlfw.utils.test import get_crawler
from tests.support.wait import wait_for

WAIT_S = 30


class Log:
    """The messages one recorder got, in arrival order (read from the test's thread).

    ``pending``: for the scheduler's recorder, None (``check_idle`` is left for the test
    to answer) or the number of requests it says it holds when it answers each
    ``check_idle`` at once, as the real Scheduler does.
    """

    def __init__(self):
        self.messages = []
        self.lock = threading.Lock()
        self.pending = None

    def snapshot(self):
        with self.lock:
            return list(self.messages)


class Recorder(pykka.ThreadingActor):
    """Stands for one of the engine's peers: records every message told to it in ``log``."""

    def __init__(self, log):
        super().__init__()
        self.log = log

    def on_receive(self, message):
        with self.log.lock:
            self.log.messages.append(message)
            pending = self.log.pending
        if message["type"] == "check_idle" and pending is not None:
            message["reply_to"].tell({"type": "idle_checked", "token": message["token"],
                                      "pending": pending})


class _Spider(crawlfw.Spider):
    name = "engine-test"


class Peers:
    """The engine under test and its recorded peers (``scheduler``, ``runner``,
    ``downloader``, ``supervisor``: each ``(ref, Log)``)."""

    def __init__(self, max_concurrency=2):
        self.crawler = get_crawler(_Spider, {"LOG_LEVEL": "INFO"})
        self.crawler.spider = _Spider()
        self.recorders = {}
        for name in ("scheduler", "runner", "downloader", "supervisor"):
            log = Log()
            self.recorders[name] = (Recorder.start(log), log)
        pool = DownloaderPool(1)
        pool.refs[0] = self.ref("downloader")
        self.engine = EngineActor.start(self.crawler, self.ref("scheduler"), self.ref("runner"),
                                        pool, max_concurrency=max_concurrency,
                                        crawl_id="engine-test-1",
                                        supervisor=self.ref("supervisor"))

    def log(self, name) -> Log:
        return self.recorders[name][1]

    def ref(self, name):
        return self.recorders[name][0]

    def messages(self, name, kind=None):
        return [m for m in self.recorders[name][1].snapshot()
                if kind is None or m["type"] == kind]

    def wait(self, name, kind, count=1):
        """Wait until ``name`` got ``count`` messages of type ``kind``; return them all."""
        return wait_for(lambda: len(self.messages(name, kind)) >= count
                        and self.messages(name, kind),
                        f"{count} {kind} message(s) to the {name}", timeout_s=WAIT_S)

    def stop(self):
        self.engine.stop()
        for ref, _ in self.recorders.values():
            ref.stop()


@pytest.fixture
def peers():
    p = Peers()
    yield p
    p.stop()


def _response(request):
    return HtmlResponse(request.url, body=b"<html><title>t</title></html>", request=request)


def test_credit_fetches_responses_and_close_when_idle(peers):
    engine = peers.engine
    received, idle = [], []
    peers.crawler.signals.connect(lambda response, **_: received.append(response.url),
                                  signals.response_received, weak=False)
    peers.crawler.signals.connect(lambda **_: idle.append(1), signals.spider_idle,
                                  weak=False)
    peers.log("scheduler").pending = 3  # it holds the 3 start requests
    engine.tell({"type": "start_engine", "spider_runner": peers.ref("runner")})
    # credit for its whole capacity, and start requests wanted while it is unused
    (pull,) = peers.wait("scheduler", "pull_requests")
    assert pull["count"] == 2 and pull["reply_to"] == engine
    peers.wait("runner", "pull_start_requests")
    engine.tell({"type": "start_requests_pulled", "count": 3, "exhausted": True})

    requests = [Request(f"http://example.com/{i}") for i in range(2)]
    peers.log("scheduler").pending = 1
    engine.tell({"type": "requests_dequeued", "requests": requests, "pending": 1})
    fetches = peers.wait("downloader", "fetch", 2)
    assert [f["request"] for f in fetches] == requests
    assert {f["slot"] for f in fetches} == {"example.com"}
    assert all(f["reply_to"] == engine for f in fetches)
    # capacity used up: no more credit while both transfers are in flight
    status = engine.ask({"type": "get_status"}, timeout=WAIT_S)
    assert status["downloading"] == 2 and status["credit"] == 0
    assert len(peers.messages("scheduler", "pull_requests")) == 1

    # one response: it goes to the spider runner, and its slot is free again
    engine.tell({"type": "response_downloaded", "request": requests[0],
                 "response": _response(requests[0]), "slot": "example.com"})
    (scrape,) = peers.wait("runner", "scrape_response")
    assert scrape["request"] is requests[0] and scrape["response"].url == requests[0].url
    assert received == [requests[0].url]
    engine.tell({"type": "response_scraped", "request": requests[0], "items": 0,
                 "requests": 0, "size": len(scrape["response"].body)})
    pulls = peers.wait("scheduler", "pull_requests", 2)
    assert pulls[1]["count"] == 1

    third = Request("http://example.com/2")
    peers.log("scheduler").pending = 0
    engine.tell({"type": "requests_dequeued", "requests": [third], "pending": 0})
    peers.wait("downloader", "fetch", 3)
    assert not peers.messages("supervisor")  # responses outstanding: not idle
    for request in (requests[1], third):
        engine.tell({"type": "response_downloaded", "request": request,
                     "response": _response(request), "slot": "example.com"})
        engine.tell({"type": "response_scraped", "request": request, "items": 0,
                     "requests": 0, "size": 30})
    # nothing outstanding and the scheduler empty: spider_idle fires, nobody keeps the
    # spider open, the engine checks once more and asks the supervisor to close it
    (closing,) = peers.wait("supervisor", "spider_closing")
    assert closing == {"type": "spider_closing", "crawl_id": "engine-test-1",
                       "reason": "finished"}
    assert idle == [1]
    assert sorted(received) == sorted(r.url for r in (*requests, third))
    assert len(peers.messages("downloader", "fetch")) == 3  # one fetch per request


def test_an_idle_answer_overtaken_by_new_work_does_not_close(peers):
    engine = peers.engine
    engine.tell({"type": "start_engine", "spider_runner": peers.ref("runner")})
    peers.wait("runner", "pull_start_requests")
    engine.tell({"type": "start_requests_pulled", "count": 0, "exhausted": True})
    check = peers.wait("scheduler", "check_idle")[-1]
    # before the scheduler's answer comes, a request is dequeued: the answer is stale
    request = Request("http://example.com/late")
    engine.tell({"type": "requests_dequeued", "requests": [request], "pending": 0})
    engine.tell({"type": "idle_checked", "token": check["token"], "pending": 0})
    peers.wait("downloader", "fetch")
    status = engine.ask({"type": "get_status"}, timeout=WAIT_S)  # both handled by now
    assert status["downloading"] == 1 and not status["closing"]
    assert not peers.messages("supervisor", "spider_closing")


def test_items_added_with_no_pipeline_named_are_kept_and_the_engine_lives_on(peers):
    # start_engine may name no pipeline (pipeline is NotRequired): a user actor's
    # add_items is then kept for later, not sent to None (which killed the engine).
    engine = peers.engine
    engine.tell({"type": "start_engine", "spider_runner": peers.ref("runner")})
    peers.wait("runner", "pull_start_requests")
    engine.tell({"type": "add_items", "items": [{"n": 1}]})
    status = engine.ask({"type": "get_status"}, timeout=WAIT_S)
    assert status["running"] and status["in_pipeline"] == 0
    assert not peers.messages("supervisor", "actor_failed")


# --- downloads outside the frontier (``download``) and parked requests ------------------


def test_download_is_fetched_and_answered_to_its_sender_not_the_spider(peers):
    engine = peers.engine
    answers = Log()
    sender = Recorder.start(answers)
    try:
        engine.tell({"type": "start_engine", "spider_runner": peers.ref("runner")})
        request = Request("http://media.example/a.jpg")
        engine.tell({"type": "download", "request": request, "key": 7, "reply_to": sender})
        [fetch] = peers.wait("downloader", "fetch")
        assert fetch["request"] is request and fetch["slot"] == "media.example"
        response = _response(request)
        engine.tell({"type": "response_downloaded", "request": request, "response": response,
                     "slot": fetch["slot"]})
        [done] = wait_for(lambda: answers.snapshot(), "the download_done")
        assert done == {"type": "download_done", "key": 7, "response": response}
        assert peers.messages("runner", "scrape_response") == []
        assert all(request not in m.get("requests", ())
                   for m in peers.messages("scheduler", "enqueue_requests"))
    finally:
        sender.stop()


def test_closing_cancels_the_downloads_in_flight(peers):
    from crawlfw.exceptions import DownloadCancelled

    engine = peers.engine
    answers = Log()
    sender = Recorder.start(answers)
    try:
        engine.tell({"type": "start_engine", "spider_runner": peers.ref("runner")})
        request = Request("http://media.example/slow.jpg")
        engine.tell({"type": "download", "request": request, "key": 1, "reply_to": sender})
        peers.wait("downloader", "fetch")
        engine.tell({"type": "close_spider", "reason": "shutdown"})
        [done] = wait_for(lambda: answers.snapshot(), "the download_done")
        assert done["key"] == 1 and isinstance(done["error"], DownloadCancelled)
        # not given back to the scheduler (it never came from there)
        assert all(request not in m["requests"]
                   for m in peers.messages("scheduler", "release_requests"))
    finally:
        sender.stop()


def test_one_request_object_downloaded_twice_goes_once_at_a_time(peers):
    """Two ``download``s of one Request object (an ``asyncio.gather``, two pipelines):
    the second is fetched when the first is answered (the downloaders key a transfer by
    its object), and each sender gets its own answer under its own key."""
    engine = peers.engine
    answers = Log()
    sender = Recorder.start(answers)
    try:
        engine.tell({"type": "start_engine", "spider_runner": peers.ref("runner")})
        request = Request("http://media.example/twice.jpg")
        engine.tell({"type": "download", "request": request, "key": 1, "reply_to": sender})
        engine.tell({"type": "download", "request": request, "key": 2, "reply_to": sender})
        peers.wait("downloader", "fetch")
        assert peers.engine.ask({"type": "get_status"}, timeout=WAIT_S)["downloading"] == 1
        first = _response(request)
        engine.tell({"type": "response_downloaded", "request": request, "response": first,
                     "slot": "media.example"})
        [_, fetch] = peers.wait("downloader", "fetch", 2)
        assert fetch["request"] is request
        second = _response(request)
        engine.tell({"type": "response_downloaded", "request": request, "response": second,
                     "slot": "media.example"})
        done = wait_for(lambda: len(answers.snapshot()) == 2 and answers.snapshot(),
                        "two download_done")
        assert done == [{"type": "download_done", "key": 1, "response": first},
                        {"type": "download_done", "key": 2, "response": second}]
        assert engine.is_alive()
    finally:
        sender.stop()


def test_a_redirected_download_frees_its_request_for_the_next_and_close_answers_all(peers):
    from crawlfw.exceptions import DownloadCancelled

    engine = peers.engine
    answers = Log()
    sender = Recorder.start(answers)
    try:
        engine.tell({"type": "start_engine", "spider_runner": peers.ref("runner")})
        request = Request("http://media.example/moved")
        for key in (1, 2, 3):
            engine.tell({"type": "download", "request": request, "key": key,
                         "reply_to": sender})
        peers.wait("downloader", "fetch")
        moved = request.__class__("http://media.example/new", meta={"redirect_times": 1})
        redirect = HtmlResponse(request.url, status=301, request=request,
                                headers={"Location": moved.url})
        engine.tell({"type": "response_downloaded", "request": request,
                     "response": redirect, "slot": "media.example"})
        # the redirect goes on for key 1; the object itself is downloaded for key 2
        fetches = peers.wait("downloader", "fetch", 3)
        assert [f["request"].url for f in fetches[1:]] == [
            "http://media.example/new", "http://media.example/moved"]
        engine.tell({"type": "close_spider", "reason": "shutdown"})
        done = wait_for(lambda: len(answers.snapshot()) == 3 and answers.snapshot(),
                        "three download_done")
        assert sorted(d["key"] for d in done) == [1, 2, 3]
        assert all(isinstance(d["error"], DownloadCancelled) for d in done)
        assert engine.is_alive()
    finally:
        sender.stop()


class ParkingMiddleware:
    """Parks every request it gets, noting the call."""

    calls = []

    def process_request(self, request, spider):
        from crawlfw.core.flow.downloadermw import RequestParked

        self.calls.append(("park", request.url))
        raise RequestParked("waiting")


class AfterParkingMiddleware:
    """Runs after ParkingMiddleware: notes the requests it sees."""

    def process_request(self, request, spider):
        ParkingMiddleware.calls.append(("after", request.url))


def test_a_parked_request_waits_in_the_engine_and_goes_on_after_its_middleware():
    ParkingMiddleware.calls = []
    peers = Peers()
    peers.engine.stop()
    peers.crawler = get_crawler(_Spider, {"LOG_LEVEL": "INFO", "DOWNLOADER_MIDDLEWARES": {
        f"{__name__}.ParkingMiddleware": 1, f"{__name__}.AfterParkingMiddleware": 2}})
    peers.crawler.spider = _Spider()
    pool = DownloaderPool(1)
    pool.refs[0] = peers.ref("downloader")
    peers.engine = EngineActor.start(peers.crawler, peers.ref("scheduler"),
                                     peers.ref("runner"), pool, max_concurrency=2,
                                     crawl_id="engine-test-1",
                                     supervisor=peers.ref("supervisor"))
    try:
        engine = peers.engine
        engine.tell({"type": "start_engine", "spider_runner": peers.ref("runner")})
        request = Request("http://parked.example/x")
        request._lease = 42
        engine.tell({"type": "requests_dequeued", "requests": [request], "pending": 0})
        wait_for(lambda: ParkingMiddleware.calls, "the request to be parked")
        assert peers.messages("downloader", "fetch") == []
        engine.tell({"type": "resume_parked", "request": request})
        [fetch] = peers.wait("downloader", "fetch")
        assert fetch["request"] is request and request._lease == 42  # its lease kept
        assert ParkingMiddleware.calls == [("park", request.url), ("after", request.url)]
        # it never went back to the scheduler
        assert peers.messages("scheduler", "enqueue_requests") == []
    finally:
        peers.stop()


def test_a_burst_grants_its_credit_in_one_pull_requests():
    """Messages that wait in the engine's inbox together are handled as a burst: the
    credit each scraped response frees goes to the Scheduler in one ``pull_requests``
    (merge_pull_requests), the same credit in total as one message per response."""
    peers = Peers(max_concurrency=4)
    try:
        engine = peers.engine
        first_seen, go_on = threading.Event(), threading.Event()

        def hold_the_first(response, **_):
            if response.url.endswith("/0"):
                first_seen.set()
                assert go_on.wait(WAIT_S)

        peers.crawler.signals.connect(hold_the_first, signals.response_received, weak=False)
        peers.log("scheduler").pending = 4
        engine.tell({"type": "start_engine", "spider_runner": peers.ref("runner")})
        (pull,) = peers.wait("scheduler", "pull_requests")
        assert pull["count"] == 4
        engine.tell({"type": "start_requests_pulled", "count": 0, "exhausted": True})
        requests = [Request(f"http://example.com/{i}") for i in range(4)]
        engine.tell({"type": "requests_dequeued", "requests": requests, "pending": 4})
        peers.wait("downloader", "fetch", 4)
        for request in requests:  # the first one's handler waits: the rest queue up
            engine.tell({"type": "response_downloaded", "request": request,
                         "response": _response(request), "slot": "example.com"})
            if request is requests[0]:
                assert first_seen.wait(WAIT_S)
            # each scraped response frees one transfer's credit (one pull_requests each
            # when handled one at a time)
            engine.tell({"type": "response_scraped", "request": request, "items": 0,
                         "requests": 0, "size": len(_response(request).body)})
        go_on.set()
        status = wait_for(lambda: (s := engine.ask({"type": "get_status"}, timeout=WAIT_S))
                          and s["credit"] == 4 and s, "the credit granted", timeout_s=WAIT_S)
        assert status["downloading"] == 0 and status["in_spider"] == 0
        pulls = peers.wait("scheduler", "pull_requests", 2)
        assert [p["count"] for p in pulls] == [4, 4]
    finally:
        peers.stop()
