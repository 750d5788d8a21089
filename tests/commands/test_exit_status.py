"""Exit statuses of ``crawl`` and ``runspider``, run as real subprocesses against a real
local server: a crawl that fails exits 1 (a bad setting, before anything is fetched; an
actor that dies; a feed that cannot be opened or written), a crawl that ends normally
exits 0 (finished, a spider's own CloseSpider reason)."""

import pytest

from crawlfw.crawler import is_failure_reason
from tests.commands.conftest import write
from tests.downloadermiddlewares._support import ScriptedServer

pytestmark = pytest.mark.slow

PAGE = (200, [("Content-Type", "text/html")], b"<html><body><p>page</p></body></html>")

SPIDER = """
    import crawlfw
    from crawlfw.exceptions import CloseSpider


    class PagesSpider(crawlfw.Spider):
        name = "pages"

        def start_requests(self):
            for i in range(int(getattr(self, "pages", 3))):
                yield crawlfw.Request(f"{self.base}/page?{i}")

        def parse(self, response):
            if getattr(self, "close_reason", None):
                raise CloseSpider(self.close_reason)
            yield {"url": response.url, "pad": "x" * 300}
"""

BAD_SCHEDULER = """
    from crawlfw.core.frontier.scheduler import Scheduler


    class BrokenScheduler(Scheduler):
        def next_request(self):
            raise RuntimeError("this scheduler is broken")
"""


@pytest.fixture
def server():
    with ScriptedServer({"/page": PAGE}) as server:
        yield server


@pytest.fixture
def spider_file(tmp_path):
    return write(tmp_path / "pages_spider.py", SPIDER)


def _errors(stderr):
    return [line for line in stderr.splitlines() if "] ERROR: " in line]


@pytest.mark.parametrize("reason, failed", [
    ("finished", False),
    ("shutdown", False),
    ("cancelled", False),
    ("closespider_timeout", False),
    ("closespider_itemcount", False),
    ("closespider_errorcount", False),
    ("my_own_reason", False),
    (None, False),
    ("engine_failed", True),
    ("pipeline_failed", True),
    ("scheduler_failed", True),
    ("downloader_failed", True),
    ("spider_runner_failed", True),
    ("exporter_failed", True),
    ("feed_failed", True),
    ("frontier_failed", True),
    ("start_failed: RuntimeError: boom", True),
])
def test_is_failure_reason(reason, failed):
    assert is_failure_reason(reason) is failed


@pytest.mark.parametrize("setting, message", [
    ("DOWNLOAD_DELAY=abc", "Setting 'DOWNLOAD_DELAY' must be a number, got 'abc'"),
    ("CONCURRENT_REQUESTS=many", "Setting 'CONCURRENT_REQUESTS' must be an integer, got 'many'"),
    ("COOKIES_ENABLED=perhaps",
     "Setting 'COOKIES_ENABLED' must be a boolean (0/1, True/False, true/false), got 'perhaps'"),
])
def test_bad_setting_is_refused_before_the_crawl(crawlfw, tmp_path, server, spider_file,
                                                 setting, message):
    result = crawlfw("runspider", spider_file, "-a", f"base={server.url}", "-s", setting,
                     "-o", "items.jl")
    assert result.returncode == 1, result.stderr
    (error,) = _errors(result.stderr)  # one line says what is wrong
    assert error.endswith(
        f"ERROR: Crawl could not start: {message} (set with -s on the command line)")
    assert "Traceback" not in result.stderr
    assert server.received == []  # nothing was fetched
    assert not (tmp_path / "items.jl").exists()


def test_bad_setting_in_a_project_spider(crawlfw, project, server):
    write(project / "testproj" / "spiders" / "pages.py", SPIDER + """
        custom_settings = {"DOWNLOAD_TIMEOUT": "soon"}
    """)
    result = crawlfw("crawl", "pages", "-a", f"base={server.url}", cwd=project)
    assert result.returncode == 1, result.stderr
    assert ("Crawl could not start: Setting 'DOWNLOAD_TIMEOUT' must be a number, got 'soon' "
            "(set in the spider's custom_settings)") in result.stderr
    assert "Traceback" not in result.stderr
    assert server.received == []


