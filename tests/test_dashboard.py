"""The dashboard's backend (issue 33, crawlfw/dashboard/): ``crawlfw dashboard`` and
``DASHBOARD_ENABLED`` serving real crawl processes (``crawlfw runspider`` of
tests/support/live.py's slow spider against a CountingServer), spoken to over HTTP on
127.0.0.1 as a browser would."""

import datetime
import http.client
import json
import os
import re
import subprocess
import sys
import textwrap
import time
import urllib.parse

import pytest

from crawlfw.actors._validation import validate_message
from tests.support.dashboard import Dashboard, start_dashboard
from tests.support.live import WAIT_S, LiveCrawl
from tests.support.wait import wait_for

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="Unix sockets and /proc as on Linux")


def in_crawl_dashboard(crawl: LiveCrawl, what="Dashboard") -> str:
    """The URL the crawl logged for its dashboard (``what``: ``Dashboard``/``Metrics``)."""
    def logged():
        match = re.search(rf"INFO: {what}: (http://127\.0\.0\.1:\d+/\S*)", crawl.log_text())
        return match.group(1) if match else None

    return wait_for(logged, f"the crawl logs its {what} URL", timeout_s=WAIT_S)


def crawl_state(runtime, pid) -> str:
    result = runtime.cli("status", pid, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["state"]


@pytest.mark.slow
def test_every_route_wants_the_token_and_a_loopback_host(runtime, server, tmp_path, procs):
    crawl = LiveCrawl(runtime, tmp_path, server.url, pages=400)
    procs.append(crawl)
    crawl.wait_listed(min_pages=1)
    proc, dash = start_dashboard(runtime)
    procs.append(proc)
    crawl_id = wait_for(lambda: (dash.get_json("/api/crawls") or [{}])[0].get("id"),
                        "the crawl listed")
    assert crawl_id == f"{crawl.pid}-slow-1"
    gets = ["/", "/index.html", "/static/index.html", "/api/crawls",
            f"/api/crawls/{crawl_id}/history", "/metrics"]
    posts = [f"/api/crawls/{crawl_id}/{action}" for action in ("pause", "resume", "stop")]
    wrong = "x" * len(dash.token)
    for path in gets + [f"/api/crawls/{crawl_id}/events"]:
        for headers in ({}, {"Authorization": f"Bearer {wrong}"},
                        {"Cookie": f"crawlfw_dashboard_{dash.port}={wrong}"},
                        {"Cookie": f"crawlfw_dashboard_{dash.port + 1}={dash.token}"},
                        {"Authorization": "Basic eA=="}):
            status, _, body = dash.request("GET", path, headers)
            assert status == 403, (path, headers, body)
            assert json.loads(body)["ok"] is False
        assert dash.request("GET", f"{path}{'&' if '?' in path else '?'}token={wrong}")[0] == 403
    for path in posts:
        for headers in ({}, {"Authorization": f"Bearer {wrong}"}):
            assert dash.request("POST", path, headers)[0] == 403
    assert crawl_state(runtime, crawl.pid) == "running"  # no refused POST changed it

    # the token in the query, as a bearer token, or as the cookie /?token= sets
    status, headers, body = dash.request("GET", f"/?token={dash.token}")
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    cookie = headers["Set-Cookie"]
    # the port in its name: another dashboard on this machine has its own cookie
    assert cookie.startswith(f"crawlfw_dashboard_{dash.port}={dash.token};")
    assert {"HttpOnly", "SameSite=Strict", "Path=/"} <= {p.strip() for p in cookie.split(";")}
    for path in gets:
        for headers in (dash.auth(),
                        {"Cookie": f"a=b; crawlfw_dashboard_{dash.port}={dash.token}"}):
            status, got, body = dash.request("GET", path, headers)
            assert status == 200, (path, body)
            assert got["Cache-Control"] == "no-store"
            assert got["Referrer-Policy"] == "no-referrer"
        sep = "&" if "?" in path else "?"
        assert dash.request("GET", f"{path}{sep}token={dash.token}")[0] == 200
    assert dash.events(f"/api/crawls/{crawl_id}/events", 1)

    # DNS rebinding: a page of another name reaching 127.0.0.1 sends its own Host
    for host in (f"evil.example:{dash.port}", "127.0.0.1", f"127.0.0.1:{dash.port + 1}",
                 f"localhost.evil.example:{dash.port}"):
        status, _, body = dash.request("GET", "/api/crawls", dash.auth({"Host": host}))
        assert status == 403 and b"Host" in body, host
    assert dash.request("GET", "/api/crawls", dash.auth({"Host": f"localhost:{dash.port}"}))[0] == 200

    # files of the static directory only
    for path in ("/static/../server.py", "/static/%2e%2e/server.py", "/static/..%2fserver.py",
                 "/static/.hidden", "/static/", "/static/sub/x.js", "/nothing"):
        assert dash.request("GET", path, dash.auth())[0] == 404, path

    # no state change on GET; a POST from another origin is refused
    for action in ("pause", "resume", "stop"):
        status, _, body = dash.request("GET", f"/api/crawls/{crawl_id}/{action}", dash.auth())
        assert status == 405 and b"POST" in body
    status, _, _ = dash.post(f"/api/crawls/{crawl_id}/pause", {"Origin": "http://evil.example"})
    assert status == 403
    assert crawl_state(runtime, crawl.pid) == "running"

    # the commands reach the crawl (as `crawlfw status` sees it)
    status, _, body = dash.post(f"/api/crawls/{crawl_id}/pause",
                                {"Origin": f"http://127.0.0.1:{dash.port}"})
    assert (status, json.loads(body)) == (200, {"ok": True})
    assert crawl_state(runtime, crawl.pid) == "paused"
    assert dash.get_json("/api/crawls")[0]["state"] in ("paused", "running")  # (listed 1 s)
    assert dash.post(f"/api/crawls/{crawl_id}/resume")[0] == 200
    assert crawl_state(runtime, crawl.pid) == "running"
    assert dash.post("/api/crawls/99999999-nothing-1/pause")[0] == 404
    assert dash.post(f"/api/crawls/{crawl_id}/stop")[0] == 200
    assert crawl.wait() == 0, crawl.log_text()
    assert "'finish_reason': 'shutdown'" in crawl.log_text()
    assert len(crawl.items()) < 400


@pytest.mark.slow
def test_in_crawl_dashboard_streams_samples_whose_counters_advance(runtime, server, tmp_path,
                                                                   procs):
    crawl = LiveCrawl(runtime, tmp_path, server.url, pages=300,
                      args=["-s", "DASHBOARD_ENABLED=True"])
    procs.append(crawl)
    crawl.wait_listed(min_pages=1)
    dash = Dashboard(in_crawl_dashboard(crawl))
    [entry] = dash.get_json("/api/crawls")
    assert entry["id"] == f"{crawl.pid}-slow-1" and entry["pid"] == crawl.pid
    assert entry["name"] == "slow" and entry["state"] == "running"
    assert entry["workers"] == [] and entry["shared"] is None
    started = datetime.datetime.fromisoformat(entry["started"])
    assert abs(started.timestamp() - time.time()) < 60

    samples = [data for _, data in dash.events(f"/api/crawls/{entry['id']}/events", 4)]
    assert len(samples) == 4
    times = [s["t"] for s in samples]
    assert times == sorted(times) and times[-1] - times[0] >= 2.0
    assert samples[-1]["pages"] > samples[0]["pages"]
    assert samples[-1]["items"] > samples[0]["items"]
    assert samples[-1]["bytes"] > samples[0]["bytes"]
    last = samples[-1]
    for sample in samples:  # each one the schema's Sample
        validate_message({"type": "sample_reported", "crawl_id": "slow-1", "sample": sample})
    assert last["state"] == "running"
    assert last["status"]["200"] >= last["pages"] - 2
    assert sum(last["latency"]["counts"]) >= last["pages"] - 2
    assert len(last["latency"]["counts"]) == len(last["latency"]["buckets"]) + 1
    assert last["frontier"]["queued"] > 0 and last["frontier"]["on_disk"] == 0
    assert last["hosts"]["busiest"][0]["host"] == "127.0.0.1"
    assert last["hosts"]["ready"] + last["hosts"]["waiting"] == 1
    names = {a["name"] for a in last["actors"]}
    assert {"engine", "scheduler", "spider_runner", "pipeline", "downloader 0"} <= names
    assert last["memory"]["rss"] > 10 * 1024 * 1024
    assert last["revisit"] is None

    history = dash.get_json(f"/api/crawls/{entry['id']}/history")
    assert history["interval"] == 1.0
    assert [s["t"] for s in history["samples"]][-len(samples):][:1] <= times[-1:]
    assert {s["t"] for s in samples} <= {s["t"] for s in history["samples"]}
    since = dash.get_json(f"/api/crawls/{entry['id']}/history?since={times[1]}")
    assert all(s["t"] > times[1] for s in since["samples"]) and since["samples"]

    # the control messages behind it, on the crawl's socket, as the schemas say
    from crawlfw.core.control.protocol import ControlClient, ControlError

    client = ControlClient(crawl.socket)
    reply = client.ask({"type": "get_history", "crawl_id": "slow-1", "since": times[-1]})
    validate_message(reply)
    assert reply["type"] == "history_reported" and reply["interval"] == 1.0
    reply = client.ask({"type": "get_sample", "crawl_id": "slow-1"})
    validate_message(reply)
    assert reply["sample"]["pages"] >= last["pages"]
    with pytest.raises(ControlError, match="since"):
        client.ask({"type": "get_history", "crawl_id": "slow-1", "since": "yesterday"})
    with pytest.raises(ControlError, match="no running crawl 'slow-9'"):
        client.ask({"type": "get_sample", "crawl_id": "slow-9"})

    # an ERROR logged by the crawl is sent as an error event, with its URL
    stream = dash.request("GET", f"/api/crawls/{entry['id']}/events", dash.auth(), read=False)
    conn, response = stream
    try:
        result = runtime.cli("schedule", crawl.pid, "http://127.0.0.1:1/refused",
                             "--priority", "100")
        assert result.returncode == 0, result.stderr
        errors, kind, deadline = [], None, time.monotonic() + WAIT_S
        while time.monotonic() < deadline and not any(
                "Error downloading" in e["message"] for e in errors):
            line = response.fp.readline().decode()
            if line.startswith("event: "):
                kind = line[7:].strip()
            elif line.startswith("data: ") and kind == "error":
                errors.append(json.loads(line[6:]))
    finally:
        conn.close()
    assert errors, "no error event"
    for error in errors:  # "Gave up retrying <GET ...>", "Error downloading <GET ...>"
        assert error["url"] == "http://127.0.0.1:1/refused"
        assert set(error) == {"t", "kind", "message", "traceback", "url"}
    assert "Error downloading" in errors[-1]["message"] and errors[-1]["kind"]
    sample = dash.get_json(f"/api/crawls/{entry['id']}/history")["samples"][-1]
    errors = wait_for(lambda: dash.get_json(f"/api/crawls/{entry['id']}/history")
                      ["samples"][-1]["errors"], "the error counted in a sample")
    assert sum(errors.values()) >= 1 and sample["pages"] > 0


_OPEN_SPIDER = '''
import crawlfw
from crawlfw import signals
from crawlfw.exceptions import DontCloseSpider


class OpenSpider(crawlfw.Spider):
    """Crawls its pages, then stays open (idle) until stopped."""
    name = "open"
    base_url = "http://127.0.0.1:1"
    custom_settings = {"RETRY_TIMES": 1}

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.idle, signal=signals.spider_idle)
        return spider

    def idle(self, spider):
        raise DontCloseSpider

    def start_requests(self):
        for n in range(12):
            yield crawlfw.Request(f"{self.base_url}/slow/{n}")
        for code in (404, 404, 500, 302):
            yield crawlfw.Request(f"{self.base_url}/status/{code}", dont_filter=True)

    def parse(self, response):
        yield {"url": response.url}
'''


@pytest.mark.slow
def test_metrics_parse_and_equal_the_crawls_stats(runtime, server, tmp_path, procs):
    from prometheus_client.parser import text_string_to_metric_families

    spider = tmp_path / "openspider.py"
    spider.write_text(textwrap.dedent(_OPEN_SPIDER).lstrip())
    log = open(tmp_path / "crawl.log", "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "crawlfw.cmdline", "runspider", str(spider), "-a",
         f"base_url={server.url}", "-s", "METRICS_ENABLED=True", "-s", "DASHBOARD_ENABLED=True"],
        cwd=str(tmp_path), env=runtime.env(), stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=log)
    procs.append(proc)

    def idle():
        result = runtime.cli("status", proc.pid, "--json")
        if result.returncode != 0:
            return None
        status = json.loads(result.stdout)
        done = status["pages"] >= 16 and status["in_flight"] == 0 and status["pending"] == 0
        return status if done else None

    wait_for(idle, "the crawl has crawled its pages and idles", timeout_s=WAIT_S)
    time.sleep(0.5)
    status = idle()
    stats = status["stats"]

    class Crawl:
        def log_text(self):
            return (tmp_path / "crawl.log").read_text(errors="replace")

    metrics_url = in_crawl_dashboard(Crawl(), "Metrics")
    assert metrics_url.endswith("/metrics")
    conn = http.client.HTTPConnection("127.0.0.1", urllib.parse.urlsplit(metrics_url).port,
                                      timeout=20)
    conn.request("GET", "/metrics")  # no token on the METRICS_ENABLED listener
    response = conn.getresponse()
    text = response.read().decode()
    assert response.status == 200 and response.headers["Content-Type"].startswith("text/plain")
    conn.request("GET", "/api/crawls")  # and nothing else
    other = conn.getresponse()
    other.read()
    assert other.status == 404
    conn.close()
    dash = Dashboard(in_crawl_dashboard(Crawl()))
    assert dash.request("GET", "/metrics")[0] == 403  # the dashboard's wants the token
    assert dash.request("GET", "/metrics", dash.auth())[0] == 200

    values = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            values[(s.name, tuple(sorted((k, v) for k, v in s.labels.items()
                                         if k not in ("crawl", "spider", "pid"))))] = s.value
            if s.labels:
                assert (s.labels["crawl"], s.labels["spider"], s.labels["pid"]) == \
                    ("open-1", "open", str(proc.pid))
    statuses = {k.rsplit("/", 1)[1]: v for k, v in stats.items()
                if k.startswith("downloader/response_status_count/")}
    assert set(statuses) == {"200", "302", "404", "500"}
    got = {labels[0][1]: v for (name, labels), v in values.items()
           if name == "crawlfw_responses_total"}
    assert got == statuses
    assert values[("crawlfw_responses_received_total", ())] == stats["response_received_count"]
    assert values[("crawlfw_items_scraped_total", ())] == stats["item_scraped_count"]
    assert values[("crawlfw_response_bytes_total", ())] == stats["downloader/response_bytes"]
    assert values[("crawlfw_request_duration_seconds_count", ())] == \
        stats["downloader/response_count"]
    assert values[("crawlfw_request_duration_seconds_bucket", (("le", "+Inf"),))] == \
        stats["downloader/response_count"]
    errors = {labels[0][1]: v for (name, labels), v in values.items()
              if name == "crawlfw_errors_total"}
    assert errors == status["errors"] and errors["HTTP 404"] == 2
    assert values[("crawlfw_queue_requests", ())] == 0
    assert values[("crawlfw_requests_in_flight", ())] == 0
    assert values[("crawlfw_crawl_paused", ())] == 0
    assert values[("crawlfw_memory_rss_bytes", ())] > 0
    assert values[("crawlfw_actor_restarts_total", (("actor", "engine"),))] == 0
    assert values[("crawlfw_crawls", ())] == 1

    assert runtime.cli("stop", proc.pid).returncode == 0
    assert proc.wait(timeout=WAIT_S) == 0
    log.close()
    final = Crawl().log_text()
    for key in ("response_received_count", "item_scraped_count", "downloader/response_bytes"):
        assert f"'{key}': {int(stats[key])}," in final, key


