"""Pause, resume and stop every worker of a shared (Redis) crawl at once from the
dashboard's whole view (``POST /api/shared/<id>/<command>``, issue 33's leftover): real
``redis-server``, real worker processes (``crawlfw runspider`` of tests/support/live.py's
slow spider), ``crawlfw dashboard`` serving the workers of this machine. One worker runs
without a control endpoint (``CONTROL_ENDPOINT=False``): the dashboard cannot reach it,
as a worker on another machine, so it follows the command written in Redis."""

import json
import re
import sys
import time

import pytest

from crawlfw.core.control.protocol import ControlClient, ControlError
from tests.support.dashboard import start_dashboard
from tests.support.live import WAIT_S, LiveCrawl
from tests.support.wait import wait_for

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="Unix sockets and /proc as on Linux")

#: Seconds in which a paused worker's published pages must not move (a worker publishes
#: every 2 s; transfers in flight at the pause finish within the CountingServer's hold).
STILL_S = 4.0


def worker(runtime, tmp_path, server, redis_server, wid, *args) -> LiveCrawl:
    return LiveCrawl(runtime, tmp_path / wid, server.url, pages=3000, name=wid, args=(
        "-s", f"FRONTIER_URL={redis_server.url}", "-s", "FRONTIER_KEY=whole-test",
        "-s", f"FRONTIER_WORKER={wid}", "-s", "FRONTIER_LEASE_TIMEOUT=5", *args))


def published(dash, wid_of_view) -> dict[str, int]:
    """Each worker's pages as published in Redis, read through the view's worker."""
    entry = next(c for c in dash.get_json("/api/crawls") if c["worker"] == wid_of_view)
    return {w["worker"]: w["pages"] for w in entry["workers"]}