def test_an_actor_that_fails_exits_1(crawlfw, tmp_path, server, spider_file):
    write(tmp_path / "broken_scheduler.py", BAD_SCHEDULER)
    result = crawlfw("runspider", spider_file, "-a", f"base={server.url}",
                     "-s", "SCHEDULER=broken_scheduler.BrokenScheduler")  # beside the spider
    assert "'finish_reason': 'scheduler_failed'" in result.stderr
    assert result.returncode == 1


def test_an_actor_whose_start_fails_ends_the_crawl(crawlfw, tmp_path, server, spider_file):
    # pykka does not report an error in on_start: the crawl used to run on without its
    # pipeline actor and never end (every item waiting for it)
    write(tmp_path / "bad_pipeline.py", """
        class BadPipeline:
            def open_spider(self, spider):
                raise RuntimeError("database unreachable")

            def process_item(self, item, spider):
                return item
    """)
    # Now the start waits for open_spider and is refused in one line, as Scrapy fails a
    # crawl whose pipeline cannot open (before its feeds are opened).
    result = crawlfw("runspider", spider_file, "-a", f"base={server.url}",
                     "-s", 'ITEM_PIPELINES={"bad_pipeline.BadPipeline": 100}', timeout=30)
    assert ("ERROR: Crawl could not start: ITEM_PIPELINES: 'bad_pipeline.BadPipeline'"
            ".open_spider failed: RuntimeError: database unreachable") in result.stderr
    assert "start_failed: ITEM_PIPELINES" in result.stderr
    assert server.received == []  # nothing was fetched
    assert result.returncode == 1


@pytest.mark.parametrize("args, reason", [
    ([], "finished"),
    (["-a", "close_reason=enough_for_today"], "enough_for_today"),
])
def test_normal_ends_exit_0(crawlfw, server, spider_file, args, reason):
    result = crawlfw("runspider", spider_file, "-a", f"base={server.url}", *args)
    assert f"'finish_reason': '{reason}'" in result.stderr
    assert result.returncode == 0, result.stderr


def test_feed_that_cannot_be_opened_refuses_to_start(crawlfw, tmp_path, server, spider_file):
    result = crawlfw("runspider", spider_file, "-a", f"base={server.url}",
                     "-o", "/proc/nope/items.jl")
    assert result.returncode == 1, result.stderr
    (error,) = _errors(result.stderr)
    assert error.endswith(
        "ERROR: Crawl could not start: Cannot open the feed /proc/nope/items.jl: [Errno 2] No "
        "such file or directory: '/proc/nope'")
    assert "Traceback" not in result.stderr
    assert server.received == []  # the crawl never ran


def test_bad_feed_setting_refuses_to_start(crawlfw, server, spider_file):
    result = crawlfw("runspider", spider_file, "-a", f"base={server.url}",
                     "-s", "FEED_URI=items.data", "-s", "FEED_FORMAT=toml")
    assert result.returncode == 1, result.stderr
    (error,) = _errors(result.stderr)
    assert "ERROR: Crawl could not start: Cannot open the feed items.data: Unknown feed " \
           "format: 'toml' (FEED_FORMAT)" in error
    assert "Traceback" not in result.stderr
    assert server.received == []


@pytest.mark.parametrize("pages", [2, 200])  # fails at the final store / while writing
def test_feed_that_fails_mid_crawl_exits_1(crawlfw, server, spider_file, pages):
    result = crawlfw("runspider", spider_file, "-a", f"base={server.url}", "-a",
                     f"pages={pages}", "-o", "/dev/full", "-t", "jsonlines")
    assert "'finish_reason': 'feed_failed'" in result.stderr
    assert "'feedexport/failed_count': 1" in result.stderr
    assert result.returncode == 1
