"""The dashboard page in a real headless Chromium (issue 33): real crawls of a local slow
site (``crawlfw runspider`` subprocesses), the page opened at the address the crawl or
``crawlfw dashboard`` prints, read and clicked through selenium (tests/support/browser.py).

Skipped without Chromium, chromedriver or selenium, except under CI=true (then it fails).
Each test saves a screenshot in its tmp_path, and in ``$CRAWLFW_SCREENSHOT_DIR`` when set.
"""

import functools
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.support.browser import Browser, require_browser
from tests.support.countserver import CountingServer
from tests.support.live import SLOW_SPIDER, WAIT_S, LiveCrawl
from tests.support.wait import wait_for

pytestmark = [
    pytest.mark.slow,
    pytest.mark.xdist_group("dashboard_browser"),  # one Chromium for the module
    pytest.mark.skipif(not sys.platform.startswith("linux"),
                       reason="control endpoints on Unix sockets as on Linux"),
]

#: :data:`~tests.support.live.SLOW_SPIDER` whose page 3 fails with markup in its message.
HOSTILE_SPIDER = SLOW_SPIDER.replace(
    "    def parse(self, response):\n",
    "    def parse(self, response):\n"
    "        if response.url.endswith(\"/slow/3\"):\n"
    "            raise ValueError('<img src=x onerror=\"window.pwned=1\"> is no title')\n")
assert HOSTILE_SPIDER != SLOW_SPIDER

#: The page's files.
STATIC = Path(__file__).resolve().parents[1] / "crawlfw" / "dashboard" / "static"

#: The address a dashboard prints and logs.
URL = re.compile(r"http://127\.0\.0\.1:(\d+)/\?token=([A-Za-z0-9_-]+)")


@pytest.fixture(scope="module")
def browser():
    require_browser()
    b = Browser()
    yield b
    b.quit()


@pytest.fixture
def server():
    s = CountingServer(hold_s=0.2)
    yield s
    s.stop()


@pytest.fixture
def crawls(runtime, server, tmp_path):
    started = []

    def start(name="crawl", pages=400, args=(), spider=SLOW_SPIDER):
        crawl = LiveCrawl(runtime, tmp_path / name, server.url, pages=pages, args=args,
                          name=name, spider=spider)
        started.append(crawl)
        return crawl

    yield start
    for crawl in started:
        crawl.kill()


def _screenshot(browser, tmp_path, name):
    path = browser.screenshot(tmp_path / name)
    assert path.stat().st_size > 10_000  # a real picture, not a blank one
    directory = os.environ.get("CRAWLFW_SCREENSHOT_DIR")
    if directory:
        os.makedirs(directory, exist_ok=True)
        shutil.copy(path, os.path.join(directory, name))
    return path


def _status(url, method="GET", headers=None) -> int:
    request = urllib.request.Request(url, method=method, headers=headers or {},
                                     data=b"" if method == "POST" else None)
    try:
        with urllib.request.urlopen(request, timeout=WAIT_S) as response:
            return response.status
    except urllib.error.HTTPError as e:
        return e.code


def _int(text) -> int:
    """A count as the page writes it ("1,234"), -1 for none ("–")."""
    digits = (text or "").replace(",", "")
    return int(digits) if digits.isdigit() else -1


def _page(browser):
    """What the page shows now: {"view", "samples", "pages", "state", "crawls" (list rows'
    ids), "canvases", "points" (the throughput chart's)}."""
    return browser.js("""
        const b = document.body.dataset;
        const text = (id) => { const e = document.getElementById(id); return e ? e.textContent : null; };
        return {view: b.view || null, samples: Number(b.samples || 0),
                pages: text("pages-total"), state: text("crawl-state"),
                crawls: [...document.querySelectorAll("#crawl-list tr[data-crawl-id]")]
                    .map((r) => r.dataset.crawlId),
                canvases: document.querySelectorAll("#crawl-view .chart canvas").length,
                points: Number(document.getElementById("chart-throughput").dataset.points || 0)};
    """)


