"""``crawlfw port PATH``: a small Scrapy project tree ported in place by the real command
line: what changes, what is reported, ``--dry-run``, a second run changing nothing, and
the ported project running under crawlfw."""

import pytest

from tests.commands.conftest import write

pytestmark = pytest.mark.slow

SETTINGS = '''
"""Settings of shop (see https://docs.scrapy.org/en/latest/topics/settings.html)."""
import os

BOT_NAME = "shop"
SPIDER_MODULES = ["shop.spiders"]
NEWSPIDER_MODULE = "shop.spiders"
TEMPLATES_DIR = "templates"
os.environ.setdefault("SCRAPY_SETTINGS_MODULE", "shop.settings")
EXTENSIONS = {"scrapy.extensions.telnet.TelnetConsole": None}
DOWNLOAD_HANDLERS = {"https": "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler"}
# HTTPCACHE_STORAGE = 'scrapy.extensions.httpcache.FilesystemCacheStorage'
'''

SPIDER = '''
import scrapy
from scrapy.http import TextResponse

scrapy_item = {"docs": "https://scrapy.org"}


class ProductsSpider(scrapy.Spider):
    """Products; run it with scrapy crawl products."""

    name = "products"

    def parse(self, response: TextResponse):
        # scrapy.Request would do too
        yield scrapy.Request(response.urljoin("/next"), callback=self.parse)
        yield {"path": "scrapy.%s" % "http"}
'''

PLUGIN_USER = '''
from scrapy_playwright.page import PageMethod
from scrapy.utils.ssl import get_temp_key_info
'''


@pytest.fixture
def scrapy_project(tmp_path):
    """A Scrapy project tree: scrapy.cfg, settings, a spider, a Dockerfile, requirements,
    a genspider template, a virtual environment and a .git directory (never entered)."""
    root = tmp_path / "shop"
    write(root / "scrapy.cfg", """
        # Automatically created by: scrapy startproject
        [settings]
        default = shop.settings
    """)
    write(root / "shop" / "__init__.py", "")
    write(root / "shop" / "settings.py", SETTINGS)
    write(root / "shop" / "spiders" / "__init__.py", "")
    write(root / "shop" / "spiders" / "products.py", SPIDER)
    write(root / "shop" / "plugins.py", PLUGIN_USER)
    write(root / "Dockerfile", """
        FROM python:3.12
        ENV SCRAPY_SETTINGS_MODULE=shop.settings
        RUN pip install scrapy==2.19.0
        CMD ["scrapy", "crawl", "products"]
    """)
    write(root / "requirements.txt", "scrapy==2.19.0\nw3lib\n")
    write(root / "templates" / "spiders" / "basic.tmpl", """
        import scrapy


        class $classname(scrapy.Spider):
            name = "$name"
    """)
    write(root / "README.md", "Run `scrapy crawl products`.\n")
    write(root / ".venv" / "pyvenv.cfg", "home = /usr\n")
    write(root / ".venv" / "lib" / "scrapy" / "__init__.py", "import scrapy.http\n")
    write(root / ".git" / "hooks" / "x.py", "import scrapy\n")
    return root


def _snapshot(root):
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_ports_a_project_in_place_and_reports(crawlfw, scrapy_project):
    before = _snapshot(scrapy_project)
    result = crawlfw("port", scrapy_project)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.splitlines()[:7] == [
        "Dockerfile: 2",
        "scrapy.cfg -> crawlfw.cfg: 1",
        "shop/plugins.py: 1",
        "shop/settings.py: 2",
        "shop/spiders/products.py: 4",
        "templates/spiders/basic.tmpl: 2",
        "Ported 6 of 9 files: 12 changes.",
    ]
    assert ("  plugin 'scrapy_playwright' (a Scrapy plugin: it imports Scrapy, crawlfw cannot "
            "load it; find a crawlfw way or drop it): shop/plugins.py:1, shop/settings.py:10"
            ) in out
    assert "  dependency 'scrapy==2.19.0' (needs the scrapy distribution: replace it with " \
        "crawlfw): requirements.txt:1" in out
    assert "  dependency 'RUN pip install scrapy==2.19.0'" in out
    assert "  dynamic 'scrapy.%s' (a Scrapy path built at run time: port it by hand): " \
        "shop/spiders/products.py:15" in out
    # Twisted's TLS helpers: a module crawlfw does not have (libcurl does TLS)
    assert "  crawlfw.utils.ssl.get_temp_key_info: shop/plugins.py:2" in out
    assert "crawlfw.http.TextResponse" not in out

    after = _snapshot(scrapy_project)
    assert "scrapy.cfg" not in after
    assert after["crawlfw.cfg"] == before["scrapy.cfg"]  # a comment and a module path
    spider = after["shop/spiders/products.py"].decode()
    assert spider == SPIDER.lstrip("\n").replace("import scrapy\n", "import crawlfw\n") \
        .replace("from scrapy.http", "from crawlfw.http") \
        .replace("(scrapy.Spider)", "(crawlfw.Spider)") \
        .replace("yield scrapy.Request", "yield crawlfw.Request")
    settings = after["shop/settings.py"].decode()
    assert '"CRAWLFW_SETTINGS_MODULE"' in settings
    assert '{"crawlfw.extensions.telnet.TelnetConsole": None}' in settings
    assert "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler" in settings
    assert "# HTTPCACHE_STORAGE = 'scrapy.extensions.httpcache" in settings
    assert after["Dockerfile"].decode().splitlines()[1:] == [
        "ENV CRAWLFW_SETTINGS_MODULE=shop.settings",
        "RUN pip install scrapy==2.19.0",
        'CMD ["crawlfw", "crawl", "products"]',
    ]
    for unchanged in ("README.md", "requirements.txt", ".venv/lib/scrapy/__init__.py",
                      ".git/hooks/x.py"):
        assert after[unchanged] == before[unchanged], unchanged


