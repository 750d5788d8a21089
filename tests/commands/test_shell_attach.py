"""``crawlfw shell --attach``: the console on a crawl running in another process, on a
pipe (the standard console) and on a pseudo-terminal (ptpython)."""

import sys

import pytest

from tests.commands.test_shell import _Terminal
from tests.support.countserver import CountingServer
from tests.support.live import LiveCrawl

pytestmark = pytest.mark.slow


@pytest.fixture
def server():
    s = CountingServer(hold_s=0.1)
    yield s
    s.stop()


@pytest.fixture
def crawl(runtime, server, tmp_path):
    c = LiveCrawl(runtime, tmp_path, server.url, pages=400)
    c.wait_listed(min_pages=1)
    yield c
    c.kill()


def test_attach_on_a_pipe(crawl, runtime, server):
    lines = [
        "stats.get_value('response_received_count') > 0",
        "pause()",
        "status()['state']",
        "fetch('http://127.0.0.1:1/')",  # refused while paused: no download starts
        "resume()",
        f"fetch('{server.url}/page/7')",
        "response.status, response.css('title::text').get(), type(response).__name__",
        "request.url",
        f"schedule('{server.url}/slow/extra', callback='parse_extra')",
        "schedule('/relative')",
        "stop()",
    ]
    result = runtime.cli("shell", "--attach", input="\n".join(lines) + "\n")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "True\n" in out
    assert "paused slow-1\n" in out
    assert "'paused'\n" in out
    assert "crawl slow-1 is paused: no download starts until it is resumed" in result.stderr
    assert "resumed slow-1\n" in out
    assert "(200, 'page 7', 'HtmlResponse')\n" in out
    assert f"'{server.url}/page/7'\n" in out
    assert f"scheduled {server.url}/slow/extra\n" in out
    assert "bad URL '/relative'" in result.stderr
    assert "stopping slow-1\n" in out
    banner = result.stderr  # code.interact writes its banner to stderr
    assert f"[s] Attached to crawl slow-1 (spider slow, pid {crawl.pid})" in banner
    assert crawl.wait(30) == 0, crawl.log_text()
    assert "'finish_reason': 'shutdown'" in crawl.log_text()
    assert "/page/7" in server.paths  # fetched by the crawl process, not the shell
    assert "Crawled (200) <GET " + server.url + "/page/7>" in crawl.log_text()


def test_attach_code_option_and_no_crawl(crawl, runtime):
    result = runtime.cli("shell", "--attach", "slow", "-c", "status()['spider']")
    assert (result.returncode, result.stdout) == (0, "slow\n")
    result = runtime.cli("shell", "--attach", "nope", "-c", "1")
    assert result.returncode == 1
    assert result.stderr.startswith("No running crawl matches 'nope'")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_attach_on_a_terminal_uses_ptpython(crawl, runtime, server, tmp_path):
    term = _Terminal(["--attach"], tmp_path,
                     env={"XDG_RUNTIME_DIR": str(runtime.path)})
    try:
        assert term.expect(rb">>>"), term.output
        assert b"\x1b[6n" in term.output  # ptpython asks for the cursor position
        term.send("pause(); print('STATE=' + status()['state'])")
        assert term.expect(rb"STATE=paused\r?\n"), term.output
        term.send("resume()")
        assert term.expect(rb"resumed slow-1"), term.output
        term.send(f"fetch('{server.url}/page/4'); print('URL=' + response.url)")
        assert term.expect(rf"URL={server.url}/page/4\r?\n".encode()), term.output
        term.send("exit()")
        assert term.proc.wait(timeout=30) == 0
    finally:
        term.close()
    assert crawl.proc.poll() is None  # leaving the shell leaves the crawl running