class _Dashboard:
    """``crawlfw dashboard`` in the background; :attr:`url` is the address it printed."""

    def __init__(self, runtime, tmp_path):
        self.out = tmp_path / "dashboard.out"
        with open(self.out, "wb") as stdout:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "crawlfw.cmdline", "dashboard"], env=runtime.env(),
                cwd=str(runtime.path), stdin=subprocess.DEVNULL, stdout=stdout,
                stderr=subprocess.STDOUT)
        self.url = wait_for(lambda: URL.search(self.out.read_text(errors="replace")),
                            "crawlfw dashboard's address", timeout_s=WAIT_S,
                            alive=self.proc).group(0)

    def stop(self) -> int:
        """End it as Ctrl-C would; return its exit status."""
        if self.proc.poll() is None:
            self.proc.terminate()
        return self.proc.wait(WAIT_S)


def _state(runtime, crawl) -> str:
    return runtime.cli_json("status", crawl.pid)["state"]


def test_the_page_follows_a_crawl_and_pauses_resumes_and_stops_it(browser, runtime, crawls,
                                                                  tmp_path):
    crawl = crawls(args=["-s", "DASHBOARD_ENABLED=True"], spider=HOSTILE_SPIDER)
    match = wait_for(lambda: URL.search(crawl.log_text()), "the dashboard's address logged",
                     timeout_s=WAIT_S, alive=crawl.proc)
    url, port, token = match.group(0), match.group(1), match.group(2)
    base = f"http://127.0.0.1:{port}"
    crawl.wait_listed(min_pages=2)

    # Without the token (or with another one), nothing is served and nothing changes.
    assert _status(f"{base}/") == 403
    assert _status(f"{base}/?token=x{token}") == 403
    assert _status(f"{base}/api/crawls") == 403
    assert _status(f"{base}/static/dashboard.js") == 403
    assert _status(f"{base}/api/crawls/{crawl.pid}-slow-1/pause", "POST") == 403
    assert _status(f"{base}/api/crawls", headers={"Authorization": f"Bearer {token}"}) == 200
    assert _state(runtime, crawl) == "running"

    browser.console()  # what an earlier test left
    browser.open(url)
    # One crawl: the page opens its view at once, its history first, then live samples.
    first = wait_for(lambda: (p := _page(browser))["view"] == "crawl" and p["points"] >= 2 and p,
                     "the crawl's view with its samples", timeout_s=WAIT_S)
    assert first["canvases"] >= 7  # throughput, status, errors, latency, frontier, hosts, memory
    assert browser.text("crawl-title") == "slow"
    later = wait_for(lambda: (p := _page(browser))["points"] >= first["points"] + 2
                     and _int(p["pages"]) > _int(first["pages"]) and p,
                     "the charts and the pages counter advancing", timeout_s=WAIT_S,
                     alive=crawl.proc)
    assert _int(later["pages"]) > _int(first["pages"]) >= 0
    assert later["samples"] >= later["points"] > first["points"] >= 2

    # The spider's error, traceback and all, as text: its markup is not markup.
    error = wait_for(lambda: browser.js("""
        const li = document.querySelector("#error-list li");
        return li && {kind: li.querySelector(".kind").textContent,
                      message: li.querySelector(".message").textContent,
                      traceback: li.querySelector("pre") && li.querySelector("pre").textContent,
                      elements: document.querySelectorAll("#error-list img").length,
                      pwned: window.pwned === undefined ? null : window.pwned};
    """), "the spider's error listed", timeout_s=WAIT_S)
    assert error["kind"] == "ValueError"
    assert error["elements"] == 0 and error["pwned"] is None
    assert '<img src=x onerror="window.pwned=1"> is no title' in error["traceback"]
    assert "Traceback (most recent call last)" in error["traceback"]

    browser.click("btn-pause")
    wait_for(lambda: _state(runtime, crawl) == "paused", "the crawl paused", timeout_s=WAIT_S,
             poll_s=0.2, alive=crawl.proc)
    wait_for(lambda: _page(browser)["state"] == "paused", "the page showing it paused",
             timeout_s=WAIT_S)
    assert browser.js("return [document.getElementById('btn-pause').disabled,"
                      " document.getElementById('btn-resume').disabled]") == [True, False]

    browser.click("btn-resume")
    wait_for(lambda: _state(runtime, crawl) == "running", "the crawl running again",
             timeout_s=WAIT_S, poll_s=0.2, alive=crawl.proc)
    resumed = wait_for(lambda: (p := _page(browser))["state"] == "running" and p,
                       "the page showing it running", timeout_s=WAIT_S)
    wait_for(lambda: _int(_page(browser)["pages"]) > _int(resumed["pages"]),
             "pages counted again after resume", timeout_s=WAIT_S, alive=crawl.proc)

    _screenshot(browser, tmp_path, "dashboard-crawl.png")
    assert browser.errors() == []

    browser.click("btn-stop")
    alert = browser.driver.switch_to.alert
    assert "Stop crawl" in alert.text
    alert.accept()
    assert crawl.wait(WAIT_S) == 0, crawl.log_text()
    assert "'finish_reason': 'shutdown'" in crawl.log_text()
    assert 2 <= len(crawl.items()) < 399


