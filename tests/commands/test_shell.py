"""``crawlfw shell``: ``-c CODE`` runs against a live crawl (``fetch`` goes through the
running engine), the console on a pipe (code.interact) and on a terminal (ptpython)."""

import os
import re
import select
import subprocess
import sys
import time

import pytest

from tests.commands.conftest import crawlfw_env, write
from tests.support.servers import StaticSiteServer

pytestmark = pytest.mark.slow


def test_code_prints_the_value(crawlfw, quotes):
    result = crawlfw("shell", "--nolog", "-c", "response.status", f"{quotes.url}/")
    assert (result.returncode, result.stdout) == (0, "200\n"), result.stderr


def test_fetch_uses_the_live_engine(crawlfw, quotes):
    code = (f"fetch('{quotes.url}/page/2'); fetch('{quotes.url}/page/3/'); "
            "stats = crawler.stats.get_value; (response.url, crawler.crawling, "
            "stats('downloader/response_count'), stats('response_received_count'))")
    result = crawlfw("shell", "--nolog", "-c", code, f"{quotes.url}/")
    assert result.returncode == 0, result.stderr
    # one crawl downloaded: the first page, /page/2 (301) and /page/2/, /page/3/
    assert result.stdout == f"('{quotes.url}/page/3/', True, 4, 3)\n"


def test_fetch_follows_redirects_through_the_middlewares(crawlfw, quotes):
    result = crawlfw("shell", "--nolog", "-c",
                     f"fetch('{quotes.url}/page/2'); response.url, request.url")
    assert result.stdout == f"('{quotes.url}/page/2/', '{quotes.url}/page/2')\n", result.stderr
    result = crawlfw("shell", "--nolog", "-c",
                     f"fetch('{quotes.url}/page/2', redirect=False); response.status")
    assert result.stdout == "301\n", result.stderr


def test_without_url(crawlfw):
    result = crawlfw("shell", "--nolog", "-c", "response, request, spider.name, type(item)")
    assert result.stdout == "(None, None, 'default', <class 'crawlfw.item.Item'>)\n", \
        result.stderr


def test_statements_only_print_nothing(crawlfw):
    result = crawlfw("shell", "--nolog", "-c", "x = 1\nif x:\n    y = 2")
    assert (result.returncode, result.stdout) == (0, ""), result.stderr


def test_local_file(crawlfw, sites_dir, tmp_path):
    page = sites_dir / "quotes.toscrape.com" / "page" / "2" / "index.html"
    result = crawlfw("shell", "--nolog", "-c",
                     "response.status, len(response.body), response.css('title::text')"
                     ".extract_first()", page)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"(200, {page.stat().st_size}, 'Quotes to Scrape')\n"
    write(tmp_path / "here.html", "<html><head><title>here</title></head></html>")
    result = crawlfw("shell", "--nolog", "-c", "response.css('title::text').extract_first()",
                     "./here.html")
    assert result.stdout == "here\n", result.stderr


def test_project_spider(crawlfw, project, quotes):
    write(project / "testproj" / "spiders" / "named.py", """
        import crawlfw

        class Named(crawlfw.Spider):
            name = "named"
            start_urls = ["http://127.0.0.1:1/never-fetched"]
    """)
    result = crawlfw("shell", "--nolog", "--spider", "named", "-c",
                     "spider.name, response.status, crawler.stats.get_value("
                     "'downloader/request_count')", f"{quotes.url}/", cwd=project,
                     env={"CRAWLFW_ROBOTSTXT_OBEY": "False"})
    # the spider's own start URLs are not fetched: only the shell's request was
    assert result.stdout == "('named', 200, 1)\n", result.stderr


def test_download_error(crawlfw, unused_port):
    result = crawlfw("shell", "--nolog", "-c", "response", f"http://127.0.0.1:{unused_port}/")
    assert result.returncode == 1
    assert result.stdout == ""
    assert f"Error fetching http://127.0.0.1:{unused_port}/: ConnectionRefusedError" \
        in result.stderr


def test_code_error(crawlfw):
    result = crawlfw("shell", "--nolog", "-c", "x = 1\n1 / 0")
    assert result.returncode == 1
    assert result.stderr.startswith("Traceback (most recent call last):\n"
                                    '  File "<shell -c>", line 2, in <module>\n')
    assert result.stderr.rstrip().endswith("ZeroDivisionError: division by zero")


def test_unknown_spider(crawlfw):
    result = crawlfw("shell", "--spider", "nope", "-c", "1")
    assert result.returncode == 1
    assert "Spider not found: nope" in result.stderr


def test_console_on_a_pipe(crawlfw, quotes):
    lines = ["response.status * 2", f"fetch('{quotes.url}/page/2/')", "response.url",
             "shelp()"]
    result = crawlfw("shell", "--nolog", f"{quotes.url}/", input="\n".join(lines) + "\n")
    assert result.returncode == 0, result.stderr
    assert "400\n" in result.stdout
    assert f"'{quotes.url}/page/2/'\n" in result.stdout
    banner = result.stderr  # code.interact writes its banner to stderr
    assert "[s] Available crawlfw objects:" in banner
    assert f"[s]   response   <200 {quotes.url}/>" in banner
    assert "[s]   fetch(url[, redirect=True])" in banner
    assert f"[s]   response   <200 {quotes.url}/page/2/>" in result.stdout  # shelp()


