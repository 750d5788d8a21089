"""``crawlfw fetch``: body or headers of a URL downloaded by crawlfw, redirects, errors."""

import pytest

from tests.commands.conftest import write

pytestmark = pytest.mark.slow


def test_prints_the_body(crawlfw, quotes, sites_dir):
    result = crawlfw("fetch", "--nolog", f"{quotes.url}/page/2/")
    assert result.returncode == 0, result.stderr
    expected = (sites_dir / "quotes.toscrape.com" / "page" / "2" / "index.html").read_bytes()
    assert result.stdout.encode() == expected + b"\n"


def test_logs_go_to_stderr(crawlfw, quotes):
    result = crawlfw("fetch", f"{quotes.url}/")
    assert result.returncode == 0
    assert "Crawled (200) <GET " in result.stderr
    assert "Crawled" not in result.stdout


def test_headers(crawlfw, quotes):
    result = crawlfw("fetch", "--nolog", "--headers", f"{quotes.url}/")
    assert result.returncode == 0, result.stderr
    request_part, response_part = result.stdout.split("\n>\n")
    assert "> User-Agent: crawlfw/" in request_part
    assert all(line.startswith("> ") for line in request_part.splitlines())
    lines = response_part.splitlines()
    assert all(line.startswith("< ") for line in lines)
    assert "< Content-Type: text/html" in lines
    assert "< Content-Length: 11064" in lines  # index.html of the site copy
    assert "<html" not in result.stdout


def test_follows_redirects_by_default(crawlfw, quotes, sites_dir):
    result = crawlfw("fetch", "--nolog", f"{quotes.url}/page/2")  # 301 -> /page/2/
    assert result.returncode == 0, result.stderr
    expected = (sites_dir / "quotes.toscrape.com" / "page" / "2" / "index.html").read_bytes()
    assert result.stdout.encode() == expected + b"\n"


def test_no_redirect_prints_the_3xx(crawlfw, quotes):
    result = crawlfw("fetch", "--nolog", "--headers", "--no-redirect", f"{quotes.url}/page/2")
    assert result.returncode == 0, result.stderr
    assert "< Location: /page/2/" in result.stdout.splitlines()


def test_error_statuses_are_printed_too(crawlfw, quotes):
    result = crawlfw("fetch", "--nolog", "--headers", f"{quotes.url}/no/such/page")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("\n>\n") == 1


def test_download_error_exits_1(crawlfw, unused_port):
    result = crawlfw("fetch", f"http://127.0.0.1:{unused_port}/")
    assert result.returncode == 1
    assert result.stdout == ""
    assert "Connection refused" in result.stderr


@pytest.mark.parametrize("url", ["notaurl", "127.0.0.1/x", "/local/path"])
def test_invalid_url_is_a_usage_error(crawlfw, url):
    result = crawlfw("fetch", url)
    assert result.returncode == 2
    assert f"Usage error: Invalid URL: {url!r}" in result.stderr


def test_unknown_spider(crawlfw, quotes):
    result = crawlfw("fetch", "--spider", "nope", f"{quotes.url}/")
    assert result.returncode == 1
    assert "Spider not found: nope" in result.stderr


def test_uses_the_project_spider_for_the_domain(crawlfw, project, quotes):
    # the spider's custom_settings apply: its user agent is sent. As in Scrapy 1.2, a
    # spider handles a URL when the URL's netloc (host:port) is in its allowed_domains.
    netloc = quotes.url.split("//")[1]
    write(project / "testproj" / "spiders" / "local.py", f"""
        import crawlfw

        class Local(crawlfw.Spider):
            name = "local"
            allowed_domains = ["{netloc}"]
            custom_settings = {{"USER_AGENT": "local-spider-agent", "ROBOTSTXT_OBEY": False}}
    """)
    result = crawlfw("fetch", "--nolog", "--headers", f"{quotes.url}/", cwd=project)
    assert "> User-Agent: local-spider-agent" in result.stdout.splitlines(), result.stderr
    result = crawlfw("fetch", "--nolog", "--headers", "--spider", "local", f"{quotes.url}/",
                     cwd=project)
    assert "> User-Agent: local-spider-agent" in result.stdout.splitlines(), result.stderr
