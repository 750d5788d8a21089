"""Helpers for the ``crawlfw`` command tests: every test runs the real command line in a
subprocess (``python -m crawlfw.cmdline``), bounded by a timeout, against local servers."""

import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.proc import crawlfw_env

REPO_ROOT = Path(__file__).resolve().parents[2]

#: Seconds any one command may take before the test fails.
COMMAND_TIMEOUT_S = 90


def run_crawlfw(*args, cwd, env=None, input=None, timeout=COMMAND_TIMEOUT_S):  # noqa: A002
    """Run ``crawlfw <args>`` in ``cwd``; return the CompletedProcess (text stdout/stderr).

    ``stdin`` is ``input`` (str) or empty, never the terminal.
    """
    return subprocess.run(
        [sys.executable, "-m", "crawlfw.cmdline", *map(str, args)],
        cwd=str(cwd), env=crawlfw_env(env), input=input or "", capture_output=True,
        text=True, timeout=timeout,
    )


def write(path: Path, text: str) -> Path:
    """Write dedented ``text`` to ``path`` (parents created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


@pytest.fixture
def crawlfw(tmp_path):
    """``crawlfw(*args, cwd=tmp_path, env=None, input=None)`` -> CompletedProcess."""

    def run(*args, cwd=None, env=None, input=None, timeout=COMMAND_TIMEOUT_S):  # noqa: A002
        return run_crawlfw(*args, cwd=cwd or tmp_path, env=env, input=input, timeout=timeout)

    return run


@pytest.fixture
def unused_port():
    """A TCP port on 127.0.0.1 nothing listens on (connections are refused). The port
    stays bound, without ``listen()``, for the whole test, so no other test process can
    take it meanwhile (pytest-xdist)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


@pytest.fixture
def project(tmp_path):
    """A project made by ``crawlfw startproject testproj`` in ``tmp_path``; returns its
    directory (the one holding crawlfw.cfg)."""
    result = run_crawlfw("startproject", "testproj", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return tmp_path / "testproj"


@pytest.fixture
def quotes(site_server):
    """The local copy of quotes.toscrape.com; ``.url`` is ``http://127.0.0.1:PORT``."""
    return site_server("quotes.toscrape.com")


#: A project spider for the quotes site: one item per quote, follows "Next".
QUOTES_SPIDER = '''
import crawlfw


class QuotesSpider(crawlfw.Spider):
    name = "quotes"
    allowed_domains = ["127.0.0.1"]
    base_url = "http://127.0.0.1:1"
    max_pages = 1000

    def start_requests(self):
        yield crawlfw.Request(self.base_url + "/", callback=self.parse)

    def parse(self, response):
        for quote in response.css("div.quote"):
            yield {
                "text": quote.css("span.text::text").extract_first(),
                "author": quote.css("small.author::text").extract_first(),
                "tags": quote.css("div.tags a.tag::text").extract(),
            }
        next_href = response.css("li.next a::attr(href)").extract_first()
        page = response.meta.get("page", 1)
        if next_href and page < int(self.max_pages):
            yield crawlfw.Request(response.urljoin(next_href), callback=self.parse,
                                  meta={"page": page + 1})

    def parse_author(self, response):
        yield {"name": response.css("h3.author-title::text").extract_first().strip(),
               "born": response.css("span.author-born-date::text").extract_first()}
'''


@pytest.fixture
def quotes_project(project):
    """:func:`project` with the ``quotes`` spider (``QUOTES_SPIDER``) in it."""
    write(project / "testproj" / "spiders" / "quotes.py", QUOTES_SPIDER)
    return project
