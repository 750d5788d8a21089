"""A command that fails says why in one line on standard error, whatever the log settings
(issue 35): ``--nolog``, ``-L CRITICAL``, ``-s LOG_ENABLED=False`` and ``LOG_FILE`` keep
the log off standard error, so the reason is printed there as well; with the log on
standard error it is said once, by the log. Start-up errors of ``crawl`` are logged under
``crawlfw.commands.crawl``, those of ``runspider`` under ``crawlfw.commands.runspider``."""

import pytest

from tests.commands.conftest import write

pytestmark = pytest.mark.slow

SPIDER = """
    import crawlfw


    class PagesSpider(crawlfw.Spider):
        name = "pages"
        base = "http://127.0.0.1:1"

        def start_requests(self):
            yield crawlfw.Request(self.base + "/")

        def parse(self, response):
            yield {"url": response.url}
"""

CONNECTION_REFUSED = "Error downloading <GET http://127.0.0.1:{port}/>: ConnectionRefusedError: "
# (the rest of the line is the feed code's: pinned in test_exit_status.py)
BAD_FEED = "Crawl could not start: Cannot open the feed /proc/nope/items.jl"
BAD_SETTING = ("Crawl could not start: Setting 'CONCURRENT_REQUESTS' must be an integer, got "
               "'abc' (set with -s on the command line)")

#: log options that keep ERROR lines off standard error ("{log}": a file in tmp_path)
QUIET = {
    "--nolog": ["--nolog"],
    "-L CRITICAL": ["-L", "CRITICAL"],
    "LOG_ENABLED=False": ["-s", "LOG_ENABLED=False"],
    "LOG_FILE": ["-s", "LOG_FILE={log}"],
}


@pytest.fixture
def pages_project(project):
    write(project / "testproj" / "spiders" / "pages.py", SPIDER)
    return project


def _quiet(name, tmp_path):
    return [arg.format(log=tmp_path / "crawl.log") for arg in QUIET[name]]


def _case(name, port):
    """(args, the one line expected) of each failing command."""
    return {
        "fetch": (["fetch", f"http://127.0.0.1:{port}/"], CONNECTION_REFUSED.format(port=port)),
        "unwritable feed": (["crawl", "pages", "-o", "/proc/nope/items.jl"], BAD_FEED),
        "malformed setting": (["crawl", "pages", "-s", "CONCURRENT_REQUESTS=abc"],
                              BAD_SETTING),
    }[name]


@pytest.mark.parametrize("quiet", list(QUIET))
@pytest.mark.parametrize("case", ["fetch", "unwritable feed", "malformed setting"])
def test_the_reason_is_on_stderr_whatever_the_log_settings(
        crawlfw, pages_project, tmp_path, unused_port, case, quiet):
    args, expected = _case(case, unused_port)
    result = crawlfw(*args, *_quiet(quiet, tmp_path), cwd=pages_project)
    assert result.returncode == 1, result.stderr
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()  # the reason, alone, once
    assert line.startswith(expected), line
    if quiet == "LOG_FILE":  # logged there, under the command's logger
        logged = (tmp_path / "crawl.log").read_text()
        command = args[0]
        assert f"[crawlfw.commands.{command}] ERROR: " in logged or (
            # the scraper logged the download error
            command == "fetch" and "[crawlfw.core.flow.scraper] ERROR: Error downloading" in logged)


@pytest.mark.parametrize("case", ["fetch", "unwritable feed", "malformed setting"])
def test_said_once_when_the_log_is_on_stderr(crawlfw, pages_project, unused_port, case):
    args, expected = _case(case, unused_port)
    result = crawlfw(*args, cwd=pages_project)
    assert result.returncode == 1, result.stderr
    # the retry middleware's "Gave up retrying" is an ERROR of its own (Scrapy 2.5+)
    errors = [line for line in result.stderr.splitlines() if "] ERROR: " in line
              and "robots.txt" not in line and "Gave up retrying" not in line]
    (error,) = errors
    if case == "fetch":
        assert "[crawlfw.core.flow.scraper] ERROR: Error downloading <GET" in error
    else:
        assert f"[crawlfw.commands.crawl] ERROR: {expected}" in error
    # not printed again as a bare line
    assert not [line for line in result.stderr.splitlines() if line.startswith(expected)]


def test_start_errors_of_runspider_are_under_its_logger(crawlfw, tmp_path):
    spider = write(tmp_path / "pages.py", SPIDER)
    result = crawlfw("runspider", spider, "-s", "CONCURRENT_REQUESTS=abc")
    assert result.returncode == 1
    assert f"[crawlfw.commands.runspider] ERROR: {BAD_SETTING}" in result.stderr


def test_a_failed_crawl_says_its_reason_with_nolog(crawlfw, pages_project):
    from tests.downloadermiddlewares._support import ScriptedServer

    page = (200, [("Content-Type", "text/html")], b"<html><body>page</body></html>")
    with ScriptedServer({"/": page}) as server:
        result = crawlfw("crawl", "pages", "--nolog", "-a", f"base={server.url}",
                         "-s", "ROBOTSTXT_OBEY=False", "-o", "/dev/full", "-t", "jsonlines",
                         cwd=pages_project)
    assert result.returncode == 1
    assert result.stderr.splitlines() == ["Crawl failed: finish_reason 'feed_failed'"]


def test_robots_txt_drop_is_said(crawlfw, tmp_path):
    """A request dropped by a middleware (robots.txt) is not logged at ERROR: fetch says
    why nothing was printed."""
    from tests.downloadermiddlewares._support import ScriptedServer

    robots = (200, [("Content-Type", "text/plain")], b"User-agent: *\nDisallow: /\n")
    with ScriptedServer({"/robots.txt": robots}) as server:
        result = crawlfw("fetch", "--nolog", "-s", "ROBOTSTXT_OBEY=True", f"{server.url}/x")
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"Nothing was downloaded: <GET {server.url}/x> was dropped (Forbidden by robots.txt)"]


def test_an_unknown_log_level_is_a_usage_error(crawlfw, pages_project):
    result = crawlfw("crawl", "pages", "-L", "LOUD", cwd=pages_project)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "Usage error: Invalid -L value 'LOUD', use one of CRITICAL, ERROR, WARNING, INFO, "
        "DEBUG"]  # was a traceback from logging


@pytest.mark.parametrize("where, source", [("-s", "-s"), ("settings.py", "the project's settings")])
def test_an_unknown_log_level_setting_is_a_usage_error(crawlfw, pages_project, where, source):
    args = ["crawl", "pages"]
    if where == "-s":
        args += ["-s", "LOG_LEVEL=LOUD"]
    else:
        settings = pages_project / "testproj" / "settings.py"
        settings.write_text(settings.read_text() + "\nLOG_LEVEL = 'LOUD'\n")
    result = crawlfw(*args, cwd=pages_project)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"Usage error: Invalid LOG_LEVEL 'LOUD' (set in {source}), use one of CRITICAL, ERROR, "
        "WARNING, INFO, DEBUG or a number"]  # was a traceback from logging's setLevel
