"""The wheel carries what the runtime reads from disk (conf/ schemas, templates, the
dashboard's page)."""

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

# pip builds the wheel in this source tree (build/, *.egg-info): under pytest-xdist these
# tests and tests/commands/test_packaging.py share one worker (--dist loadgroup), so no
# two builds write there at once.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("wheel")]

REPO = Path(__file__).resolve().parents[1]


def test_wheel_contains_message_schemas_and_templates(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path), str(REPO)],
        check=True, timeout=300, capture_output=True,
    )
    (wheel,) = tmp_path.glob("crawlfw-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "crawlfw/conf/schemas/messages.json" in names
    assert "crawlfw/actors/supervisor.py" in names
    templates = {
        str(p.relative_to(REPO)) for p in (REPO / "crawlfw" / "templates").rglob("*") if p.is_file()
    }
    assert templates <= names
    # The dashboard's page and its vendored chart library: nothing comes from a CDN.
    static = {str(p.relative_to(REPO)) for p in (REPO / "crawlfw" / "dashboard" / "static").iterdir()
              if p.is_file()}
    assert {"crawlfw/dashboard/static/index.html", "crawlfw/dashboard/static/uPlot.iife.min.js",
            "crawlfw/dashboard/static/uPlot.LICENSE"} <= static <= names


def test_wheel_is_typed_licensed_and_classified(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path), str(REPO)],
        check=True, timeout=300, capture_output=True,
    )
    (wheel,) = tmp_path.glob("crawlfw-*.whl")
    zf = zipfile.ZipFile(wheel)
    names = set(zf.namelist())
    assert "crawlfw/py.typed" in names  # PEP 561: type checkers read the package's hints
    licenses = [n for n in names if n.endswith("/LICENSE") and ".dist-info/" in n]
    assert licenses, sorted(n for n in names if ".dist-info/" in n)
    assert "BSD 3-Clause License" in zf.read(licenses[0]).decode()
    (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
    meta = zf.read(metadata).decode()
    assert "License-Expression: BSD-3-Clause" in meta
    for classifier in ("Typing :: Typed", "Programming Language :: Python :: 3 :: Only",
                       "Topic :: Internet :: WWW/HTTP"):
        assert f"Classifier: {classifier}" in meta


USER_SPIDER = '''
import crawlfw
from crawlfw.http import TextResponse
from crawlfw.linkextractors import LinkExtractor


class QuotesSpider(crawlfw.Spider):
    name = "quotes"
    start_urls = ["http://quotes.toscrape.com/"]

    def parse(self, response: TextResponse):
        for quote in response.css("div.quote"):
            text: str = quote.css("span.text::text").get()
            tags: list[str] = quote.css("a.tag::text").getall()
            yield {"text": text, "tags": tags, "n": len(response.xpath("//a")[0].attrib)}
        for link in LinkExtractor().extract_links(response):
            yield crawlfw.Request(link.url.upper())
        for request in self.start_requests():
            yield request.replace(priority=1)
'''


def test_public_api_is_typed_for_mypy(tmp_path):
    """A user's spider is checked against crawlfw's hints: ``get()`` may be None."""
    pytest.importorskip("mypy")
    spider = tmp_path / "user_spider.py"
    spider.write_text(USER_SPIDER)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--follow-imports=silent",
         "--ignore-missing-imports", "--cache-dir", str(tmp_path / "cache"), str(spider)],
        cwd=tmp_path, env={**os.environ, "MYPYPATH": str(REPO)}, capture_output=True,
        text=True, timeout=300,
    )
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1, result.stdout
    assert 'Incompatible types in assignment (expression has type "str | None", variable has type "str")' in errors[0]
    assert "user_spider.py:13:" in errors[0]
