"""``crawlfw genspider``: templates listed, dumped and rendered; the generated spiders
run; name clashes and unknown templates are errors."""

import ast
import re

import pytest

from crawlfw.commands.genspider import domain_and_url, sanitize_module_name
from tests.commands.conftest import write
from tests.support.servers import StaticSiteServer

pytestmark = pytest.mark.slow

TEMPLATES = ["basic", "crawl", "csvfeed", "xmlfeed"]


@pytest.fixture
def feed_site(tmp_path):
    """A small site: an index linking to two ``Items/`` pages, a CSV and an RSS feed."""
    root = tmp_path / "site"
    write(root / "index.html", """
        <html><body>
        <a href="Items/1.html">one</a> <a href="Items/2.html">two</a>
        <a href="other.html">other</a>
        </body></html>
    """)
    write(root / "Items" / "1.html", "<html><body>item 1</body></html>")
    write(root / "Items" / "2.html", "<html><body>item 2</body></html>")
    write(root / "other.html", "<html><body>not an item</body></html>")
    write(root / "feed.csv", "id,name\n1,a\n2,b\n3,c\n")
    write(root / "feed.xml", """
        <?xml version="1.0"?>
        <rss version="2.0"><channel><title>t</title>
        <item><title>x</title></item><item><title>y</title></item>
        </channel></rss>
    """)
    server = StaticSiteServer(root).start()
    yield server
    server.stop()


def test_list_templates(crawlfw):
    result = crawlfw("genspider", "-l")
    assert result.returncode == 0
    assert result.stdout == "Available templates:\n" + "".join(f"  {t}\n" for t in TEMPLATES)


@pytest.mark.parametrize("template", TEMPLATES)
def test_dump_template(crawlfw, template):
    result = crawlfw("genspider", "-d", template)
    assert result.returncode == 0
    assert "class $classname(" in result.stdout
    assert "name = '$name'" in result.stdout