def _listening(pid) -> list[str]:
    """Local addresses (``127.0.0.1:PORT``) of the TCP sockets process ``pid`` listens on."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            next(f)
            for row in f:
                cols = row.split()
                if cols[3] == "0A" and cols[9] in inodes:
                    address, port = cols[1].split(":")
                    ip = ".".join(str(int(address[i:i + 2], 16)) for i in (6, 4, 2, 0)) \
                        if len(address) == 8 else address
                    found.append(f"{ip}:{int(port, 16)}")
    return sorted(found)


@pytest.mark.slow
def test_listeners_only_when_asked_and_only_on_loopback(runtime, server, tmp_path, procs):
    plain = LiveCrawl(runtime, tmp_path / "plain", server.url, pages=200)
    watched = LiveCrawl(runtime, tmp_path / "watched", server.url, pages=200,
                        args=["-s", "DASHBOARD_ENABLED=True", "-s", "METRICS_ENABLED=True"])
    procs += [plain, watched]
    plain.wait_listed(min_pages=1)
    watched.wait_listed(min_pages=1)
    ports = {urllib.parse.urlsplit(in_crawl_dashboard(watched, what)).port
             for what in ("Dashboard", "Metrics")}
    assert _listening(plain.pid) == []
    assert _listening(watched.pid) == sorted(f"127.0.0.1:{p}" for p in ports)
    assert len(ports) == 2


@pytest.mark.slow
def test_the_crawl_list_shows_every_crawl_as_they_come_and_go(runtime, server, tmp_path,
                                                             procs):
    proc, dash = start_dashboard(runtime)
    procs.append(proc)
    assert dash.get_json("/api/crawls") == []
    first = LiveCrawl(runtime, tmp_path / "a", server.url, pages=300)
    second = LiveCrawl(runtime, tmp_path / "b", server.url, pages=300)
    procs += [first, second]
    first.wait_listed(min_pages=1)
    second.wait_listed(min_pages=1)
    listed = wait_for(lambda: (lambda c: c if len(c) == 2 else None)(dash.get_json("/api/crawls")),
                      "two crawls listed")
    assert sorted(c["pid"] for c in listed) == sorted([first.pid, second.pid])
    assert {c["id"] for c in listed} == {f"{first.pid}-slow-1", f"{second.pid}-slow-1"}
    for entry in listed:  # each opens its own view
        path = f"/api/crawls/{entry['id']}/history"
        wait_for(lambda path=path: (dash.get_json(path)["samples"]
                                    or [{"pages": 0}])[-1]["pages"] >= 1,
                 f"{entry['id']}'s samples count its pages")

    # one crawl named: only it
    only, one = start_dashboard(runtime, str(second.pid))
    procs.append(only)
    assert [c["pid"] for c in one.get_json("/api/crawls")] == [second.pid]

    # a crawl that ends leaves the list; its event stream ends
    conn, response = dash.request("GET", f"/api/crawls/{first.pid}-slow-1/events", dash.auth(),
                                  read=False)
    first.kill()
    wait_for(lambda: [c["pid"] for c in dash.get_json("/api/crawls")] == [second.pid],
             "the killed crawl leaves the list")
    body = response.read().decode()  # the server closes the stream
    conn.close()
    assert "event: end" in body
    assert dash.request("GET", f"/api/crawls/{first.pid}-slow-1/history", dash.auth())[0] == 404
    only.send_signal(2)
    assert only.wait(timeout=10) == 0


@pytest.mark.slow
def test_history_survives_a_jobdir_resume(runtime, server, tmp_path, procs):
    jobdir = tmp_path / "job"
    args = ["-s", f"JOBDIR={jobdir}", "-s", "DASHBOARD_ENABLED=True"]
    crawl = LiveCrawl(runtime, tmp_path, server.url, pages=200, args=args)
    procs.append(crawl)
    crawl.wait_listed(min_pages=1)
    dash = Dashboard(in_crawl_dashboard(crawl))
    crawl_id = f"{crawl.pid}-slow-1"
    before = wait_for(lambda: (lambda s: s if len(s) >= 4 else None)(
        dash.get_json(f"/api/crawls/{crawl_id}/history")["samples"]), "four samples")
    assert runtime.cli("stop", crawl.pid).returncode == 0
    assert crawl.wait() == 0, crawl.log_text()
    saved = json.loads((jobdir / "dashboard-history.json").read_text())
    assert saved["version"] == 1 and len(saved["fine"]) >= len(before)

    resumed = LiveCrawl(runtime, tmp_path, server.url, pages=200, args=args, name="again")
    procs.append(resumed)
    resumed.wait_listed(min_pages=1)
    assert re.search(r"Dashboard history: \d+ samples loaded from .*dashboard-history.json",
                     resumed.log_text())
    again = Dashboard(in_crawl_dashboard(resumed))
    assert again.token != dash.token  # a new token for each server
    samples = again.get_json(f"/api/crawls/{resumed.pid}-slow-1/history")["samples"]
    times = [s["t"] for s in samples]
    # the first run's samples, kept (the last one may be replaced by the closing sample,
    # taken less than half a second later)
    assert {s["t"] for s in before[:-1]} <= set(times)
    assert times == sorted(times)
    first_run = [s for s in samples if s["t"] <= before[-1]["t"] + 60 and s["t"] < times[-1]]
    assert first_run[0]["t"] == before[0]["t"]
    assert samples[-1]["t"] > before[-1]["t"]
    assert samples[-1]["pages"] < before[-1]["pages"] + 200


@pytest.mark.slow
def test_workers_of_a_shared_crawl_show_each_and_combined(runtime, server, tmp_path, procs,
                                                         redis_server):
    for wid in ("w1", "w2"):
        procs.append(LiveCrawl(runtime, tmp_path / wid, server.url, pages=1200, name=wid, args=(
            "-s", f"FRONTIER_URL={redis_server.url}", "-s", "FRONTIER_KEY=dashboard-test",
            "-s", f"FRONTIER_WORKER={wid}", "-s", "FRONTIER_LEASE_TIMEOUT=3")))
    proc, dash = start_dashboard(runtime)
    procs.append(proc)

    def both_listed():
        crawls = dash.get_json("/api/crawls")
        if len(crawls) == 2 and all(
                c["shared"] and {w["worker"] for w in c["workers"]} == {"w1", "w2"}
                and all(w["pages"] for w in c["workers"]) for c in crawls):
            return crawls
        return None

    crawls = wait_for(both_listed, "both workers listed with the whole crawl's figures",
                      poll_s=0.2)
    worker_of = {procs[0].pid: "w1", procs[1].pid: "w2"}
    assert sorted(c["pid"] for c in crawls) == sorted(worker_of)
    for entry in crawls:  # each worker: its own figures, and the combined ones
        assert entry["shared"]["pages"] >= entry["pages"]
        assert entry["worker"] == worker_of[entry["pid"]]  # as the shared frontier knows it
        path = f"/api/crawls/{entry['id']}/history"

        def two_published(path=path):
            samples = dash.get_json(path)["samples"]
            shared = [s for s in samples if s["shared"] and s["shared"]["workers"] == 2
                      and all(w["pages"] for w in s["shared"]["by_worker"])]
            return shared if len(shared) >= 2 and shared[-1]["shared"]["pages"] > \
                shared[0]["shared"]["pages"] else None

        samples = wait_for(two_published, "samples of both workers' published figures, "
                                          "advancing", timeout_s=WAIT_S)
        sample = samples[-1]
        assert sample["shared"]["worker"] == entry["worker"]
        assert sample["shared"]["pages"] > 0  # (as last published: it may lag the worker's)
        # each worker's counters over time, and their sums: the whole crawl's charts
        for s in samples:
            by_worker = s["shared"]["by_worker"]
            assert [w["worker"] for w in by_worker] == ["w1", "w2"]
            assert sum(w["pages"] for w in by_worker) == s["shared"]["pages"]
            assert sum(w["items"] for w in by_worker) == s["shared"]["items"]
        assert sample["hosts"] == {"ready": None, "waiting": None, "busiest": []}
        validate_message({"type": "sample_reported", "crawl_id": "x", "sample": sample})

    # /metrics: each worker's series carry its id as the label `worker`
    from prometheus_client.parser import text_string_to_metric_families

    status, _, body = dash.request("GET", "/metrics", dash.auth())
    assert status == 200
    families = {f.name: f for f in text_string_to_metric_families(body.decode())}
    labelled = [s for f in families.values() for s in f.samples if "crawl" in s.labels]
    assert labelled and all(s.labels["worker"] == worker_of[int(s.labels["pid"])]
                            for s in labelled)
    pages = {s.labels["worker"]: s.value for s in families["crawlfw_responses_received"].samples}
    assert set(pages) == {"w1", "w2"} and all(pages.values())
    assert {s.labels["worker"]: s.value for s in families["crawlfw_shared_workers"].samples} \
        == {"w1": 2, "w2": 2}
    assert {s.labels["worker"] for s in families["crawlfw_request_duration_seconds"].samples
            if s.name.endswith("_bucket") and s.labels["le"] == "+Inf"} == {"w1", "w2"}


@pytest.mark.slow
def test_in_crawl_dashboard_on_a_chosen_port_without_a_control_endpoint(runtime, server,
                                                                       tmp_path, procs):
    from tests.support.redisserver import free_port

    port = free_port()
    crawl = LiveCrawl(runtime, tmp_path / "a", server.url, pages=200, args=[
        "-s", "CONTROL_ENDPOINT=False", "-s", "DASHBOARD_ENABLED=True",
        "-s", f"DASHBOARD_PORT={port}"])
    procs.append(crawl)
    dash = Dashboard(in_crawl_dashboard(crawl))
    assert dash.port == port
    path = f"/api/crawls/{crawl.pid}-slow-1/history"
    samples = wait_for(lambda: (lambda s: s if len(s) >= 3 and s[-1]["pages"] else None)(
        dash.get_json(path)["samples"]), "samples taken by the dashboard's own timer")
    assert [s["pages"] for s in samples] == sorted(s["pages"] for s in samples)
    assert not runtime.sockets.exists() or not list(runtime.sockets.iterdir())
    # the port taken: a WARNING, and the crawl goes on without a dashboard
    other = LiveCrawl(runtime, tmp_path / "b", server.url, pages=5, args=[
        "-s", "DASHBOARD_ENABLED=True", "-s", f"DASHBOARD_PORT={port}"])
    procs.append(other)
    assert other.wait() == 0, other.log_text()
    assert re.search(r"WARNING: Dashboard not opened: .*Address already in use", other.log_text())
    assert len(other.items()) == 5


def _spider_with(custom_settings: dict) -> str:
    """:data:`~tests.support.live.SLOW_SPIDER` with these ``custom_settings``."""
    from tests.support.live import SLOW_SPIDER

    return SLOW_SPIDER.replace('    name = "slow"\n',
                               f'    name = "slow"\n    custom_settings = {custom_settings!r}\n')


def _project(workdir, settings: str):
    """Make ``workdir`` a project (``crawlfw.cfg``) whose settings module holds ``settings``
    (``crawlfw runspider`` there reads them, as Scrapy's does)."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "crawlfw.cfg").write_text("[settings]\ndefault = projsettings\n")
    (workdir / "projsettings.py").write_text(textwrap.dedent(settings))


@pytest.mark.slow
def test_dashboard_and_metrics_settings_from_custom_settings_and_the_project(
        runtime, server, tmp_path, procs):
    """DASHBOARD_* and METRICS_* are read as any setting: a spider's custom_settings over
    the project's, -s over both; DASHBOARD_HISTORY per crawl."""
    from tests.support.redisserver import free_port

    port = free_port()
    spider = LiveCrawl(runtime, tmp_path / "spider", server.url, pages=300, spider=_spider_with(
        {"DASHBOARD_ENABLED": True, "DASHBOARD_PORT": port, "DASHBOARD_HISTORY": 2,
         "METRICS_ENABLED": True}))
    _project(tmp_path / "project", "DASHBOARD_ENABLED = True\nMETRICS_ENABLED = True\n")
    project = LiveCrawl(runtime, tmp_path / "project", server.url, pages=300)
    # the project turns both on, the spider both off, -s metrics on again
    _project(tmp_path / "both", "DASHBOARD_ENABLED = True\nMETRICS_ENABLED = True\n")
    both = LiveCrawl(runtime, tmp_path / "both", server.url, pages=300, args=[
        "-s", "METRICS_ENABLED=True"], spider=_spider_with(
        {"DASHBOARD_ENABLED": False, "METRICS_ENABLED": False}))
    procs += [spider, project, both]
    for crawl in (spider, project, both):
        crawl.wait_listed(min_pages=1)

    dash = Dashboard(in_crawl_dashboard(spider))
    assert dash.port == port
    metrics_port = urllib.parse.urlsplit(in_crawl_dashboard(spider, "Metrics")).port
    assert _listening(spider.pid) == sorted([f"127.0.0.1:{port}", f"127.0.0.1:{metrics_port}"])
    assert [c["pid"] for c in dash.get_json("/api/crawls")] == [spider.pid]
    # DASHBOARD_HISTORY = 2: the last 2 s at one a second, one a minute before them
    path = f"/api/crawls/{spider.pid}-slow-1/history"
    first = wait_for(lambda: (dash.get_json(path)["samples"] or [None])[0], "a first sample")
    samples = wait_for(lambda: (lambda s: s if s[-1]["t"] - first["t"] >= 6 else None)(
        dash.get_json(path)["samples"]), "six seconds of samples")
    assert samples[0]["t"] == first["t"] and len(samples) <= 4, [s["t"] for s in samples]

    project_ports = {urllib.parse.urlsplit(in_crawl_dashboard(project, what)).port
                     for what in ("Dashboard", "Metrics")}
    assert _listening(project.pid) == sorted(f"127.0.0.1:{p}" for p in project_ports)
    project_dash = Dashboard(in_crawl_dashboard(project))
    # (the project's default DASHBOARD_HISTORY: every sample kept)
    wait_for(lambda: len(project_dash.get_json(f"/api/crawls/{project.pid}-slow-1/history")
                         ["samples"]) >= 6, "six samples kept")

    metrics_url = in_crawl_dashboard(both, "Metrics")
    assert _listening(both.pid) == [f"127.0.0.1:{urllib.parse.urlsplit(metrics_url).port}"]
    assert "Dashboard:" not in both.log_text()


_TWO_CRAWLS = '''
import sys

import crawlfw
from crawlfw.crawler import CrawlerProcess

BASE = sys.argv[1]


class Plain(crawlfw.Spider):
    name = "plain"

    def start_requests(self):
        for n in range(300):
            yield crawlfw.Request(f"{BASE}/slow/{n}")

    def parse(self, response):
        yield {"url": response.url}


class Watched(Plain):
    name = "watched"
    custom_settings = {"DASHBOARD_ENABLED": True}


process = CrawlerProcess({"LOG_LEVEL": "INFO", "CONCURRENT_REQUESTS": 2})
process.crawl(Plain)
process.crawl(Watched)
process.start()
'''


@pytest.mark.slow
def test_one_crawl_asking_opens_the_process_dashboard_showing_every_crawl(runtime, server,
                                                                         tmp_path, procs):
    """Two crawls in one CrawlerProcess, the second's custom_settings turning the
    dashboard on: the process's dashboard opens, and shows both."""
    script = tmp_path / "two.py"
    script.write_text(_TWO_CRAWLS)
    log = tmp_path / "two.log"
    with open(log, "wb") as stderr:
        proc = subprocess.Popen([sys.executable, str(script), server.url], cwd=str(tmp_path),
                                env=runtime.env(), stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=stderr)
    procs.append(proc)

    class Crawl:
        def log_text(self):
            return log.read_text(errors="replace")

    dash = Dashboard(in_crawl_dashboard(Crawl()))
    crawls = wait_for(lambda: (lambda c: c if len(c) == 2 else None)(dash.get_json("/api/crawls")),
                      "both crawls listed")
    assert sorted(c["name"] for c in crawls) == ["plain", "watched"]
    assert _listening(proc.pid) == [f"127.0.0.1:{dash.port}"]
    for entry in crawls:
        assert dash.post(f"/api/crawls/{entry['id']}/stop")[0] == 200
    assert proc.wait(timeout=WAIT_S) == 0, Crawl().log_text()
    assert Crawl().log_text().count("'finish_reason': 'shutdown'") == 2
