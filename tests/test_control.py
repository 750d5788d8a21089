"""The control endpoint, driven from another process: real ``crawlfw runspider`` crawls
of a local server, steered with ``crawlfw ps/status/pause/resume/stop/schedule`` and raw
socket clients (a foreign user, garbage bytes)."""

import datetime
import json
import os
import pwd
import re
import signal
import socket
import stat
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from crawlfw.actors._validation import validate_message
from tests.support.live import LiveCrawl
from tests.support.wait import happens_within, wait_for

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="SO_PEERCRED and Unix sockets as on Linux")


@pytest.fixture
def live(runtime, server, tmp_path):
    crawls = []

    def start(pages=40, args=(), name="crawl"):
        crawl = LiveCrawl(runtime, tmp_path, server.url, pages=pages, args=args, name=name)
        crawls.append(crawl)
        return crawl

    yield start
    for crawl in crawls:
        crawl.kill()


def _ask_raw(path, payload: bytes, lines=1, timeout_s=20.0) -> list[dict]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout_s)
        sock.connect(str(path))
        sock.sendall(payload)
        data = b""
        while data.count(b"\n") < lines:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    return [json.loads(line) for line in data.splitlines()]


@pytest.mark.slow
def test_ps_and_status_report_the_live_figures(live, runtime):
    crawl = live(pages=100)
    status = crawl.wait_listed(min_pages=3)
    assert runtime.sockets.is_dir()
    assert stat.S_IMODE(runtime.sockets.stat().st_mode) == 0o700
    assert stat.S_IMODE(crawl.socket.lstat().st_mode) == 0o600

    rows = runtime.cli_json("ps")
    assert [(r["crawl_id"], r["spider"], r["pid"], r["state"]) for r in rows] == [
        ("slow-1", "slow", crawl.pid, "running")]
    assert rows[0]["pages"] >= 3 and rows[0]["items"] >= 1
    table = runtime.cli("ps").stdout.splitlines()
    assert table[0].split() == ["ID", "SPIDER", "PID", "STATE", "PAGES", "ITEMS", "UPTIME"]
    assert table[1].split()[:4] == ["slow-1", "slow", str(crawl.pid), "running"]

    assert status["crawl_id"] == "slow-1" and status["pid"] == crawl.pid
    assert status["state"] == "running"
    assert status["items"] >= 1
    assert 0 <= status["in_flight"] <= 2
    assert set(status["slots"]) <= {"127.0.0.1"}
    assert status["pending"] >= 0
    assert status["pages_per_min"] > 0 and status["items_per_min"] > 0
    assert status["errors"] == {}
    assert status["peak_memory_bytes"] > 10 * 1024 * 1024
    assert status["uptime_s"] > 0
    assert status["jobdir"] is None
    assert status["stats"]["response_received_count"] >= 3
    # the in-memory frontier's queued requests (issue 30): nothing spilled here
    assert status["stats"]["frontier/memory_bytes"] >= 0
    assert status["stats"]["frontier/disk_bytes"] == 0
    human = runtime.cli("status").stdout
    assert "state       running" in human
    assert re.search(r"frontier    [\d.]+ (B|KiB) in memory, 0 B on disk", human), human
    assert f"slow-1 (spider slow, pid {crawl.pid})" in human
    # the reply on the wire is a status_reported message that passes its schema
    reply = _ask_raw(crawl.socket, b'{"type": "get_status"}\n')[0]
    validate_message(reply)
    assert reply["pid"] == crawl.pid

    assert crawl.wait() == 0, crawl.log_text()
    assert len(crawl.items()) == 100
    assert not crawl.socket.exists()  # removed on exit


@pytest.mark.slow
def test_status_shows_the_requests_at_each_download_slot(live, runtime):
    """README: per download slot, ``status`` shows the requests at its downloader (here
    every page is held 0.25 s, so a transfer is in flight at most times); slots holding
    none are left out (issue 35)."""
    crawl = live(pages=100)
    crawl.wait_listed(min_pages=2)

    def with_slots():
        status = runtime.cli_json("status")
        return status if status["slots"] else None

    status = wait_for(with_slots, "a status with a slot", timeout_s=30, poll_s=0.05)
    (count,) = status["slots"].values()
    assert list(status["slots"]) == ["127.0.0.1"]
    assert 1 <= count <= 2  # CONCURRENT_REQUESTS=2
    human = wait_for(lambda: (lambda out: out if "(127.0.0.1: " in out else None)(
        runtime.cli("status").stdout), "a human status with a slot", timeout_s=30,
        poll_s=0.05)
    assert re.search(r"^in flight   \d+ \(127\.0\.0\.1: [12]\)$", human, re.M), human
    crawl.kill()