def test_crawlfw_dashboard_lists_two_crawls_each_with_its_view(browser, runtime, crawls,
                                                               tmp_path):
    one = crawls("one")
    two = crawls("two")
    one.wait_listed(min_pages=1)
    two.wait_listed(min_pages=1)
    dashboard = _Dashboard(runtime, tmp_path)
    try:
        url = dashboard.url
        browser.console()
        browser.open(url)
        ids = {f"{one.pid}-slow-1", f"{two.pid}-slow-1"}
        wait_for(lambda: (p := _page(browser))["view"] == "list" and set(p["crawls"]) == ids,
                 "the list of both crawls", timeout_s=WAIT_S)
        _screenshot(browser, tmp_path, "dashboard-list.png")

        # Each opens its own view.
        browser.js(f"document.querySelector('tr[data-crawl-id=\"{two.pid}-slow-1\"] a').click()")
        wait_for(lambda: (p := _page(browser))["view"] == "crawl" and p["samples"] >= 1,
                 "the second crawl's view", timeout_s=WAIT_S)
        assert browser.js("return location.hash") == f"#/crawl/{two.pid}-slow-1"
        assert browser.text("crawl-title") == "slow"
        browser.driver.back()
        wait_for(lambda: (p := _page(browser))["view"] == "list" and set(p["crawls"]) == ids,
                 "the list again", timeout_s=WAIT_S)
        assert browser.errors() == []
    finally:
        status = dashboard.stop()
    assert status == 0, dashboard.out.read_text(errors="replace")


