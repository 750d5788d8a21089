"""``crawlfw crawl <spider>``: a project spider crawls the local quotes site, with spider
arguments and feed output; errors exit 1 (spider) or 2 (usage)."""

import csv
import json

import lxml.html
import pytest

from tests.commands.conftest import write

pytestmark = pytest.mark.slow


def expected_quotes(sites_dir, pages):
    """The quotes of the first ``pages`` listing pages, read with lxml directly."""
    root = sites_dir / "quotes.toscrape.com"
    files = [root / "index.html"] + [root / "page" / str(n) / "index.html"
                                     for n in range(2, pages + 1)]
    quotes = []
    for path in files:
        doc = lxml.html.fromstring(path.read_bytes())
        for div in doc.xpath('//div[@class="quote"]'):
            quotes.append({
                "text": div.xpath('string(.//span[@class="text"])'),
                "author": div.xpath('string(.//small[@class="author"])'),
                "tags": div.xpath('.//div[@class="tags"]/a[@class="tag"]/text()'),
            })
    return quotes


def test_crawls_with_arguments_into_a_feed(crawlfw, quotes_project, quotes, sites_dir):
    out = quotes_project / "out.jl"
    result = crawlfw("crawl", "quotes", "-a", f"base_url={quotes.url}", "-a", "max_pages=3",
                     "-o", out, cwd=quotes_project)
    assert result.returncode == 0, result.stderr
    items = [json.loads(line) for line in out.read_text().splitlines()]
    assert items == expected_quotes(sites_dir, 3)
    assert "'finish_reason': 'finished'" in result.stderr
    assert "(bot: testproj)" in result.stderr


@pytest.mark.parametrize("name, fmt, load", [
    ("out.json", None, lambda text: json.loads(text)),
    ("out.csv", None, lambda text: list(csv.DictReader(text.splitlines()))),
    ("out.data", "jsonlines", lambda text: [json.loads(x) for x in text.splitlines()]),
])
def test_feed_formats(crawlfw, quotes_project, quotes, name, fmt, load):
    args = ["-t", fmt] if fmt else []
    result = crawlfw("crawl", "quotes", "-a", f"base_url={quotes.url}", "-a", "max_pages=1",
                     "-o", quotes_project / name, *args, cwd=quotes_project)
    assert result.returncode == 0, result.stderr
    items = load((quotes_project / name).read_text())
    assert len(items) == 10
    assert items[0]["author"] == "Albert Einstein"


@pytest.mark.parametrize("option", ["-o", "-O"])
def test_every_output_option_is_a_feed(crawlfw, quotes_project, quotes, sites_dir, option):
    """Issue 34: ``crawl -o a.json -o a.csv`` wrote only a.csv; each is a feed now, as
    in Scrapy 2 (``-O`` too), each complete."""
    result = crawlfw("crawl", "quotes", "-a", f"base_url={quotes.url}", "-a", "max_pages=2",
                     option, "a.json", option, "a.csv", option, "a.jl", cwd=quotes_project)
    assert result.returncode == 0, result.stderr
    expected = expected_quotes(sites_dir, 2)
    assert json.loads((quotes_project / "a.json").read_text()) == expected
    lines = (quotes_project / "a.jl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == expected
    rows = list(csv.DictReader((quotes_project / "a.csv").read_text().splitlines()))
    assert [(r["text"], r["author"]) for r in rows] == [
        (q["text"], q["author"]) for q in expected]


def test_feed_to_stdout(crawlfw, quotes_project, quotes):
    result = crawlfw("crawl", "quotes", "--nolog", "-a", f"base_url={quotes.url}",
                     "-a", "max_pages=1", "-o", "-", "-t", "jsonlines", cwd=quotes_project)
    assert result.returncode == 0, result.stderr
    items = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(items) == 10


def test_settings_options(crawlfw, quotes_project, quotes, tmp_path):
    log = tmp_path / "crawl.log"
    result = crawlfw("crawl", "quotes", "-a", f"base_url={quotes.url}",
                     "-s", "CLOSESPIDER_PAGECOUNT=2", "-L", "INFO", "--logfile", log,
                     cwd=quotes_project)
    assert result.returncode == 0
    text = log.read_text()
    assert "'finish_reason': 'closespider_pagecount'" in text
    assert " DEBUG: " not in text


def test_unknown_spider(crawlfw, quotes_project):
    result = crawlfw("crawl", "nope", cwd=quotes_project)
    assert result.returncode == 1
    assert result.stderr.strip() == "Spider not found: nope"


def test_spider_that_cannot_start(crawlfw, project):
    write(project / "testproj" / "spiders" / "bad.py", """
        import crawlfw

        class Bad(crawlfw.Spider):
            name = "bad"

            def __init__(self, *args, **kwargs):
                raise RuntimeError("cannot build this spider")
    """)
    result = crawlfw("crawl", "bad", cwd=project)
    assert result.returncode == 1
    assert "cannot build this spider" in result.stderr


@pytest.mark.parametrize("args, message", [
    (["-a", "novalue"], "Invalid -a value, use -a NAME=VALUE"),
    (["-o", "out.xyz"], "xyz"),
    (["-o", "out.jl", "-t", "nosuchformat"], "nosuchformat"),
])
def test_usage_errors(crawlfw, quotes_project, args, message):
    result = crawlfw("crawl", "quotes", *args, cwd=quotes_project)
    assert result.returncode == 2
    assert "Usage error:" in result.stderr
    assert message in result.stderr


def test_one_spider_only(crawlfw, quotes_project):
    assert crawlfw("crawl", "quotes", "other", cwd=quotes_project).returncode == 2
    assert crawlfw("crawl", cwd=quotes_project).returncode == 2


def test_not_available_outside_a_project(crawlfw):
    result = crawlfw("crawl", "quotes")
    assert result.returncode == 2
    assert "Unknown command: crawl" in result.stderr