@pytest.mark.slow
def test_pause_holds_and_resume_continues(live, runtime, server):
    crawl = live(pages=80)
    crawl.wait_listed(min_pages=3)
    paused = runtime.cli_json("pause")
    assert paused["type"] == "command_accepted" and paused["command"] == "pause_crawl"
    status = runtime.cli_json("status")
    assert status["state"] == "paused"
    lines_at_pause = crawl.crawled_lines()
    in_flight = status["in_flight"]
    pages_at_pause = status["pages"]
    assert pages_at_pause < 80
    # the transfers in flight finish, freeing their download slots ...
    wait_for(lambda: runtime.cli_json("status")["in_flight"] == 0,
             "the transfers in flight to finish", alive=crawl.proc)
    # ... where an unpaused crawl would start the next downloads at once
    requested = len(server.paths)
    assert not happens_within(lambda: len(server.paths) > requested, 0.5)
    later = runtime.cli_json("status")
    assert later["state"] == "paused"
    assert later["in_flight"] == 0  # transfers in flight finished
    assert later["pages"] <= pages_at_pause + in_flight
    assert crawl.crawled_lines() <= lines_at_pause + in_flight
    assert crawl.proc.poll() is None  # a paused crawl does not close as idle
    assert "Crawl paused" in crawl.log_text()

    resumed = runtime.cli_json("resume")
    assert resumed["command"] == "resume_crawl"
    assert crawl.wait() == 0, crawl.log_text()
    assert crawl.crawled_lines() == 80
    assert len(crawl.items()) == 80
    assert "Crawl resumed" in crawl.log_text()
    # LogStats: the first line, within 10 s of the start, shows real figures
    log = crawl.log_text()
    opened = re.search(r"^(\S+ \S+) \[crawlfw.actors.supervisor\] INFO: Spider opened", log, re.M)
    first = re.search(r"^(\S+ \S+) \[crawlfw.extensions.logstats\] INFO: Crawled (\d+) pages",
                      log, re.M)
    assert opened and first, log
    assert int(first.group(2)) > 0
    seconds = (datetime.datetime.fromisoformat(first.group(1))
               - datetime.datetime.fromisoformat(opened.group(1))).total_seconds()
    assert seconds <= 10


@pytest.mark.slow
def test_schedule_adds_a_page_and_its_item(live, runtime, server):
    crawl = live(pages=60)
    crawl.wait_listed(min_pages=2)
    assert runtime.cli("pause").returncode == 0  # keep the crawl open while scheduling
    result = runtime.cli("schedule", f"{server.url}/slow/extra", "--callback", "parse_extra")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"Scheduled {server.url}/slow/extra in slow-1 (pid {crawl.pid})"
    # a page crawled already: filtered, unless --dont-filter
    assert runtime.cli("schedule", "slow-1", f"{server.url}/slow/0").returncode == 0
    assert runtime.cli("schedule", str(crawl.pid), f"{server.url}/slow/1",
                       "--dont-filter", "--priority", "5").returncode == 0
    bad = runtime.cli("schedule", f"{server.url}/slow/x", "--callback", "no_such_method")
    assert bad.returncode == 1
    assert bad.stderr.strip() == (f"pid {crawl.pid}: spider 'slow' has no method "
                                  "'no_such_method' to use as callback")
    bad_url = runtime.cli("schedule", "not-a-url")
    assert bad_url.returncode == 1 and "bad URL 'not-a-url'" in bad_url.stderr
    assert runtime.cli("resume").returncode == 0
    assert crawl.wait() == 0, crawl.log_text()
    items = crawl.items()
    assert {"url": f"{server.url}/slow/extra", "extra": True} in items
    urls = [item["url"] for item in items]
    assert urls.count(f"{server.url}/slow/0") == 1
    assert urls.count(f"{server.url}/slow/1") == 2
    assert len(items) == 62
    assert server.paths.count("/slow/extra") == 1


@pytest.mark.slow
def test_stop_exits_0_with_the_feed_stored(live, runtime):
    crawl = live(pages=200)
    crawl.wait_listed(min_pages=3)
    result = runtime.cli("stop")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"Stopping slow-1 (pid {crawl.pid})"
    assert crawl.wait(30) == 0, crawl.log_text()
    log = crawl.log_text()
    assert "'finish_reason': 'shutdown'" in log
    assert "Stored jl feed" in log  # the format as -o names it (Scrapy 2.19)
    items = crawl.items()
    assert 3 <= len(items) < 200
    assert not crawl.socket.exists()