def test_a_shared_crawl_shows_each_worker_and_the_whole(browser, runtime, crawls, redis_server,
                                                        tmp_path):
    shared = ("-s", f"FRONTIER_URL={redis_server.url}", "-s", "FRONTIER_KEY=dashboard-test",
              "-s", "FRONTIER_LEASE_TIMEOUT=5")
    workers = [crawls(name, pages=1200, args=shared) for name in ("w1", "w2")]
    wait_for(lambda: all(len((w.wait_listed(min_pages=1).get("shared") or {}).get("workers", []))
                         == 2 for w in workers), "both workers in the shared figures",
             timeout_s=WAIT_S, poll_s=0.2)
    dashboard = _Dashboard(runtime, tmp_path)
    try:
        browser.console()
        browser.open(dashboard.url)
        ids = {f"{w.pid}-slow-1" for w in workers}
        # One row for the whole crawl, then each worker: a process here, with its view.
        rows = wait_for(lambda: browser.js("""
            const rows = [...document.querySelectorAll("#crawl-list tbody tr")];
            return rows.length === 3 && rows.map((r) => ({
                shared: r.classList.contains("shared-row"), id: r.dataset.crawlId || null,
                cells: [...r.cells].map((c) => c.textContent)}));
        """), "the shared crawl and its two workers listed", timeout_s=WAIT_S)
        assert [r["shared"] for r in rows] == [True, False, False]
        assert "2 workers combined" in rows[0]["cells"][0]
        assert {r["id"] for r in rows[1:]} == ids
        # The workers' pages as the shared frontier last published them, and their sum.
        assert _int(rows[0]["cells"][4]) == sum(_int(r["cells"][4]) for r in rows[1:]) >= 0
        _screenshot(browser, tmp_path, "dashboard-shared.png")

        # The whole crawl's view: charts over time of every worker's published figures.
        browser.js("document.querySelector('#crawl-list tr.shared-row a').click()")
        whole = wait_for(lambda: browser.js("""
            const points = (id) => Number(document.getElementById(id).dataset.points || 0);
            const series = document.querySelectorAll("#chart-shared-workers .u-legend .u-series");
            const rows = [...document.querySelectorAll("#workers-table tbody tr")];
            return document.body.dataset.view === "shared" && points("chart-shared-throughput") >= 3
                && series.length === 3 && rows.length === 2 && {
                    hash: location.hash, title: document.getElementById("crawl-title").textContent,
                    throughput: points("chart-shared-throughput"), queue: points("chart-shared-queue"),
                    workers: [...series].slice(1).map((s) => s.textContent),
                    rows: rows.map((r) => ({worker: r.dataset.worker,
                                            here: r.cells[5].querySelector("a")
                                                && r.cells[5].querySelector("a").getAttribute("href")})),
                    own: [...document.querySelectorAll("#crawl-view .own")].filter(
                        (e) => e.offsetParent !== null).length,
                    canvases: document.querySelectorAll("#shared-panels .chart canvas").length};
        """), "the whole crawl's charts with both workers", timeout_s=WAIT_S)
        assert whole["hash"].startswith("#/shared/") and whole["title"] == "slow: whole crawl"
        assert whole["queue"] == whole["throughput"] >= 3 and whole["canvases"] == 3
        assert whole["own"] == 0  # the process's own figures and buttons are not shown
        names = {f"{socket.gethostname()}-{w.pid}" for w in workers}
        assert {r["worker"] for r in whole["rows"]} == names
        assert all(any(n in text for n in names) for text in whole["workers"])
        # each worker runs here: a link to its own view
        assert sorted(r["here"] for r in whole["rows"]) == sorted(f"#/crawl/{i}" for i in ids)
        # the rates drawn once the workers published twice (every 2 s): the whole crawl's
        # pages/s and items/s, and each worker's pages/s, 3 points at least of each
        rates = wait_for(lambda: browser.js("""
            const values = [...document.querySelectorAll(
                "#chart-shared-throughput .u-legend .u-series:not(:first-child) .u-value,"
                + " #chart-shared-workers .u-legend .u-series:not(:first-child) .u-value")]
                .map((v) => v.textContent);
            const drawn = (id) => Number(document.getElementById(id).dataset.values || 0);
            return values.length === 4 && values.every((v) => /^[0-9]/.test(v))
                && drawn("chart-shared-throughput") >= 2 * 3 && drawn("chart-shared-workers") >= 2 * 3
                && /^[0-9]/.test(document.getElementById("whole-pages-rate").textContent)
                && values;
        """), "the whole crawl's rates drawn", timeout_s=WAIT_S)
        assert len(rates) == 4  # pages/s, items/s, and each worker's pages/s
        assert _int(browser.text("whole-pages")) > 0 and browser.text("whole-workers") == "2"
        _screenshot(browser, tmp_path, "dashboard-shared-whole.png")
        browser.driver.back()
        wait_for(lambda: _page(browser)["view"] == "list", "the list again", timeout_s=WAIT_S)

        browser.js(f"document.querySelector('tr[data-crawl-id=\"{workers[0].pid}-slow-1\"] a')"
                   ".click()")
        # (the first samples may be older than the second worker's joining)
        wait_for(lambda: browser.js("return !document.getElementById('shared-tile').hidden")
                 and "2 workers" in browser.text("shared-sub"),
                 "the whole crawl's figures in the worker's view", timeout_s=WAIT_S)
        assert browser.errors() == []

        # From a worker's view to the whole crawl's, read from that worker; when it ends,
        # the view reads the whole crawl from the other worker here.
        browser.js("document.getElementById('shared-link').click()")
        wait_for(lambda: browser.js("return location.hash") == f"#/shared/{workers[0].pid}-slow-1"
                 and int(browser.js("return document.getElementById('chart-shared-queue')"
                                    ".dataset.points || 0")) >= 2,
                 "the whole crawl's view from the worker's", timeout_s=WAIT_S)
        browser.console()  # (the killed worker's stream may log a failed request)
        browser.js("""window.notices = []; new MutationObserver(() => window.notices.push(
            document.getElementById("notice").textContent)).observe(
            document.getElementById("notice"), {childList: true, characterData: true, subtree: true});""")
        workers[0].kill()
        wait_for(lambda: browser.js("return location.hash") == f"#/shared/{workers[1].pid}-slow-1"
                 and _page(browser)["view"] == "shared"
                 and int(browser.js("return document.getElementById('chart-shared-queue')"
                                    ".dataset.points || 0")) >= 2,
                 "the whole crawl read from the other worker", timeout_s=WAIT_S)
        assert f"Worker {workers[0].pid}-slow-1 has ended: the whole crawl is now read from " \
            f"{workers[1].pid}-slow-1." in browser.js("return window.notices")
    finally:
        status = dashboard.stop()
    assert status == 0, dashboard.out.read_text(errors="replace")


