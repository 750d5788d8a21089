"""crawlfw.shell: the Shell on a live in-process crawl (fetch through the engine actor),
its variables, ``-c`` code, and ``inspect_response`` inside a real crawl."""

import socket
import subprocess
import sys
import threading
import warnings

import pytest

from crawlfw import signals
from crawlfw.crawler import CrawlerRunner
from crawlfw.exceptions import CrawlfwDeprecationWarning, IgnoreRequest
from crawlfw.http import Request
from crawlfw.shell import _NOTHING, Shell, start_shell_crawler
from crawlfw.spiders import Spider
from tests.commands.conftest import crawlfw_env, write
from tests.support.wait import wait_for


class ShellSpider(Spider):
    name = "shelltest"
    start_urls = ["http://127.0.0.1:1/must-not-be-fetched"]


class IgnoreMiddleware:
    """Downloader middleware: ignores requests whose URL contains ``ignore-me``."""

    def process_request(self, request, spider):
        if "ignore-me" in request.url:
            raise IgnoreRequest("ignored by the test middleware")


@pytest.fixture
def refused_port():
    """A port on 127.0.0.1 nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def live(site_server):
    """``(crawler, shell, base_url)``: a shell crawl of ShellSpider, stopped afterwards."""
    runner = CrawlerRunner({
        "LOG_LEVEL": "DEBUG",
        "DOWNLOADER_MIDDLEWARES": {"tests.test_shell.IgnoreMiddleware": 50},
    })
    crawler = start_shell_crawler(runner, ShellSpider)
    try:
        yield crawler, Shell(crawler, code="pass"), site_server("quotes.toscrape.com").url
    finally:
        crawler.stop("shutdown")
        crawler.wait(30)
        runner.shutdown()


def test_fetch_url_updates_the_variables(live):
    crawler, shell, base = live
    shell.fetch(f"{base}/page/2")
    v = shell.vars
    assert v["response"].status == 200
    assert v["response"].url == f"{base}/page/2/"  # redirected by the middleware
    assert v["request"].url == f"{base}/page/2"
    assert v["spider"] is crawler.spider
    assert v["crawler"] is crawler and v["settings"] is crawler.settings
    assert v["fetch"] == shell.fetch
    # it went through the crawl: downloaded, counted, the spider's start URLs untouched
    stats = crawler.stats.get_stats()
    assert stats["downloader/response_status_count/301"] == 1
    assert stats["downloader/response_status_count/200"] == 1
    assert stats["response_received_count"] == 1


def test_fetch_without_redirect(live):
    _, shell, base = live
    shell.fetch(f"{base}/page/2", redirect=False)
    assert shell.vars["response"].status == 301


def test_fetch_request_keeps_its_callbacks(live):
    _, shell, base = live

    def cb(response):
        raise AssertionError("the shell must not call the request's callback")

    def eb(failure):
        raise AssertionError("the shell must not call the request's errback")

    request = Request(f"{base}/page/3/", callback=cb, errback=eb, dont_filter=True)
    shell.fetch(request)
    assert shell.vars["request"] is request
    assert shell.vars["response"].request is request
    assert shell.vars["response"].css("li.next a::attr(href)").extract_first() == "/page/4/"
    assert (request.callback, request.errback) == (cb, eb)


def test_same_request_twice(live):
    crawler, shell, base = live
    request = Request(f"{base}/page/6/")  # dont_filter is False: no dupefilter applies
    shell.fetch(request, timeout_s=30)
    shell.fetch(request, timeout_s=30)  # TimeoutError if the dupefilter dropped it
    assert shell.vars["response"].url == f"{base}/page/6/"
    assert crawler.stats.get_value("response_received_count") == 2


def test_spider_stays_open_while_idle(live):
    crawler, shell, base = live
    idle = threading.Event()
    crawler.signals.connect(lambda spider: idle.set(), signals.spider_idle, weak=False)
    shell.fetch(f"{base}/")
    assert idle.wait(30), "spider_idle was not sent after the fetch"
    assert crawler.crawling
    shell.fetch(f"{base}/page/5/")
    assert shell.vars["response"].status == 200
    assert crawler.crawling


def _due_recheck_timers():
    """The engine's idle recheck timers (``EngineActor._tell_later``'s, telling a
    ``recheck_idle`` not ``stuck``) alive and not cancelled."""
    def message(timer):
        cells = timer.function.__closure__ or ()
        return next((c.cell_contents for c in cells if isinstance(c.cell_contents, dict)), {})

    return [t for t in threading.enumerate() if isinstance(t, threading.Timer)
            and t.function.__qualname__.endswith("_tell_later.<locals>.tell")
            and message(t) == {"type": "recheck_idle"} and not t.finished.is_set()]


def test_one_idle_recheck_timer_at_a_time_none_after_the_stop(live):
    # Each fetch ends in an idle turn kept open (DontCloseSpider): the recheck timer of
    # the turn before is replaced, not left to fire spider_idle once more and to outlive
    # the engine.
    crawler, shell, base = live
    idle = threading.Semaphore(0)
    crawler.signals.connect(lambda spider: idle.release(), signals.spider_idle, weak=False)
    for page in (1, 2, 3):
        shell.fetch(f"{base}/page/{page}/")
        assert idle.acquire(timeout=30), "spider_idle was not sent after the fetch"
    # (0 for a moment while one replaces another)
    wait_for(lambda: len(_due_recheck_timers()) <= 1, "a single recheck timer", timeout_s=3)
    crawler.stop("test")
    assert crawler.wait(30)
    assert _due_recheck_timers() == []


def test_ignored_request_gives_no_response(live):
    _, shell, base = live
    shell.fetch(f"{base}/page/2/")
    shell.fetch(f"{base}/ignore-me")
    assert shell.vars["response"] is None
    assert shell.vars["request"].url == f"{base}/ignore-me"


def test_download_error_is_raised(live, refused_port):
    _, shell, _ = live
    with pytest.raises(ConnectionRefusedError):
        shell.fetch(f"http://127.0.0.1:{refused_port}/")
    assert "response" not in shell.vars


def test_fetch_after_the_crawl_stopped(live):
    crawler, shell, base = live
    crawler.stop("test")
    assert crawler.wait(30)
    with pytest.raises(RuntimeError, match="needs a running crawl"):
        shell.fetch(f"{base}/")


def test_timeout(live):
    _, shell, base = live
    # a request the downloader keeps waiting on: a listening socket that never answers
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        with pytest.raises(TimeoutError):
            shell.fetch(f"http://127.0.0.1:{sock.getsockname()[1]}/", timeout_s=0.5)


@pytest.mark.parametrize("code, value", [
    ("1 + 1", 2),
    ("x = 5", _NOTHING),
    ("x = 5; x * 2", 10),
    ("import math\nmath.floor(2.5)", 2),
    ("if True:\n    y = 3\n", _NOTHING),
    ("spider.name", "shelltest"),
    ("[n for n in range(3)]", [0, 1, 2]),
])
def test_run_code(live, code, value):
    _, shell, _ = live
    shell.populate_vars()
    assert shell.run_code(code) == value


def test_run_code_errors_propagate(live):
    _, shell, _ = live
    shell.populate_vars()
    with pytest.raises(NameError):
        shell.run_code("undefined_name")
    with pytest.raises(SyntaxError):
        shell.run_code("1 +")


def test_help_lists_objects_and_shortcuts(live):
    _, shell, base = live
    shell.code = None
    shell.fetch(f"{base}/")
    help_text = shell.get_help()
    assert help_text == shell.vars["banner"]
    lines = help_text.splitlines()
    assert all(line.startswith("[s] ") for line in lines)
    assert f"[s]   response   <200 {base}/>" in lines
    assert f"[s]   request    <GET {base}/>" in lines
    assert any(line.startswith("[s]   fetch(url[, redirect=True])") for line in lines)
    assert "[s]   view(response)    View response in a browser" in lines


def test_no_fetch_off_the_main_thread(live):
    crawler, _, _ = live
    shells = []
    thread = threading.Thread(target=lambda: shells.append(Shell(crawler, code="pass")))
    thread.start()
    thread.join(10)
    shell = shells[0]
    shell.populate_vars()
    assert "fetch" not in shell.vars
    assert "fetch(" not in shell.get_help()


def test_update_vars_hook(live):
    crawler, _, _ = live
    shell = Shell(crawler, update_vars=lambda v: v.update(extra=42), code="extra")
    shell.populate_vars()
    assert shell.vars["extra"] == 42


def test_sel_is_deprecated(live):
    _, shell, base = live
    shell.fetch(f"{base}/")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        title = shell.vars["sel"].css("title::text").extract_first()
    assert title == "Quotes to Scrape"
    assert any(issubclass(w.category, CrawlfwDeprecationWarning) for w in caught)


@pytest.mark.slow
def test_inspect_response_in_a_callback(site_server, tmp_path):
    """A real crawl whose callback opens the shell: it reads the console's input from
    stdin (a pipe: the standard console), then the crawl goes on."""
    base = site_server("quotes.toscrape.com").url
    spider = write(tmp_path / "insp.py", f"""
        import crawlfw
        from crawlfw.shell import inspect_response

        class Insp(crawlfw.Spider):
            name = "insp"
            start_urls = ["{base}/page/7/"]

            def parse(self, response):
                inspect_response(response, self)
                yield {{"after": response.url}}
    """)
    result = subprocess.run(
        [sys.executable, "-m", "crawlfw.cmdline", "runspider", spider, "-o", "-",
         "-t", "jsonlines", "-L", "INFO"],
        input="print('INSPECT', response.status, spider.name, 'fetch' in dir())\n",
        capture_output=True, text=True, timeout=90, cwd=tmp_path, env=crawlfw_env())
    assert result.returncode == 0, result.stderr
    assert "INSPECT 200 insp False" in result.stdout
    assert f'{{"after": "{base}/page/7/"}}' in result.stdout
    assert "[s] Available crawlfw objects:" in result.stderr
    assert "'finish_reason': 'finished'" in result.stderr


def test_exported_names():
    import crawlfw.shell

    assert sorted(crawlfw.shell.__all__) == sorted(
        ["Shell", "AttachedShell", "RemoteStats", "CodeError", "inspect_response",
         "start_shell_crawler"])
    for name in crawlfw.shell.__all__:
        assert hasattr(crawlfw.shell, name)
