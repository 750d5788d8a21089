"""``crawlfw parse``: the items and requests a project spider's callback produces for a
page of the local quotes site, by depth level."""

import ast
import json
import re

import pytest

from tests.commands.conftest import write
from tests.commands.test_crawl import expected_quotes

pytestmark = pytest.mark.slow

ITEMS_HEADER = "# Scraped Items  " + "-" * 60
REQUESTS_HEADER = "# Requests  " + "-" * 65


def sections(stdout):
    """``{level title: {"items": [...], "requests": [...]}}`` from parse's output."""
    result = {}
    parts = re.split(r"\n>>> (.+?) <<<\n", "\n" + stdout)
    for title, body in zip(parts[1::2], parts[2::2], strict=True):
        entry = {}
        items = re.search(r"^# Scraped Items +-+\n(.*?)(?=^# Requests|\Z)", body, re.M | re.S)
        requests = re.search(r"^# Requests +-+\n(.*)", body, re.M | re.S)
        if items:
            entry["items"] = ast.literal_eval(items.group(1))
        if requests:
            entry["requests"] = re.findall(r"<GET (\S+)>", requests.group(1))
        result[title] = entry
    return result


def test_items_and_requests_of_a_page(crawlfw, quotes_project, quotes, sites_dir):
    result = crawlfw("parse", "--spider", "quotes", f"{quotes.url}/", cwd=quotes_project)
    assert result.returncode == 0, result.stderr
    assert ITEMS_HEADER in result.stdout and REQUESTS_HEADER in result.stdout
    assert sections(result.stdout) == {
        "STATUS DEPTH LEVEL 1": {
            "items": expected_quotes(sites_dir, 1),
            "requests": [f"{quotes.url}/page/2/"],
        },
    }


def test_depth_and_verbose(crawlfw, quotes_project, quotes, sites_dir):
    result = crawlfw("parse", "--spider", "quotes", "-d", "3", "-v", f"{quotes.url}/",
                     cwd=quotes_project)
    assert result.returncode == 0, result.stderr
    all_quotes = expected_quotes(sites_dir, 3)
    assert sections(result.stdout) == {
        "DEPTH LEVEL: 1": {"items": all_quotes[:10], "requests": [f"{quotes.url}/page/2/"]},
        "DEPTH LEVEL: 2": {"items": all_quotes[10:20], "requests": [f"{quotes.url}/page/3/"]},
        "DEPTH LEVEL: 3": {"items": all_quotes[20:], "requests": [f"{quotes.url}/page/4/"]},
    }


def test_depth_without_verbose_shows_every_item_and_the_last_requests(crawlfw, quotes_project,
                                                                       quotes, sites_dir):
    result = crawlfw("parse", "--spider", "quotes", "--depth", "2", f"{quotes.url}/",
                     cwd=quotes_project)
    assert sections(result.stdout) == {
        "STATUS DEPTH LEVEL 2": {"items": expected_quotes(sites_dir, 2),
                                 "requests": [f"{quotes.url}/page/3/"]},
    }


@pytest.mark.parametrize("option, shown", [
    ("--noitems", {"requests"}),
    ("--nolinks", {"items"}),
])
def test_noitems_nolinks(crawlfw, quotes_project, quotes, option, shown):
    result = crawlfw("parse", "--spider", "quotes", option, f"{quotes.url}/",
                     cwd=quotes_project)
    assert set(sections(result.stdout)["STATUS DEPTH LEVEL 1"]) == shown


def test_callback_option(crawlfw, quotes_project, quotes):
    url = f"{quotes.url}/author/Albert-Einstein/"
    result = crawlfw("parse", "--spider", "quotes", "-c", "parse_author", url,
                     cwd=quotes_project)
    assert result.returncode == 0, result.stderr
    assert sections(result.stdout) == {"STATUS DEPTH LEVEL 1": {
        "items": [{"name": "Albert Einstein", "born": "March 14, 1879"}], "requests": []}}


def test_unknown_callback(crawlfw, quotes_project, quotes):
    result = crawlfw("parse", "--spider", "quotes", "-c", "nope", f"{quotes.url}/",
                     cwd=quotes_project)
    assert "Cannot find callback 'nope' in spider: quotes" in result.stderr
    assert ">>> STATUS DEPTH LEVEL 0 <<<" in result.stdout