class _HeldEndpoint:
    """A real :class:`~crawlfw.control.ControlEndpoint` whose ``get_status`` answer waits
    for ``answer`` to be set (as a ``stop`` answer is prepared while its crawl ends)."""

    @staticmethod
    def open(runtime):
        from crawlfw.control import ControlEndpoint
        from crawlfw.crawler import CrawlerRunner

        class Held(ControlEndpoint):
            answer = threading.Event()

            def _do_get_status(self, message):
                self.answer.wait(20)
                return super()._do_get_status(message)

        return Held(CrawlerRunner(), directory=runtime.sockets).open()


def test_close_sends_the_replies_being_prepared_first(runtime):
    """The stop race CI met: ``stop`` is answered while the crawl ends and closes the
    endpoint; the process must not end before the reply is sent."""
    from crawlfw.core.control.protocol import ControlClient

    endpoint = _HeldEndpoint.open(runtime)
    replies = []
    client = threading.Thread(target=lambda: replies.append(
        ControlClient(endpoint.path, timeout_s=20).ask({"type": "get_status"})))
    client.start()
    wait_for(lambda: endpoint._replying == 1, timeout_s=10)
    closer = threading.Thread(target=endpoint.close)
    closer.start()
    closer.join(0.3)
    assert closer.is_alive(), "close() returned with a reply still to send"
    assert not endpoint.path.exists()  # no new connection meanwhile
    endpoint.answer.set()
    closer.join(10)
    client.join(10)
    assert not closer.is_alive()
    assert [reply["type"] for reply in replies] == ["status_reported"]


def test_close_waits_for_a_reply_only_so_long(runtime):
    endpoint = _HeldEndpoint.open(runtime)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(endpoint.path))
        sock.sendall(b'{"type": "get_status"}\n')
        wait_for(lambda: endpoint._replying == 1, timeout_s=10)
        endpoint.close(drain_timeout_s=0.2)  # returns though the answer is held
        assert not endpoint.path.exists()
    finally:
        endpoint.answer.set()
        sock.close()