def state_of(runtime, crawl: LiveCrawl) -> str:
    result = runtime.cli("status", crawl.pid, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["state"]


def still(dash, server, wids) -> dict[str, int]:
    """Wait until no page is fetched for STILL_S seconds and the published pages of
    ``wids`` stay the same meanwhile; return those pages."""
    def quiet():
        hits, before = len(server.paths), published(dash, "w1")
        time.sleep(STILL_S)
        after = published(dash, "w1")
        if len(server.paths) == hits and all(after[w] == before[w] for w in wids):
            return after
        return None

    return wait_for(quiet, f"no page fetched for {STILL_S} s", timeout_s=WAIT_S, poll_s=0.1)


@pytest.mark.slow
def test_the_whole_view_pauses_resumes_and_stops_every_worker(runtime, server, tmp_path, procs,
                                                              redis_server):
    w1, w2 = (worker(runtime, tmp_path, server, redis_server, w) for w in ("w1", "w2"))
    away = worker(runtime, tmp_path, server, redis_server, "away", "-s", "CONTROL_ENDPOINT=False")
    procs += [w1, w2, away]
    proc, dash = start_dashboard(runtime)
    procs.append(proc)

    def all_publishing():
        crawls = dash.get_json("/api/crawls")
        pages = published(dash, "w1") if any(c["worker"] == "w1" for c in crawls) else {}
        if len(crawls) == 2 and set(pages) == {"w1", "w2", "away"} and all(pages.values()):
            return crawls
        return None

    crawls = wait_for(all_publishing, "two workers listed here, three publishing", poll_s=0.2)
    id_of = {c["worker"]: c["id"] for c in crawls}
    assert crawls[0]["shared"]["frontier"] == crawls[1]["shared"]["frontier"]
    assert crawls[0]["shared"]["frontier"] == f"{redis_server.url} {{whole-test}}"

    # Pause: the workers here at once, the one away through Redis
    status, _, body = dash.post(f"/api/shared/{id_of['w1']}/pause")
    assert status == 200, body
    answer = json.loads(body)
    assert answer["ok"] is True and answer["command"] == "pause"
    assert answer["published"]["via"] == id_of["w1"] and answer["published"]["seq"] == 1
    how = {w["worker"]: (w["reached"], w["via"], w["crawl"]) for w in answer["workers"]}
    assert how == {"w1": (True, "control", id_of["w1"]), "w2": (True, "control", id_of["w2"]),
                   "away": (True, "redis", None)}
    assert state_of(runtime, w1) == state_of(runtime, w2) == "paused"
    wait_for(lambda: "Crawl paused" in away.log_text(), "the worker away pauses",
             timeout_s=WAIT_S)
    paused = still(dash, server, ("w1", "w2", "away"))  # pages/s 0 for every worker

    # A worker joining while the crawl is paused honours the standing pause
    late = worker(runtime, tmp_path, server, redis_server, "late", "-s", "CONTROL_ENDPOINT=False")
    procs.append(late)
    wait_for(lambda: "Crawl paused" in late.log_text(), "the late worker pauses",
             timeout_s=WAIT_S)
    still(dash, server, ("w1", "w2", "away"))  # (and the late one: no page fetched)
    late_pages = late.crawled_lines()
    assert late_pages <= 6  # (it pauses as its frontier opens: a few at most before)

    # Resume: every worker crawls again
    status, _, body = dash.post(f"/api/shared/{id_of['w2']}/resume")
    assert status == 200, body
    assert json.loads(body)["published"] == {"via": id_of["w2"], "seq": 2}
    assert state_of(runtime, w1) == state_of(runtime, w2) == "running"

    def all_advance():
        now = published(dash, "w1")
        return now if all(now.get(w, 0) > paused[w] for w in ("w1", "w2", "away")) \
            and late.crawled_lines() > late_pages else None

    wait_for(all_advance, "every worker crawls again", timeout_s=WAIT_S, poll_s=0.5)

    # Stop: each worker ends, with finish_reason shutdown
    status, _, body = dash.post(f"/api/shared/{id_of['w1']}/stop")
    assert status == 200, body
    assert json.loads(body)["ok"] is True
    for crawl in (w1, w2, away, late):
        crawl.proc.wait(timeout=WAIT_S)
        assert re.search(r"'finish_reason': 'shutdown'", crawl.log_text()), crawl.log_text()[-3000:]


@pytest.mark.slow
def test_a_whole_crawl_command_refused_as_json(runtime, server, tmp_path, procs, redis_server):
    """Not a shared crawl: 409 naming it; no such crawl: 404; by GET: 405; without the
    token or from another Origin: 403; nothing changes."""
    alone = LiveCrawl(runtime, tmp_path / "alone", server.url, pages=3000, name="alone")
    procs.append(alone)
    proc, dash = start_dashboard(runtime)
    procs.append(proc)
    entry = wait_for(lambda: (dash.get_json("/api/crawls") or [None])[0], "the crawl listed")
    path = f"/api/shared/{entry['id']}/pause"
    status, headers, body = dash.post(path)
    assert status == 409 and headers["Content-Type"] == "application/json"
    assert json.loads(body) == {"ok": False, "error": f"crawl {entry['id']} is no worker of a "
                                "shared crawl (or has not published its figures yet: they "
                                "come within 2 s of its start)"}
    assert dash.post("/api/shared/1-none-1/pause")[0] == 404
    assert dash.request("GET", path, dash.auth())[0] == 405
    assert dash.request("POST", path)[0] == 403
    assert dash.post(path, {"Origin": "http://evil.example"})[0] == 403
    # the control message itself, on the crawl's socket: refused, naming why
    with pytest.raises(ControlError, match="crawl slow-1 is no worker of a shared crawl "
                                           r"\(FRONTIER_URL is not set\)"):
        ControlClient(alone.socket).ask({"type": "command_shared_crawl", "crawl_id": "slow-1",
                                         "command": "stop", "reason": "shutdown"})
    assert state_of(runtime, alone) == "running"


@pytest.mark.slow
def test_with_redis_down_the_workers_here_are_reached_and_the_answer_says_who_was_not(
        runtime, server, tmp_path, procs, redis_server):
    """The command cannot be written in Redis: the workers here still take it over their
    control endpoints, and the answer names the one elsewhere as not reached, and why."""
    w1, w2 = (worker(runtime, tmp_path, server, redis_server, w) for w in ("w1", "w2"))
    away = worker(runtime, tmp_path, server, redis_server, "away", "-s", "CONTROL_ENDPOINT=False")
    procs += [w1, w2, away]
    proc, dash = start_dashboard(runtime)
    procs.append(proc)
    crawls = wait_for(lambda: (c := dash.get_json("/api/crawls")) and len(c) == 2 and all(
        e["shared"] and {w["worker"] for w in e["workers"]} == {"w1", "w2", "away"} for e in c)
        and c, "two workers listed here, three publishing", poll_s=0.2)
    id_of = {c["worker"]: c["id"] for c in crawls}
    redis_server.stop()

    status, _, body = dash.post(f"/api/shared/{id_of['w2']}/pause")
    assert status == 200, body
    answer = json.loads(body)
    assert answer["ok"] is False and answer["published"] is None
    assert "was not written in Redis" in answer["error"]
    how = {w["worker"]: (w["reached"], w["via"]) for w in answer["workers"]}
    assert how == {"w1": (True, "control"), "w2": (True, "control"), "away": (False, None)}
    away_entry = next(w for w in answer["workers"] if w["worker"] == "away")
    assert away_entry["error"].startswith("not written in Redis: ")
    assert state_of(runtime, w1) == state_of(runtime, w2) == "paused"