def test_spider_found_by_domain(crawlfw, project, quotes):
    netloc = quotes.url.split("//")[1]
    write(project / "testproj" / "spiders" / "local.py", f"""
        import crawlfw

        class Local(crawlfw.Spider):
            name = "local"
            allowed_domains = ["{netloc}"]

            def parse(self, response):
                yield {{"title": response.css("title::text").extract_first()}}
    """)
    result = crawlfw("parse", "--nolinks", f"{quotes.url}/", cwd=project)
    assert result.returncode == 0, result.stderr
    assert sections(result.stdout)["STATUS DEPTH LEVEL 1"]["items"] == [
        {"title": "Quotes to Scrape"}]


def test_rules_choose_the_callback(crawlfw, project, quotes):
    write(project / "testproj" / "spiders" / "rules.py", """
        from crawlfw.linkextractors import LinkExtractor
        from crawlfw.spiders import CrawlSpider, Rule

        class RulesSpider(CrawlSpider):
            name = "rules"
            rules = (
                Rule(LinkExtractor(allow=r"/tag/"), callback="parse_tag"),
                Rule(LinkExtractor(allow=r"/author/"), callback="parse_author"),
            )

            def parse_author(self, response):
                yield {"author": response.css("h3.author-title::text").extract_first().strip()}

            def parse_tag(self, response):
                yield {"tag": response.url}
    """)
    url = f"{quotes.url}/author/Jane-Austen/"
    result = crawlfw("parse", "--spider", "rules", "-r", url, cwd=project)
    assert result.returncode == 0, result.stderr
    assert sections(result.stdout)["STATUS DEPTH LEVEL 1"]["items"] == [{"author": "Jane Austen"}]
    result = crawlfw("parse", "--spider", "rules", "-r", f"{quotes.url}/page/2/", cwd=project)
    assert "Cannot find a rule that matches" in result.stderr


def test_async_callbacks_await_downloads(crawlfw, project, quotes):
    """``--callback`` and ``--rules`` with ``async def`` callbacks awaiting
    ``engine.download`` (an async generator, followed to depth 2; a coroutine)."""
    write(project / "testproj" / "spiders" / "dl.py", """
        import crawlfw
        from crawlfw.linkextractors import LinkExtractor
        from crawlfw.spiders import CrawlSpider, Rule

        class DownloadingSpider(CrawlSpider):
            name = "dl"
            allowed_domains = ["127.0.0.1"]
            rules = (Rule(LinkExtractor(allow=r"/tag/"), callback="parse_tag"),)

            async def parse_author(self, response):
                home = await self.crawler.engine.download(crawlfw.Request(response.urljoin("/")))
                yield {"author": response.css("h3.author-title::text").get().strip(),
                       "home": home.css("title::text").get()}
                if "Austen" not in response.url:
                    yield crawlfw.Request(response.urljoin("/author/Jane-Austen/"),
                                          callback=self.parse_author)

            async def parse_tag(self, response):
                page = await self.crawler.engine.download_async(
                    crawlfw.Request(response.urljoin("/page/2/")))
                return {"tag": response.url, "page2": page.status}
    """)
    url = f"{quotes.url}/author/Albert-Einstein/"
    result = crawlfw("parse", "--spider", "dl", "-c", "parse_author", "-d", "2", "-v", url,
                     cwd=project)
    assert result.returncode == 0, result.stderr
    assert "Spider error" not in result.stderr
    assert sections(result.stdout) == {
        "DEPTH LEVEL: 1": {"items": [{"author": "Albert Einstein", "home": "Quotes to Scrape"}],
                           "requests": [f"{quotes.url}/author/Jane-Austen/"]},
        "DEPTH LEVEL: 2": {"items": [{"author": "Jane Austen", "home": "Quotes to Scrape"}],
                           "requests": []},
    }
    tag = f"{quotes.url}/tag/love/"
    result = crawlfw("parse", "--spider", "dl", "-r", tag, cwd=project)
    assert result.returncode == 0, result.stderr
    assert sections(result.stdout)["STATUS DEPTH LEVEL 1"]["items"] == [
        {"tag": tag, "page2": 200}]


def test_spider_arguments(crawlfw, project, quotes):
    write(project / "testproj" / "spiders" / "args.py", """
        import crawlfw

        class ArgsSpider(crawlfw.Spider):
            name = "args"

            def parse(self, response):
                yield {"selector": self.selector,
                       "value": response.css(self.selector).extract_first()}
    """)
    result = crawlfw("parse", "--spider", "args", "-a", "selector=title::text",
                     f"{quotes.url}/", cwd=project)
    assert sections(result.stdout)["STATUS DEPTH LEVEL 1"]["items"] == [
        {"selector": "title::text", "value": "Quotes to Scrape"}]


