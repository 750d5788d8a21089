"""The ``domain_guard`` example: a user actor (``ACTORS``) that counts error responses per
host and blocks a host after ``DOMAIN_GUARD_MAX_ERRORS`` of them, in a real crawl of two
hosts of a local server (127.0.0.1 answers 500, localhost 200), in process and through
the CLI."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.countserver import CountingServer
from tests.support.crawl import run_crawl

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture
def server():
    s = CountingServer()
    yield s
    s.stop()


def site_urls(server, bad=20, good=5):
    port = server.url.rsplit(":", 1)[1]
    return ([f"{server.url}/status/500/{i}" for i in range(bad)]
            + [f"http://localhost:{port}/page/{i}" for i in range(good)])


def test_guard_blocks_the_failing_host_only(server, monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    from domain_guard import GuardedSpider

    urls = site_urls(server)
    result = run_crawl(GuardedSpider, {"DOMAIN_GUARD_MAX_ERRORS": 3, "RETRY_ENABLED": False,
                                       "CONCURRENT_REQUESTS": 1}, urls=",".join(urls))
    assert result.finish_reason == "finished"
    fetched = [p for p in server.paths if p.startswith("/status/500/")]
    # Blocked after the third error; the requests already on their way when the guard
    # decided may still go out (its events and commands are messages): at most one here.
    assert 3 <= len(fetched) <= 4
    errors = [i for i in result.items if "error" in i]
    assert len(errors) == 20 - len(fetched)
    assert all("download slot 127.0.0.1 is blocked: 3 error responses" in i["error"]
               for i in errors)
    good = sorted(i["url"] for i in result.items if i.get("status") == 200)
    assert good == sorted(urls[20:])
    assert result.stats["domain_guard/blocked"] == 1
    assert result.stats["domain_guard/errors/127.0.0.1"] == len(fetched)


@pytest.mark.slow
def test_guard_from_the_command_line(server, tmp_path):
    urls = site_urls(server, bad=8, good=2)
    out = tmp_path / "items.jl"
    proc = subprocess.run(
        [sys.executable, "-m", "crawlfw.cmdline", "runspider", str(EXAMPLES / "domain_guard.py"),
         "-a", "urls=" + ",".join(urls), "-o", str(out), "-s", "DOMAIN_GUARD_MAX_ERRORS=2",
         "-s", "RETRY_ENABLED=0", "-s", "CONCURRENT_REQUESTS=1", "-s", "CONTROL_ENDPOINT=0"],
        capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-3000:]
    items = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(items) == 10
    assert sum("error" in i for i in items) >= 5
    assert "127.0.0.1 answered 2 errors: no more requests to it" in proc.stderr