@pytest.mark.slow
def test_another_user_is_refused(live, runtime):
    """A forked child that setuid's to ``nobody`` cannot reach the socket (0700
    directory, 0600 socket); reaching it anyway (a hard link the test makes open to
    all), the SO_PEERCRED check refuses it. The crawl goes on."""
    if os.geteuid() != 0:
        pytest.skip("needs root to setuid to nobody")
    nobody = pwd.getpwnam("nobody")
    crawl = live(pages=100)
    crawl.wait_listed(min_pages=1)
    shared = Path(tempfile.mkdtemp(prefix="cfwshared"))  # reachable by nobody
    os.chmod(shared, 0o777)
    link = shared / "endpoint.sock"
    os.link(crawl.socket, link)
    os.chmod(link, 0o666)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: become nobody and try both ways in
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(nobody.pw_gid)
            os.setuid(nobody.pw_uid)
            outcome = {"uid": os.getuid()}
            try:
                with socket.socket(socket.AF_UNIX) as s:
                    s.connect(str(crawl.socket))
                outcome["direct"] = "connected"
            except PermissionError:
                outcome["direct"] = "PermissionError"
            with socket.socket(socket.AF_UNIX) as s:
                s.settimeout(20)
                s.connect(str(link))
                s.sendall(b'{"type": "get_status"}\n{"type": "get_status"}\n')
                data = b""
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    data += chunk
            outcome["replies"] = data.decode()
            os.write(write_end, json.dumps(outcome).encode())
        except BaseException as e:
            os.write(write_end, json.dumps({"child_error": repr(e)}).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as f:
        outcome = json.loads(f.read())
    os.waitpid(pid, 0)
    assert "child_error" not in outcome, outcome
    assert outcome["uid"] == nobody.pw_uid
    assert outcome["direct"] == "PermissionError"
    replies = [json.loads(line) for line in outcome["replies"].splitlines()]
    assert replies == [{"type": "control_error", "error": (
        f"permission denied: uid {nobody.pw_uid} may not control this crawl "
        "(only uid 0 or root)")}]
    os.unlink(link)
    shared.rmdir()
    assert runtime.cli_json("status")["state"] == "running"
    assert crawl.wait() == 0, crawl.log_text()
    assert len(crawl.items()) == 100
    assert f"refused a connection from pid {pid}, uid {nobody.pw_uid}" in crawl.log_text()


@pytest.mark.slow
def test_garbage_gets_an_error_reply_and_the_crawl_finishes(live):
    crawl = live(pages=60)
    crawl.wait_listed(min_pages=1)
    oversized = b'{"type": "get_status", "x": "' + b"a" * 70000 + b'"}\n'
    replies = _ask_raw(crawl.socket, b"\xff\xfe\x00garbage\n" + b"not json\n" + b"[1, 2]\n"
                       + b'{"type": "no_such_type"}\n'
                       + b'{"type": "fetch", "request": "x", "slot": "a", "reply_to": null}\n'
                       + b'{"type": "pause_crawl"}\n'
                       + b'{"type": "start_crawl", "crawler": {}}\n'
                       + oversized + b'{"type": "get_status"}\n', lines=9)
    errors = [r.get("error", "") for r in replies[:8]]
    assert [r["type"] for r in replies] == ["control_error"] * 8 + ["status_reported"]
    assert errors[0].startswith("the message is not UTF-8 text")
    assert errors[1].startswith("the message is not a JSON line")
    assert errors[2].startswith("a message must be a dict, got list")
    assert errors[3] == "unknown message type 'no_such_type'"
    assert "invalid 'fetch' message at request" in errors[4]
    assert errors[5] == "invalid 'pause_crawl' message at (message): 'crawl_id' is a required property"
    assert "invalid 'start_crawl' message at crawler" in errors[6]
    assert errors[7] == "message longer than 65536 bytes"
    assert replies[8]["crawls"][0]["crawl_id"] == "slow-1"
    assert crawl.wait() == 0, crawl.log_text()
    assert len(crawl.items()) == 60


@pytest.mark.slow
def test_no_crawl_or_an_ambiguous_one_exits_1(live, runtime):
    for command in ("status", "pause", "resume", "stop"):
        result = runtime.cli(command)
        assert (result.returncode, result.stderr) == (1, "No running crawl of this user\n")
    first = live(pages=200, name="first")
    second = live(pages=200, name="second")
    first.wait_listed(min_pages=1)
    second.wait_listed(min_pages=1)
    assert sorted(r["pid"] for r in runtime.cli_json("ps")) == sorted([first.pid, second.pid])
    result = runtime.cli("status")
    assert result.returncode == 1
    assert result.stderr.startswith("Several crawls are running: slow-1 (pid ")
    assert result.stderr.count("\n") == 1
    result = runtime.cli("pause", "slow")
    assert result.returncode == 1
    assert result.stderr.startswith("'slow' is ambiguous: ")
    result = runtime.cli("pause", "nope")
    assert (result.returncode, result.stderr) == (
        1, "No running crawl matches 'nope' (crawl id, spider name or pid; see crawlfw ps)\n")
    assert runtime.cli_json("status", str(first.pid))["pid"] == first.pid
    for crawl in (first, second):
        assert runtime.cli("stop", str(crawl.pid)).returncode == 0
        assert crawl.wait(30) == 0


@pytest.mark.slow
def test_the_socket_of_a_killed_crawl_is_detected_as_stale(live, runtime):
    crawl = live(pages=200)
    crawl.wait_listed(min_pages=1)
    os.kill(crawl.pid, signal.SIGKILL)
    crawl.wait(10)
    assert crawl.socket.exists()  # nobody could remove it
    result = runtime.cli("ps")
    assert (result.returncode, result.stdout) == (0, "No running crawl of this user\n")
    assert not crawl.socket.exists()
    result = runtime.cli("status")
    assert (result.returncode, result.stderr) == (1, "No running crawl of this user\n")


@pytest.mark.slow
def test_no_endpoint_with_control_endpoint_off(live, runtime):
    crawl = live(pages=5, args=("-s", "CONTROL_ENDPOINT=False"))
    assert crawl.wait() == 0, crawl.log_text()
    assert not list(runtime.path.rglob("*.sock"))
    assert "Control endpoint listening" not in crawl.log_text()


@pytest.mark.slow
@pytest.mark.parametrize("stats, errors", [
    ({"response_received_count": 3}, {}),
    ({"downloader/exception_type_count/crawlfw.exceptions.DNSLookupError": 2,
      "downloader/exception_type_count/crawlfw.exceptions.ConnectionRefusedError": 1,
      "spider_exceptions/ValueError": 4, "spider_exceptions/count": 4,
      "httperror/response_ignored_status_count/404": 5,
      "httperror/response_ignored_count": 5},
     {"DNSLookupError": 2, "ConnectionRefusedError": 1, "ValueError": 4, "HTTP 404": 5}),
])
def test_errors_by_type(stats, errors):
    from crawlfw.control import _errors

    assert _errors(stats) == errors
