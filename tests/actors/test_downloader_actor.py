"""DownloaderActor on its own (no engine, scheduler or spider runner): ``fetch`` messages
in, one ``response_downloaded`` or ``download_failed`` out per request, to the
``reply_to`` of its fetch, with the slot's concurrency held, against a real local HTTP
server through real pycurl transfers. The engine is a recording actor."""

import threading

import pykka
import pytest

import crawlfw
from crawlfw import signals
from crawlfw.actors.downloader import DownloaderActor
from crawlfw.exceptions import DownloadError
from crawlfw.http import Request
from crawlfw.utils.test import get_crawler
from tests.support.countserver import CountingServer

WAIT_S = 30


class EngineRecorder(pykka.ThreadingActor):
    """Stands for the Engine: records every message told to it; ``done`` is set once
    ``expected`` messages came."""

    def __init__(self, expected):
        super().__init__()
        self.messages = []
        self.expected = expected
        self.done = threading.Event()

    def on_receive(self, message):
        self.messages.append(message)
        if len(self.messages) >= self.expected:
            self.done.set()

    def get_messages(self):
        return list(self.messages)


class _Spider(crawlfw.Spider):
    name = "downloader-test"


@pytest.fixture
def server():
    s = CountingServer(hold_s=0.2)
    yield s
    s.stop()


def _start(expected, settings=None):
    """A DownloaderActor for a fresh crawler, and an EngineRecorder expecting
    ``expected`` messages; returns ``(downloader, recorder_ref, recorder_proxy, crawler)``."""
    crawler = get_crawler(_Spider, {"LOG_LEVEL": "INFO", **(settings or {})})
    crawler.spider = _Spider()
    engine = EngineRecorder.start(expected)
    downloader = DownloaderActor.start(crawler, 0, engine)
    return downloader, engine, engine.proxy(), crawler


def _fetch(downloader, engine, url, slot="127.0.0.1"):
    request = Request(url)
    downloader.tell({"type": "fetch", "request": request, "slot": slot, "reply_to": engine})
    return request


def _wait(proxy):
    assert proxy.done.get().wait(WAIT_S), proxy.get_messages().get()
    return proxy.get_messages().get()


def test_each_fetch_is_answered_once_with_its_response(server):
    downloader, engine, proxy, crawler = _start(expected=5)
    reached = []
    crawler.signals.connect(lambda request, **_: reached.append(request.url),
                            signals.request_reached_downloader, weak=False)
    try:
        urls = [f"{server.url}/page/{i}" for i in range(4)] + [f"{server.url}/status/404"]
        sent = {url: _fetch(downloader, engine, url) for url in urls}
        messages = _wait(proxy)
    finally:
        downloader.stop()
        engine.stop()
    assert sorted(m["request"].url for m in messages) == sorted(urls)
    assert all(m["type"] == "response_downloaded" and m["slot"] == "127.0.0.1"
               for m in messages)
    by_url = {m["request"].url: m for m in messages}
    for url, request in sent.items():
        assert by_url[url]["request"] is request  # the very request it was sent
        response = by_url[url]["response"]
        assert response.request is request and response.url == url
    assert by_url[f"{server.url}/status/404"]["response"].status == 404
    page = by_url[f"{server.url}/page/2"]["response"]
    assert page.status == 200 and b"<title>page 2</title>" in page.body
    assert sorted(reached) == sorted(urls)  # request_reached_downloader once per fetch


def test_a_slot_holds_its_concurrency(server):
    downloader, engine, proxy, _ = _start(expected=6,
                                          settings={"CONCURRENT_REQUESTS_PER_DOMAIN": 2})
    try:
        for i in range(6):
            _fetch(downloader, engine, f"{server.url}/slow/{i}")
        messages = _wait(proxy)
    finally:
        downloader.stop()
        engine.stop()
    assert len(messages) == 6 and {m["type"] for m in messages} == {"response_downloaded"}
    assert server.max_active == 2  # two at a time in the slot, never more


def test_slots_are_served_side_by_side(server):
    # One request at a time per slot; two slots of the same downloader run together.
    downloader, engine, proxy, _ = _start(expected=4,
                                          settings={"CONCURRENT_REQUESTS_PER_DOMAIN": 1})
    try:
        for i in range(4):
            _fetch(downloader, engine, f"{server.url}/slow/{i}", slot="ab"[i % 2])
        messages = _wait(proxy)
    finally:
        downloader.stop()
        engine.stop()
    assert sorted(m["slot"] for m in messages) == ["a", "a", "b", "b"]
    assert server.max_active == 2


def test_a_refused_connection_is_a_download_failed_naming_the_url(server):
    import socket

    with socket.socket() as sock:  # bound, not listening: connections are refused
        sock.bind(("127.0.0.1", 0))
        refused = f"http://127.0.0.1:{sock.getsockname()[1]}/gone"
        downloader, engine, proxy, _ = _start(expected=2)
        try:
            _fetch(downloader, engine, refused, slot="refused")
            _fetch(downloader, engine, f"{server.url}/page/1")
            messages = _wait(proxy)
        finally:
            downloader.stop()
            engine.stop()
    by_url = {m["request"].url: m for m in messages}
    failed = by_url[refused]
    assert failed["type"] == "download_failed" and failed["slot"] == "refused"
    assert isinstance(failed["error"], DownloadError)  # ConnectionRefusedError, one of them
    assert str(failed["error"]).startswith(f"Connection refused: {refused} (curl 7:")
    assert by_url[f"{server.url}/page/1"]["type"] == "response_downloaded"  # unaffected