def test_pipelines_option(crawlfw, quotes_project, quotes, tmp_path):
    out = tmp_path / "piped.jl"
    write(quotes_project / "testproj" / "pipelines.py", f"""
        import json

        class TestprojPipeline(object):
            def process_item(self, item, spider):
                with open({str(out)!r}, "a") as f:
                    f.write(json.dumps(dict(item)) + "\\n")
                return item
    """)
    settings = ["-s", "ITEM_PIPELINES={\"testproj.pipelines.TestprojPipeline\": 300}"]
    result = crawlfw("parse", "--spider", "quotes", *settings, f"{quotes.url}/",
                     cwd=quotes_project)
    assert result.returncode == 0, result.stderr
    assert not out.exists()  # without --pipelines, items are only printed
    result = crawlfw("parse", "--spider", "quotes", "--pipelines", *settings,
                     f"{quotes.url}/", cwd=quotes_project)
    assert result.returncode == 0, result.stderr
    piped = [json.loads(line) for line in out.read_text().splitlines()]
    assert piped == sections(result.stdout)["STATUS DEPTH LEVEL 1"]["items"]


@pytest.mark.parametrize("option", ["-o", "-O"])
def test_output_options_write_every_feed(crawlfw, quotes_project, quotes, sites_dir, option):
    """Scrapy 2.19's parse takes -o/-O (repeatable) as crawl does: the items are written
    to each feed (issue 34)."""
    result = crawlfw("parse", "--spider", "quotes", option, "p.jl", option, "p.csv",
                     f"{quotes.url}/", cwd=quotes_project)
    assert result.returncode == 0, result.stderr
    items = expected_quotes(sites_dir, 1)
    assert sections(result.stdout)["STATUS DEPTH LEVEL 1"]["items"] == items
    lines = (quotes_project / "p.jl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == items
    assert len((quotes_project / "p.csv").read_text(encoding="utf-8").splitlines()) == 11
    result = crawlfw("parse", "--spider", "quotes", "-o", "x.jl", "-O", "y.jl",
                     f"{quotes.url}/", cwd=quotes_project)
    assert result.returncode == 2
    assert "Please use only one of -o/--output and -O/--overwrite-output" in result.stderr


def test_no_spider_for_the_url(crawlfw, quotes_project, quotes):
    url = quotes.url.replace("127.0.0.1", "localhost") + "/"  # not the spider's domain
    result = crawlfw("parse", url, cwd=quotes_project)
    assert result.returncode == 1
    assert f"Unable to find spider for: {url}" in result.stderr


def test_the_spider_for_a_url_with_a_port(crawlfw, project, quotes, sites_dir):
    """genspider writes the host without the port in allowed_domains; parse finds that
    spider for the URL with the port, as the offsite middleware lets it through
    (issue 35)."""
    host = quotes.url.split("//", 1)[1]  # 127.0.0.1:PORT
    result = crawlfw("genspider", "quotes", host, cwd=project)
    assert result.returncode == 0, result.stderr
    assert "allowed_domains = ['127.0.0.1']" in (
        project / "testproj" / "spiders" / "quotes.py").read_text().replace('"', "'")
    result = crawlfw("parse", f"{quotes.url}/", cwd=project)
    assert result.returncode == 0, result.stderr
    assert "Unable to find spider" not in result.stderr
    assert ">>> STATUS DEPTH LEVEL 1 <<<" in result.stdout


def test_unknown_spider(crawlfw, quotes_project, quotes):
    result = crawlfw("parse", "--spider", "nope", f"{quotes.url}/", cwd=quotes_project)
    assert result.returncode == 1
    assert "Spider not found: nope" in result.stderr


def test_nothing_downloaded(crawlfw, quotes_project, unused_port):
    result = crawlfw("parse", "--spider", "quotes", f"http://127.0.0.1:{unused_port}/",
                     cwd=quotes_project)
    assert result.returncode == 1
    assert "No response downloaded for:" in result.stderr


@pytest.mark.parametrize("args", [["notaurl"], ["-a", "x", "http://127.0.0.1/"], []])
def test_usage_errors(crawlfw, quotes_project, args):
    assert crawlfw("parse", "--spider", "quotes", *args, cwd=quotes_project).returncode == 2
