"""The quotes example crawls the quotes.toscrape.com copy through a real local HTTP server
(with its 301 slashless-directory redirects) and real pycurl transfers.

Expected values are read from the site's files independently of crawlfw (plain lxml),
so a selector or engine bug cannot make both sides agree by accident.
"""

import json
import subprocess
import sys
from pathlib import Path

import lxml.html
import pytest

from tests.support.crawl import run_crawl

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "examples"))
from quotes import QuotesSpider  # noqa: E402


def _expected(site: Path):
    quotes, authors = [], {}
    for n in range(1, 11):
        doc = lxml.html.parse(str(site / "page" / str(n) / "index.html")).getroot()
        for q in doc.find_class("quote"):
            text = q.xpath('.//span[@class="text"]/text()')[0]
            author = q.xpath('.//small[@class="author"]/text()')[0]
            tags = q.xpath('.//div[@class="tags"]/a[@class="tag"]/text()')
            quotes.append({"type": "quote", "text": text, "author": author, "tags": tags})
            href = q.xpath(".//span/a/@href")[0]
            adoc = lxml.html.parse(str(site / href.strip("/") / "index.html")).getroot()
            authors[href.rstrip("/") + "/"] = {
                "type": "author",
                "name": adoc.xpath('//h3[@class="author-title"]/text()')[0].strip(),
                "birth_date": adoc.xpath('//span[@class="author-born-date"]/text()')[0].strip(),
                "birth_place": adoc.xpath('//span[@class="author-born-location"]/text()')[0]
                .strip()
                .removeprefix("in ")
                .strip(),
            }
    return quotes, authors


@pytest.fixture(scope="module")
def quotes_site(sites_dir, site_server):
    return site_server("quotes.toscrape.com"), sites_dir / "quotes.toscrape.com"


def test_quotes_crawl_scrapes_every_quote_and_author_once(quotes_site):
    server, site = quotes_site
    result = run_crawl(QuotesSpider, base_url=server.url, timeout_s=120)
    assert result.finish_reason == "finished"
    quotes = [i for i in result.items if i["type"] == "quote"]
    authors = [i for i in result.items if i["type"] == "author"]
    assert len(quotes) == 100
    assert len(authors) == 50
    expected_quotes, expected_authors = _expected(site)
    key = lambda q: (q["author"], q["text"])  # noqa: E731
    assert sorted(quotes, key=key) == sorted(expected_quotes, key=key)
    assert len({key(q) for q in quotes}) == 100
    got_authors = {a["url"].removeprefix(server.url): {k: v for k, v in a.items() if k != "url"}
                   for a in authors}
    assert got_authors == expected_authors
    stats = result.stats
    assert stats["downloader/response_status_count/301"] == 50  # slashless author links
    assert stats["item_scraped_count"] == 150
    assert stats["response_received_count"] == 60


@pytest.mark.slow
@pytest.mark.parametrize("filename, fmt", [("quotes.jl", "jl"), ("quotes.jsonl", "jsonl"),
                                           ("quotes.json", "json")])
def test_runspider_cli_writes_feed_and_logs(quotes_site, tmp_path, filename, fmt):
    server, _ = quotes_site
    feed = tmp_path / filename
    proc = subprocess.run(
        [sys.executable, "-m", "crawlfw.cmdline", "runspider", str(REPO / "examples" / "quotes.py"),
         "-a", f"base_url={server.url}", "-o", str(feed), "-s", "CONCURRENT_REQUESTS=4"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = feed.read_text(encoding="utf-8")
    if fmt == "json":
        items = json.loads(text)
    else:
        items = [json.loads(line) for line in text.splitlines()]
    assert len(items) == 150
    assert sum(i["type"] == "quote" for i in items) == 100
    log = proc.stderr
    assert f"Crawled (200) <GET {server.url}/> (referer: None)" in log
    assert "'finish_reason': 'finished'" in log
    assert f"Stored {fmt} feed (150 items) in: {feed}" in log  # the format as given (Scrapy 2.19)
    assert "'CONCURRENT_REQUESTS': '4'" in log  # -s reaches the settings (Overridden settings)
    assert "Spider closed (finished)" in log
