"""README's first command works with nothing but the repository: it installs crawlfw
and crawls ``examples/quotes_site`` (kept in the repository) into ``quotes.jl``.

The test runs that command's crawl part as written (the ``pip install -e .`` step is
the test environment's own install), in a directory holding only a copy of
``examples/``, with the port changed to a free one. The expected items are read from
the site's files with lxml, independently of crawlfw.

It also holds README's "Where things live" to its promise (issue 19): at most ten lines
naming the folder of each subsystem, every path it names existing.
"""

import json
import os
import re
import socket
import stat
import subprocess
import sys
from pathlib import Path

import lxml.html
import pytest

REPO = Path(__file__).resolve().parents[1]
SITE = REPO / "examples" / "quotes_site"


def first_command() -> str:
    blocks = re.findall(r"```sh\n(.*?)\n```", (REPO / "README.md").read_text(), re.S)
    return blocks[0].strip()


def expected_items():
    quotes, authors = [], {}
    for n in (1, 2):
        doc = lxml.html.parse(str(SITE / "page" / str(n) / "index.html")).getroot()
        for q in doc.find_class("quote"):
            quotes.append({
                "type": "quote",
                "text": q.xpath('.//span[@class="text"]/text()')[0],
                "author": q.xpath('.//small[@class="author"]/text()')[0],
                "tags": q.xpath('.//a[@class="tag"]/text()'),
            })
            href = q.xpath(".//span/a/@href")[0]
            adoc = lxml.html.parse(str(SITE / href.strip("/") / "index.html")).getroot()
            authors[href] = {
                "type": "author",
                "name": adoc.xpath('//h3[@class="author-title"]/text()')[0].strip(),
                "birth_date": adoc.xpath('//span[@class="author-born-date"]/text()')[0],
                "birth_place": adoc.xpath('//span[@class="author-born-location"]/text()')[0]
                .removeprefix("in "),
            }
    return quotes, authors


def test_first_command_needs_only_the_repository():
    command = first_command()
    assert command.startswith("pip install -e . && ")
    assert "../shared" not in command and "examples/quotes_site" in command
    assert "-O quotes.jl" in command


@pytest.mark.slow
def test_first_command_crawls_the_example_site(tmp_path):
    command = first_command().removeprefix("pip install -e . && ")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    command = command.replace("8321", str(port))
    work = tmp_path / "clone"
    work.mkdir()
    subprocess.run(["cp", "-r", str(REPO / "examples"), str(work)], check=True)
    # `crawlfw` on PATH runs this source tree (what `pip install -e .` provides)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    shim = bindir / "crawlfw"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m crawlfw.cmdline "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH"))
                                          if p))
    result = subprocess.run(["bash", "-c", command], cwd=work, env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    items = [json.loads(line) for line in (work / "quotes.jl").read_text().splitlines()]
    assert result.stdout.splitlines() == (work / "quotes.jl").read_text().splitlines()[:3]
    quotes, authors = expected_items()
    assert [i for i in items if i["type"] == "quote"] == quotes
    got_authors = sorted((i for i in items if i["type"] == "author"), key=lambda i: i["name"])
    assert [{k: v for k, v in a.items() if k != "url"} for a in got_authors] == sorted(
        authors.values(), key=lambda a: a["name"])
    assert len(quotes) == 6 and len(authors) == 4


def where_things_live() -> str:
    """The body of README's "Where things live" section (up to the next heading)."""
    text = (REPO / "README.md").read_text()
    match = re.search(r"^## Where things live\n(.*?)^## ", text, re.S | re.M)
    assert match, 'README.md has no "## Where things live" section'
    return match.group(1)


def test_where_things_live_fits_in_ten_lines():
    lines = [line for line in where_things_live().splitlines()
             if line.strip() and not line.startswith("```")]
    assert 0 < len(lines) <= 10, lines


def test_where_things_live_names_each_subsystem_folder():
    # a newcomer finds the transport, frontier, flow, feeds and control code, the actors
    # and the Scrapy-compatible packages from this section alone
    named = set(re.findall(r"\bcrawlfw/[\w/.]*", where_things_live()))
    for folder in ("core/transport/", "core/frontier/", "core/flow/", "core/feeds/",
                   "core/control/", "actors/", "http/", "selector/", "spiders/"):
        assert f"crawlfw/{folder}" in named, folder


def test_every_path_where_things_live_names_exists():
    named = sorted(set(re.findall(r"\bcrawlfw/[\w/.]*", where_things_live())))
    assert len(named) >= 10
    missing = [path for path in named if not (REPO / path).exists()]
    assert missing == [], f"README's 'Where things live' names paths that do not exist: {missing}"