def test_a_second_run_changes_nothing(crawlfw, scrapy_project):
    assert crawlfw("port", scrapy_project).returncode == 0
    ported = _snapshot(scrapy_project)
    again = crawlfw("port", scrapy_project)
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[0] == "Ported 0 of 9 files: 0 changes."
    assert _snapshot(scrapy_project) == ported
    dry = crawlfw("port", "--dry-run", scrapy_project)
    assert "---" not in dry.stdout and "Would port 0 of 9 files" in dry.stdout


def test_dry_run_shows_the_diff_and_writes_nothing(crawlfw, scrapy_project):
    before = _snapshot(scrapy_project)
    result = crawlfw("port", "--dry-run", scrapy_project)
    assert result.returncode == 0, result.stderr
    assert _snapshot(scrapy_project) == before
    out = result.stdout
    assert "--- a/shop/spiders/products.py\n+++ b/shop/spiders/products.py\n" in out
    assert "-import scrapy\n+import crawlfw\n" in out
    assert "rename scrapy.cfg -> crawlfw.cfg\n" in out
    assert "Would port 6 of 9 files: 12 changes." in out


def test_names_crawlfw_lacks_are_reported(crawlfw, tmp_path):
    module = write(tmp_path / "m.py", """
        from scrapy.http import TextResponse
        from scrapy.utils.nothere import helper
        from scrapy.http import NoSuchResponse
    """)
    result = crawlfw("port", module)
    assert result.returncode == 0, result.stderr
    missing = result.stdout.split("Not in crawlfw (ImportError or AttributeError where they "
                                  "are used):\n")[1].splitlines()
    assert missing == ["  crawlfw.http.NoSuchResponse: m.py:3",
                       "  crawlfw.utils.nothere.helper: m.py:2"]


def test_one_file(crawlfw, scrapy_project):
    spider = scrapy_project / "shop" / "spiders" / "products.py"
    result = crawlfw("port", spider, cwd=scrapy_project)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[:2] == ["products.py: 4", "Ported 1 of 1 files: 4 changes."]
    assert (scrapy_project / "scrapy.cfg").exists()
    assert (scrapy_project / "shop" / "settings.py").read_text() == SETTINGS.lstrip("\n")


def test_runs_inside_a_scrapy_project_without_reading_it(crawlfw, scrapy_project):
    # the project's settings import Scrapy (not installed here): port must not load them
    write(scrapy_project / "shop" / "settings.py",
          "from scrapy.utils.reactor import install_reactor\nCOMMANDS_MODULE = 'shop.cmds'\n")
    result = crawlfw("port", ".", cwd=scrapy_project)
    assert result.returncode == 0, result.stderr
    assert "CrawlfwDeprecationWarning" not in result.stderr
    assert (scrapy_project / "crawlfw.cfg").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["no/such/dir"], "No such file or directory: no/such/dir"),
    (["README.md"], "Not a file crawlfw port knows: README.md"),
])
def test_bad_paths_are_usage_errors(crawlfw, scrapy_project, args, message):
    result = crawlfw("port", *args, cwd=scrapy_project)
    assert result.returncode == 2
    assert message in result.stderr


def test_the_ported_project_lists_and_checks_its_spiders(crawlfw, scrapy_project):
    (scrapy_project / "shop" / "plugins.py").unlink()
    write(scrapy_project / "shop" / "settings.py", SETTINGS.replace(
        'DOWNLOAD_HANDLERS = {"https": "scrapy_playwright.handler.ScrapyPlaywrightDownload'
        'Handler"}\n', ""))
    assert crawlfw("port", scrapy_project).returncode == 0
    listed = crawlfw("list", cwd=scrapy_project)
    assert (listed.returncode, listed.stdout) == (0, "products\n"), listed.stderr
    assert "scrapy.cfg" not in listed.stderr
    made = crawlfw("genspider", "-t", "basic", "books", "books.example", cwd=scrapy_project)
    assert made.returncode == 0, made.stderr
    assert "(crawlfw.Spider)" in (scrapy_project / "shop" / "spiders" / "books.py").read_text()