# --- on a terminal ----------------------------------------------------------------------


class _Terminal:
    """``crawlfw shell`` on a pseudo-terminal, answering prompt_toolkit's cursor position
    requests. Every wait is bounded by a deadline."""

    def __init__(self, args, cwd, env=None, nolog=True):
        import pty

        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "crawlfw.cmdline", "shell", *(["--nolog"] if nolog else []),
             *args],
            stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=crawlfw_env(env),
            start_new_session=True)
        os.close(slave)
        self.output = b""

    def expect(self, pattern: bytes, timeout_s=30.0) -> bool:
        deadline = time.monotonic() + timeout_s
        while not re.search(pattern, self.output):
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            ready, _, _ = select.select([self.master], [], [], left)
            if not ready:
                continue
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # the process closed the terminal
                return bool(re.search(pattern, self.output))
            if b"\x1b[6n" in chunk:
                os.write(self.master, b"\x1b[1;1R")
            self.output += chunk
        return True

    def send(self, line: str):
        self.output = b""
        os.write(self.master, line.encode() + b"\r")

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        os.close(self.master)


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
@pytest.mark.parametrize("shell_env, ptpython", [
    ({}, True),
    ({"CRAWLFW_PYTHON_SHELL": "python"}, False),
    ({"CRAWLFW_PYTHON_SHELL": "nosuchshell"}, False),
])
def test_console_on_a_terminal(quotes, tmp_path, shell_env, ptpython):
    term = _Terminal([f"{quotes.url}/"], tmp_path, env=shell_env)
    try:
        assert term.expect(rb">>>"), term.output
        # ptpython asks for the cursor position; the standard console never does
        assert (b"\x1b[6n" in term.output) == ptpython, term.output
        term.send("response.status * 2")
        assert term.expect(rb"400"), term.output
        term.send(f"fetch('{quotes.url}/page/4/'); print('URL=' + response.url)")
        assert term.expect(rf"URL={quotes.url}/page/4/\r?\n".encode()), term.output
        term.send("exit()")
        assert term.proc.wait(timeout=30) == 0
    finally:
        term.close()


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_shell_option_of_the_config_file(project, quotes):
    cfg = (project / "crawlfw.cfg").read_text()
    (project / "crawlfw.cfg").write_text(cfg.replace("[settings]\n",
                                                     "[settings]\nshell = python\n"))
    term = _Terminal([f"{quotes.url}/"], project)
    try:
        assert term.expect(rb">>>"), term.output
        assert b"\x1b[6n" not in term.output  # the standard console, not ptpython
        term.send("exit()")
        assert term.proc.wait(timeout=30) == 0
    finally:
        term.close()


@pytest.fixture
def small_site(tmp_path):
    root = tmp_path / "site"
    write(root / "index.html", "<html><body><p>hello</p></body></html>")
    server = StaticSiteServer(root).start()
    yield server
    server.stop()


def test_console_libraries_stay_at_warning_and_no_stats_dump(crawlfw, small_site):
    code = ("import logging; logging.getLogger('parso.python.diff').debug('PARSO-NOISE'); "
            "logging.getLogger('asyncio').debug('ASYNCIO-NOISE'); "
            "logging.getLogger('asyncio').warning('ASYNCIO-WARNING'); response.status")
    result = crawlfw("shell", "-c", code, f"{small_site.url}/")  # default level: DEBUG
    assert (result.returncode, result.stdout) == (0, "200\n"), result.stderr
    assert f"Crawled (200) <GET {small_site.url}/>" in result.stderr  # crawlfw's DEBUG
    assert "NOISE" not in result.stderr
    assert "ASYNCIO-WARNING" in result.stderr
    assert "Dumping crawlfw stats" not in result.stderr
    assert "'finish_reason'" not in result.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_ptpython_at_the_default_log_level_prints_no_library_debug(small_site, tmp_path):
    term = _Terminal([f"{small_site.url}/"], tmp_path, nolog=False)
    try:
        assert term.expect(rb">>>"), term.output
        seen = term.output
        term.send("response.status * 2")
        assert term.expect(rb"400"), term.output
        seen += term.output
        term.send("respo\t")  # a completion (jedi/parso)
        time.sleep(0.5)  # let the completion run; nothing to wait for on the screen
        term.send("")
        assert term.expect(rb">>>"), term.output
        seen += term.output
        term.send("exit()")
        assert term.proc.wait(timeout=30) == 0
        term.expect(rb"$^", timeout_s=0.5)
        seen += term.output
    finally:
        term.close()
    assert b"Using selector" not in seen
    assert b"[parso" not in seen and b"[asyncio] DEBUG" not in seen
    assert b"Dumping crawlfw stats" not in seen