def test_the_whole_view_pauses_resumes_and_stops_every_worker(browser, runtime, crawls,
                                                              redis_server, tmp_path):
    """The whole view's buttons: two workers here (reached over their control endpoints)
    and one the dashboard cannot reach (no control endpoint, as on another machine: it
    follows the command written in Redis)."""
    def shared(wid, *more):
        return ("-s", f"FRONTIER_URL={redis_server.url}", "-s", "FRONTIER_KEY=whole-view",
                "-s", f"FRONTIER_WORKER={wid}", "-s", "FRONTIER_LEASE_TIMEOUT=5", *more)

    w1, w2 = (crawls(wid, pages=3000, args=shared(wid)) for wid in ("w1", "w2"))
    away = crawls("away", pages=3000, args=shared("away", "-s", "CONTROL_ENDPOINT=False"))
    wait_for(lambda: {w["worker"] for w in (w1.wait_listed(min_pages=1).get("shared") or {})
                      .get("workers", []) if w["pages"]} == {"w1", "w2", "away"},
             "three workers publishing", timeout_s=WAIT_S, poll_s=0.2)
    dashboard = _Dashboard(runtime, tmp_path)
    try:
        browser.console()
        browser.open(f"{dashboard.url}#/shared/{w1.pid}-slow-1")

        def table():
            return browser.js("""
                const rows = [...document.querySelectorAll("#workers-table tbody tr")];
                const off = (id) => document.getElementById(id).disabled;
                return document.body.dataset.view === "shared" && rows.length === 3 && {
                    state: Object.fromEntries(rows.map((r) => [r.dataset.worker, r.cells[4].textContent])),
                    buttons: [off("btn-pause-all"), off("btn-resume-all"), off("btn-stop-all")],
                    command: document.getElementById("whole-command").hidden ? null
                        : document.getElementById("whole-command").textContent};
            """)

        first = wait_for(table, "the whole view with three workers", timeout_s=WAIT_S)
        assert first["state"] == {"w1": "running", "w2": "running", "away": "–"}
        assert first["buttons"] == [False, False, False]  # (the one away: either may apply)
        assert browser.js("return [...document.querySelectorAll('#crawl-view button')]"
                          ".filter((b) => b.offsetParent !== null).map((b) => b.id)") == [
            "btn-pause-all", "btn-resume-all", "btn-stop-all"]  # (not a worker's own)

        browser.click("btn-pause-all")
        for crawl in (w1, w2):
            wait_for(lambda crawl=crawl: _state(runtime, crawl) == "paused", "paused here",
                     timeout_s=WAIT_S, poll_s=0.2, alive=crawl.proc)
        wait_for(lambda: "Crawl paused" in away.log_text(), "the worker away paused",
                 timeout_s=WAIT_S, alive=away.proc)
        paused = wait_for(lambda: (t := table()) and t["state"]["w1"] == "paused" and t,
                          "the page showing the pause", timeout_s=WAIT_S)
        assert paused["state"] == {"w1": "paused", "w2": "paused",
                                   "away": "pause sent through Redis"}
        assert paused["buttons"] == [True, False, False]
        assert paused["command"].startswith("Paused: w1, w2 here, at once; away through the "
                                            "shared frontier (within 2 s, if it runs).")
        _screenshot(browser, tmp_path, "dashboard-shared-paused.png")
        assert browser.errors() == []

        browser.click("btn-resume-all")
        for crawl in (w1, w2):
            wait_for(lambda crawl=crawl: _state(runtime, crawl) == "running", "running here",
                     timeout_s=WAIT_S, poll_s=0.2, alive=crawl.proc)
        wait_for(lambda: "Crawl resumed" in away.log_text(), "the worker away resumed",
                 timeout_s=WAIT_S, alive=away.proc)
        resumed = wait_for(lambda: (t := table()) and t["state"]["w1"] == "running"
                           and t["command"].startswith("Resumed: w1, w2 here") and t,
                           "the page showing it", timeout_s=WAIT_S)
        assert resumed["buttons"] == [False, True, False]

        browser.click("btn-stop-all")
        alert = browser.driver.switch_to.alert
        assert "Stop every worker of slow" in alert.text
        alert.accept()
        for crawl in (w1, w2, away):
            assert crawl.wait(WAIT_S) == 0, crawl.log_text()[-3000:]
            assert "'finish_reason': 'shutdown'" in crawl.log_text()
    finally:
        status = dashboard.stop()
    assert status == 0, dashboard.out.read_text(errors="replace")