@pytest.mark.parametrize("template, base", [
    ("basic", "crawlfw.Spider"),
    ("crawl", "CrawlSpider"),
    ("csvfeed", "CSVFeedSpider"),
    ("xmlfeed", "XMLFeedSpider"),
])
def test_renders_into_the_project(crawlfw, project, template, base):
    result = crawlfw("genspider", "-t", template, "my-site", "example.com", cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (f"Created spider 'my-site' using template {template!r} in module:\n"
                             "  testproj.spiders.my_site\n")
    source = (project / "testproj" / "spiders" / "my_site.py").read_text()
    ast.parse(source)
    assert f"class MySiteSpider({base}):" in source
    assert "name = 'my-site'" in source
    assert "allowed_domains = ['example.com']" in source
    assert "$" not in source
    listed = crawlfw("list", cwd=project)
    assert listed.stdout == "my-site\n", listed.stderr


@pytest.mark.parametrize("template, pages, items", [
    ("basic", 1, 0),
    # the two pages matching Rule(LinkExtractor(allow=r'Items/')) are followed; the
    # template's parse_item returns an empty dict, which CrawlSpider drops (as Scrapy's)
    ("crawl", 3, 0),
    ("csvfeed", 1, 3),  # one item per CSV row
    ("xmlfeed", 1, 2),  # one item per <item>
])
def test_generated_spider_runs(crawlfw, project, feed_site, template, pages, items):
    assert crawlfw("genspider", "-t", template, "gen", "127.0.0.1", cwd=project).returncode == 0
    path = project / "testproj" / "spiders" / "gen.py"
    # as a user would: point start_urls at the local server (allowed_domains stays a domain)
    path.write_text(path.read_text().replace("http://127.0.0.1/", feed_site.url + "/"))
    result = crawlfw("crawl", "gen", cwd=project)
    assert result.returncode == 0, result.stderr
    assert "'finish_reason': 'finished'" in result.stderr
    assert " ERROR: " not in result.stderr, result.stderr
    assert f"'downloader/response_status_count/200': {pages}," in result.stderr
    if items:
        assert f"'item_scraped_count': {items}," in result.stderr
    else:
        assert "item_scraped_count" not in result.stderr


def test_url_argument_gives_domain_and_start_url(crawlfw, project, feed_site):
    # Scrapy 2: "genspider NAME http://host:port/path" takes the domain from the URL
    url = f"{feed_site.url}/Items/1.html"
    result = crawlfw("genspider", "fromurl", url, cwd=project)
    assert result.returncode == 0, result.stderr
    source = (project / "testproj" / "spiders" / "fromurl.py").read_text()
    assert "allowed_domains = ['127.0.0.1']" in source
    assert f"start_urls = ['{url}']" in source
    result = crawlfw("crawl", "fromurl", cwd=project)
    assert result.returncode == 0, result.stderr
    assert "'downloader/response_status_count/200': 1," in result.stderr
    assert f"Crawled (200) <GET {url}>" in result.stderr


@pytest.mark.parametrize("arg, template, expected", [
    ("example.com", "basic", ("example.com", "http://example.com/")),
    ("Example.com:8080", "crawl", ("example.com", "http://Example.com:8080/")),
    ("example.com", "csvfeed", ("example.com", "http://example.com/feed.csv")),
    ("example.com", "xmlfeed", ("example.com", "http://example.com/feed.xml")),
    ("https://www.example.com/a/b?c=1", "basic",
     ("www.example.com", "https://www.example.com/a/b?c=1")),
    ("http://127.0.0.1:8000/path", "xmlfeed", ("127.0.0.1", "http://127.0.0.1:8000/path")),
])
def test_domain_and_url(arg, template, expected):
    assert domain_and_url(arg, template) == expected


def test_outside_a_project_writes_to_the_current_directory(crawlfw, tmp_path):
    result = crawlfw("genspider", "example", "example.com")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Created spider 'example' using template 'basic' \n"
    source = (tmp_path / "example.py").read_text()
    assert "start_urls = ['http://example.com/']" in source
    assert "class ExampleSpider(crawlfw.Spider):" in source


def test_existing_spider(crawlfw, project):
    assert crawlfw("genspider", "example", "example.com", cwd=project).returncode == 0
    path = project / "testproj" / "spiders" / "example.py"
    result = crawlfw("genspider", "-t", "crawl", "example", "other.org", cwd=project)
    assert result.returncode == 1
    assert result.stderr == ("Spider 'example' already exists in module:\n"
                             "  testproj.spiders.example\n")
    assert "crawlfw.Spider" in path.read_text()
    result = crawlfw("genspider", "--force", "-t", "crawl", "example", "other.org", cwd=project)
    assert result.returncode == 0, result.stderr
    assert "CrawlSpider" in path.read_text()
    assert "other.org" in path.read_text()


def test_spider_named_like_the_project(crawlfw, project):
    result = crawlfw("genspider", "testproj", "example.com", cwd=project)
    assert result.returncode == 1
    assert "Cannot create a spider with the same name as your project" in result.stderr
    assert not (project / "testproj" / "spiders" / "testproj.py").exists()


def test_unknown_template(crawlfw, tmp_path):
    result = crawlfw("genspider", "-t", "nope", "x", "example.com")
    assert result.returncode == 1
    assert "Unable to find template: nope" in result.stderr
    assert 'Use "crawlfw genspider --list"' in result.stderr
    assert not (tmp_path / "x.py").exists()


def test_templates_dir_setting(crawlfw, tmp_path):
    write(tmp_path / "tpl" / "spiders" / "mine.tmpl", "# $name for $domain ($classname)\n")
    result = crawlfw("genspider", "-s", f"TEMPLATES_DIR={tmp_path / 'tpl'}", "-t", "mine",
                     "a-b", "example.com")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "a_b.py").read_text() == "# a-b for example.com (ABSpider)\n"


def test_edit_option_runs_the_editor(crawlfw, project):
    result = crawlfw("genspider", "-e", "example", "example.com", cwd=project,
                     env={"EDITOR": "echo EDITING"})
    assert result.returncode == 0, result.stderr
    assert re.search(r"EDITING \S+/testproj/spiders/example\.py", result.stdout)


def test_missing_domain_is_a_usage_error(crawlfw):
    result = crawlfw("genspider", "onlyname")
    assert result.returncode == 2
    assert "Usage error:" in result.stderr


@pytest.mark.parametrize("name, module", [
    ("example", "example"),
    ("my-site", "my_site"),
    ("example.com", "example_com"),
    ("1st", "a1st"),
    ("_private", "a_private"),
])
def test_sanitize_module_name(name, module):
    assert sanitize_module_name(name) == module