@pytest.fixture
def static_site():
    """The page's directory served as it is on 127.0.0.1 (no dashboard server, no API)."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(STATIC))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


SAMPLES = """[
  {t: 100, pages: 0, items: 0, status: {"200": 1}, errors: {}},
  {t: 101, pages: 10, items: 4, status: {"200": 3, "404": 1}, errors: {}},
  {t: 102, pages: 30, items: 8, status: {"200": 5, "404": 1}, errors: {"TimeoutError": 2}},
  {t: 103, pages: 5, items: 9, status: {}, errors: {}}]"""

CRAWLS = """[
  {id: "11-a-1", pid: 11, shared: {pages: 9, items: 3, queued: 4, leased: 1},
   workers: [{worker: "h-11", pages: 5, items: 2}, {worker: "h-12", pages: 4, items: 1}]},
  {id: "12-a-1", pid: 12, shared: {pages: 7, items: 2, queued: 5, leased: 0},
   workers: [{worker: "h-11", pages: 4, items: 1}, {worker: "h-12", pages: 3, items: 1}]},
  {id: "13-b-1", pid: 13, shared: null, workers: []}]"""

NAMED_WORKERS = """[
  {id: "21-a-1", pid: 21, worker: "w1", shared: {pages: 5, items: 2, queued: 4, leased: 1},
   workers: [{worker: "w1", pages: 3, items: 1}, {worker: "w2", pages: 2, items: 1}]},
  {id: "22-a-1", pid: 22, worker: "w2", shared: {pages: 4, items: 2, queued: 5, leased: 0},
   workers: [{worker: "w1", pages: 2, items: 1}, {worker: "w2", pages: 2, items: 1}]}]"""

#: Two shared crawls whose workers have the same ids (FRONTIER_WORKER=w1 in each), told
#: apart by their frontier (Redis and key).
TWO_FRONTIERS = """[
  {id: "31-a-1", pid: 31, worker: "w1", shared: {pages: 5, items: 2, queued: 4, leased: 1,
   frontier: "redis://r/0 {a}"}, workers: [{worker: "w1", pages: 5, items: 2}]},
  {id: "32-b-1", pid: 32, worker: "w1", shared: {pages: 7, items: 2, queued: 5, leased: 0,
   frontier: "redis://r/0 {b}"}, workers: [{worker: "w1", pages: 7, items: 2}]}]"""

SHARED_SAMPLES = """[
  {t: 100, pages: 0, items: 0, shared: {pages: 0, items: 0, queued: 5, leased: 1,
   by_worker: [{worker: "a", pages: 0, items: 0}]}},
  {t: 101, pages: 1, items: 1, shared: {pages: 4, items: 2, queued: 4, leased: 2,
   by_worker: [{worker: "a", pages: 4, items: 2}]}},
  {t: 102, pages: 2, items: 1, shared: {pages: 10, items: 3, queued: 3, leased: 2,
   by_worker: [{worker: "a", pages: 6, items: 2}, {worker: "b", pages: 4, items: 1}]}},
  {t: 103, pages: 3, items: 1, shared: null}]"""

#: (expression over the module ``d`` = derive.js, its value as JSON).
FIGURES = [
    ("d.rate(10, 20, 2)", 5),
    ("d.rate(20, 10, 1)", None),  # a counter that went back: a restart, no rate
    ("d.rate(null, 10, 1)", None),
    ("d.rate(1, 2, 0)", None),
    # rates over the last `window` samples; a sample no newer than the last is dropped
    (f"(() => {{ const s = new d.SampleStore(100, 1); {SAMPLES}.forEach((x) => s.push(x));"
     " return [s.pagesRate, s.itemsRate, s.push({t: 103, pages: 99}), s.length]; })()",
     [[None, 10, 20, None], [None, 4, 4, 1], False, 4]),
    (f"(() => {{ const s = new d.SampleStore(100, 2); {SAMPLES}.slice(0, 3).forEach((x) => s.push(x));"
     " return s.pagesRate; })()", [None, 10, 15]),
    # a status or error kind met later counts 0 before it
    (f"(() => {{ const s = new d.SampleStore(100, 1); {SAMPLES}.slice(0, 3).forEach((x) => s.push(x));"
     " return [d.orderedKeys(s.status), s.status.get('404'), s.errors.get('TimeoutError')]; })()",
     [["200", "404"], [None, 1, 0], [None, 0, 2]]),
    (f"(() => {{ const s = new d.SampleStore(3, 1); {SAMPLES}.slice(0, 3).forEach((x) => s.push(x));"
     " s.push({t: 104, pages: 40}); return [s.t, s.samples.length]; })()", [[101, 102, 104], 3]),
    ("d.latencyBuckets({buckets: [0.1, 1], counts: [5, 3, 2]}).counts", [5, 3, 2]),
    ("String(d.latencyBuckets({buckets: [0.1, 1], counts: [5, 3, 2]}).bounds)", "0.1,1,Infinity"),
    ("d.latencyDelta({buckets: [0.1, 1], counts: [5, 3, 2]},"
     " {buckets: [0.1, 1], counts: [6, 7, 2]}).counts", [1, 4, 0]),
    ("[0.5, 0.8, 0.95].map((q) => String(d.quantileBound("
     "d.latencyBuckets({buckets: [0.1, 1], counts: [5, 3, 2]}), q)))", ["0.1", "1", "Infinity"]),
    ("d.quantileBound(d.latencyBuckets({buckets: [0.1], counts: [0, 0]}), 0.5)", None),
    ("d.actorCpuPercent({t: 0, actors: [{name: 'engine', cpu: 1.0}, {name: 'gone', cpu: 1}]},"
     " {t: 2, actors: [{name: 'engine', cpu: 1.5}, {name: 'new', cpu: 3}]})", {"engine": 25}),
    ("d.unixSeconds('2026-11-29T05:00:00+00:00')", 1795928400),
    ("[d.unixSeconds(12.5), d.unixSeconds('no date'), d.unixSeconds(null)]", [12.5, None, None]),
    # a shared crawl's processes here grouped, its figures from the freshest entry
    (f"d.groupShared({CRAWLS}).map((g) => [g.crawls.map((c) => c.id), g.shared && g.shared.pages,"
     " g.workers.map((w) => [w.worker, w.pages, w.crawl && w.crawl.id])])",
     [[["11-a-1", "12-a-1"], 9, [["h-11", 5, "11-a-1"], ["h-12", 4, "12-a-1"]]],
      [["13-b-1"], None, []]]),
    # workers named by FRONTIER_WORKER: matched by the crawl's own `worker`, not its pid
    (f"d.groupShared({NAMED_WORKERS}).map((g) => [g.best.id, g.workers.map((w) => [w.worker,"
     " w.pages, w.crawl && w.crawl.id])])",
     [["21-a-1", [["w1", 3, "21-a-1"], ["w2", 2, "22-a-1"]]]]),
    # two shared crawls with the same worker ids: one group each, by their frontier
    (f"d.groupShared({TWO_FRONTIERS}).map((g) => [g.best.id, g.shared.pages,"
     " g.workers.map((w) => [w.worker, w.crawl && w.crawl.id])])",
     [["31-a-1", 5, [["w1", "31-a-1"]]], ["32-b-1", 7, [["w1", "32-b-1"]]]]),
    # a shared crawl's whole figures over time: the combined rates, the queue, each
    # worker's pages per second (0 before it published, none without shared figures)
    (f"(() => {{ const s = new d.SampleStore(100, 1, 1); {SHARED_SAMPLES}.forEach((x) => s.push(x));"
     " return [s.sharedPagesRate, s.sharedItemsRate, s.sharedQueue.queued, s.sharedQueue.leased,"
     " d.orderedKeys(s.workerPages), s.workerPages.get('a'), s.workerPages.get('b'),"
     " s.hasShared]; })()",
     [[None, 4, 6, None], [None, 2, 1, None], [5, 4, 3, None], [1, 2, 2, None], ["a", "b"],
      [None, 4, 2, None], [None, 0, 4, None], True]),
    # over the last 2 samples: from t=100 to t=102 for the third
    (f"(() => {{ const s = new d.SampleStore(100, 1, 2); {SHARED_SAMPLES}.forEach((x) => s.push(x));"
     " return [s.sharedPagesRate, s.pagesRate, s.workerPages.get('a')]; })()",
     [[None, 4, 5, None], [None, 1, 1, 1], [None, 4, 3, None]]),
    ("d.workerCounts({by_worker: [{worker: 'a', pages: 3, items: 1}, {worker: 7, pages: 2}]},"
     " 'pages')", {"a": 3, "7": 2}),
    ("[d.fmtBytes(1536), d.fmtBytes(512), d.fmtBytes(3 * 1024 ** 3), d.fmtBytes(null)]",
     ["1.50 KB", "512 B", "3.00 GB", "–"]),
    ("[d.fmtCount(1234567), d.fmtRate(0), d.fmtRate(0.25), d.fmtRate(10), d.fmtRate(12.34),"
     " d.fmtRate(1234)]", ["1,234,567", "0", "0.25", "10", "12.3", "1,234"]),
    ("[d.fmtDuration(4.2), d.fmtDuration(65), d.fmtDuration(3725), d.fmtDuration(90000)]",
     ["4.2 s", "1m 05s", "1h 02m", "1d 01h"]),
    ("[d.fmtSeconds(0.0123), d.fmtSeconds(0.25), d.fmtSeconds(1.5), d.fmtSeconds(Infinity)]",
     ["12.3 ms", "250 ms", "1.5 s", "more"]),
]


def test_the_page_figures_rates_latency_and_groups_as_documented(browser, static_site):
    """derive.js (rates, latency buckets and quantiles, worker groups, number formats),
    run as the page runs it: an ES module in Chromium."""
    browser.open(f"{static_site}/README.md")
    results = json.loads(browser.driver.execute_async_script("""
        const [expressions, done] = arguments;
        import("/derive.js").then((d) => done(JSON.stringify(expressions.map((e) => {
            try { return new Function("d", `return (${e});`)(d); }
            catch (error) { return `raised ${error}`; }
        }))), (error) => done(JSON.stringify(`import failed: ${error}`)));
    """, [expression for expression, _ in FIGURES]))
    assert isinstance(results, list), results
    for (expression, expected), got in zip(FIGURES, results, strict=True):
        assert got == expected, expression
