"""What real Scrapy 2 projects do, ported with ``crawlfw port`` (issue 29: kingfisher-collect
and querido-diario, compared by ``tools/port_real_project.py``), each pinned with Scrapy
2.19's behaviour: the private names their code reads, their test helpers' idioms
(``hasattr(cls, "name")``, ``Crawler._apply_settings``, a downloader middleware manager
built by hand), a ``from_crawler`` that changes the settings, ``cmdline.execute`` with
the program name first, and Scrapy-only plugins named in the settings."""

import asyncio
import json
import logging

import pytest

from crawlfw.crawler import Crawler, CrawlerRunner
from crawlfw.exceptions import CrawlfwDeprecationWarning, CrawlStartError
from crawlfw.extensions.closespider import CloseSpider
from crawlfw.http import Request, TextResponse
from crawlfw.http.response.text import _NONE
from crawlfw.pipelines.files import FilesPipeline
from crawlfw.settings import Settings
from crawlfw.spiders import Spider
from crawlfw.statscollectors import MemoryStatsCollector
from crawlfw.utils.test import get_crawler, get_reactor_settings
from tests.test_scrapy2_components import _crawl, _stat


@pytest.fixture(scope="module")
def quotes(site_server):
    return site_server("quotes.toscrape.com")


class OwnJsonResponse(TextResponse):
    """kingfisher-collect's JSONResponse (kingfisher_scrapy/responses.py, which uses
    orjson), renamed; numbers are kept as text to tell its parse from TextResponse's."""

    def json(self):
        if self._cached_decoded_json is _NONE:
            self._cached_decoded_json = json.loads(self.body, parse_int=str)
        return self._cached_decoded_json


def test_a_subclass_parses_json_its_own_way_through_the_private_cache():
    response = OwnJsonResponse("http://example.com", body=b'{"a": [1, 2]}', encoding="utf-8")
    assert response._cached_decoded_json is _NONE
    first = response.json()
    assert first == {"a": ["1", "2"]} and response.json() is first
    # TextResponse.json() shares the cache (Scrapy 2.19's attribute)
    assert TextResponse.json(response) is first
    plain = TextResponse("http://example.com", body=b"[3]", encoding="utf-8")
    assert plain.json() == [3] and plain._cached_decoded_json == [3]


def test_get_reactor_settings_needs_nothing():
    assert get_reactor_settings() == {}
    assert get_reactor_settings() is not get_reactor_settings()


class Named(Spider):
    name = "named"


def test_a_spider_class_without_a_name_has_no_name_attribute():
    # Scrapy 2.19's Spider only annotates `name`: kingfisher-collect's test helper
    # makes a named subclass when `not hasattr(spider_class, "name")`.
    class Nameless(Spider):
        pass

    assert not hasattr(Spider, "name") and not hasattr(Nameless, "name")
    assert Named.name == "named"
    with pytest.raises(ValueError, match="Nameless must have a name"):
        Nameless()
    assert Nameless(name="given").name == "given"


class SampleSpider(Spider):
    """kingfisher-collect's BaseSpider.from_crawler: a spider argument changes a setting."""

    name = "sample"

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        if getattr(spider, "sample", None):
            crawler.settings.set("CONCURRENT_REQUESTS", 1, priority="spider")
            crawler.settings.set("CLOSESPIDER_ITEMCOUNT", int(spider.sample),
                                 priority="spider")
        return spider


def test_from_crawler_may_change_the_settings_before_they_are_applied():
    crawler = CrawlerRunner({"CLOSESPIDER_ITEMCOUNT": 50}).create_crawler(SampleSpider)
    assert not crawler.settings.frozen
    crawler.spider = crawler.spidercls.from_crawler(crawler, sample="3")
    assert crawler.settings.getint("CONCURRENT_REQUESTS") == 1
    crawler._apply_settings()
    assert crawler.settings.frozen
    closespider = next(e for e in crawler.extensions.middlewares if isinstance(e, CloseSpider))
    assert closespider.close_on["itemcount"] == 3  # read after from_crawler
    with pytest.raises(TypeError, match="immutable"):
        crawler.settings.set("CONCURRENT_REQUESTS", 2)
    crawler._apply_settings()  # a second call does nothing (Scrapy 2.19)


def test_apply_settings_checks_what_from_crawler_set():
    crawler = CrawlerRunner().create_crawler(SampleSpider)
    crawler.settings.set("CONCURRENT_REQUESTS", "many", priority="spider")
    with pytest.raises(CrawlStartError, match="CONCURRENT_REQUESTS"):
        crawler._apply_settings()


def test_the_stats_and_log_formatter_can_be_set_before_the_crawl():
    # kingfisher-collect's spider_with_crawler(): no _apply_settings, its own stats
    crawler = CrawlerRunner(get_reactor_settings()).create_crawler(Named)
    crawler.spider = crawler.spidercls.from_crawler(crawler)
    crawler.stats = MemoryStatsCollector(crawler)
    crawler.stats.set_value("start_time", 1)
    assert crawler.stats.get_value("start_time") == 1
    # Scrapy 1.2's way: read before the crawl, made from the settings as they are
    other = Crawler(Named, {"STATS_CLASS": "crawlfw.statscollectors.DummyStatsCollector"})
    assert type(other.stats).__name__ == "DummyStatsCollector"
    assert get_crawler(Named).settings.frozen


def test_log_records_before_the_stats_exist_are_counted():
    crawler = Crawler(Named)
    logging.getLogger("tests.early").warning("before the stats collector")
    crawler._apply_settings()
    assert crawler.stats.get_value("log_count/WARNING") >= 1


SAMPLE_SPIDER = '''
import crawlfw


class S(crawlfw.Spider):
    name = "sample"

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        if spider.sample:
            crawler.settings.set("CLOSESPIDER_ITEMCOUNT", int(spider.sample),
                                 priority="spider")
        return spider

    def start_requests(self):
        for n in range(1, 11):
            yield crawlfw.Request(f"{self.base}/page/{n}/")

    def parse(self, response):
        yield {"page": response.url}
'''


@pytest.mark.slow
def test_a_crawl_honours_what_from_crawler_set(quotes, tmp_path):
    run, items = _crawl(tmp_path, SAMPLE_SPIDER, quotes.url, "-a", "sample=2",
                        "-s", "CONCURRENT_REQUESTS=1")
    assert run.returncode == 0, run.stderr[-3000:]
    assert _stat(run.stderr, "finish_reason") == "'closespider_itemcount'"
    assert 2 <= len(items) < 10, items


def test_the_telnet_console_path_exists_and_disables_itself(caplog):
    # kingfisher-collect's crawlall/pluck commands: {"...telnet.TelnetConsole": None}
    crawler = get_crawler(Named, {"EXTENSIONS": {"crawlfw.extensions.telnet.TelnetConsole": None}})
    assert not any(type(e).__name__ == "TelnetConsole" for e in crawler.extensions.middlewares)
    with caplog.at_level(logging.WARNING):
        crawler = get_crawler(Named, {
            "EXTENSIONS": {"crawlfw.extensions.telnet.TelnetConsole": 0},
            "TELNETCONSOLE_ENABLED": True})
    assert not any(type(e).__name__ == "TelnetConsole" for e in crawler.extensions.middlewares)
    assert "Disabled TelnetConsole: crawlfw has no telnet console" in caplog.text


class DelayedRequestMiddleware:
    """kingfisher-collect's: an ``async def process_request`` without ``spider``."""

    async def process_request(self, request):
        delay = request.meta.get("wait_time")
        if delay:
            await asyncio.sleep(delay)


class Scrapy12Middleware:
    """Hooks taking the spider (Scrapy 1.2's signatures)."""

    def process_request(self, request, spider):
        if request.url.endswith("/answered"):
            return TextResponse(request.url, body=b"from the middleware", encoding="utf-8")
        request.meta["seen_by"] = spider.name
        return None

    def process_response(self, request, response, spider):
        return response.replace(body=response.body + b" (" + spider.name.encode() + b")")

    def process_exception(self, request, exception, spider):
        if isinstance(exception, ConnectionRefusedError):
            return TextResponse(request.url, body=b"recovered", encoding="utf-8")
        return None


def _manager():
    from crawlfw.core.downloader import DownloaderMiddlewareManager
    from crawlfw.core.downloader.middleware import DownloaderMiddlewareManager as Same

    assert Same is DownloaderMiddlewareManager
    crawler = get_crawler(Named, {"DOWNLOADER_MIDDLEWARES_BASE": {}, "DOWNLOADER_MIDDLEWARES": {
        __name__ + ".Scrapy12Middleware": 100, __name__ + ".DelayedRequestMiddleware": 543}})
    crawler.spider = crawler.spidercls.from_crawler(crawler)
    return DownloaderMiddlewareManager.from_crawler(crawler)


def test_a_downloader_middleware_manager_built_by_hand_runs_the_chain():
    manager = _manager()
    calls = []

    async def download_func(request):
        calls.append(request.url)
        if "refused" in request.url:
            raise ConnectionRefusedError
        if "broken" in request.url:
            raise ValueError("broken")
        return TextResponse(request.url, body=b"downloaded", encoding="utf-8")

    async def run(request):
        return await manager.download_async(download_func, request)

    request = Request("http://example.com/a", meta={"wait_time": 0.2})
    loop = asyncio.new_event_loop()
    try:
        started = loop.time()
        response = loop.run_until_complete(run(request))
        assert loop.time() - started >= 0.2  # the async hook was awaited
        assert response.body == b"downloaded (named)"
        assert request.meta["seen_by"] == "named"
        answered = loop.run_until_complete(run(Request("http://example.com/answered")))
        assert answered.body == b"from the middleware (named)"
        recovered = loop.run_until_complete(run(Request("http://example.com/refused")))
        assert recovered.body == b"recovered (named)"
        with pytest.raises(ValueError, match="broken"):
            loop.run_until_complete(run(Request("http://example.com/broken")))
    finally:
        loop.close()
    assert calls == ["http://example.com/a", "http://example.com/refused",
                     "http://example.com/broken"]


def test_the_deprecated_download_gives_a_future():
    manager = _manager()
    with pytest.warns(CrawlfwDeprecationWarning, match="download_async"):
        future = manager.download(
            lambda request, spider: TextResponse(request.url, body=spider.name.encode(),
                                                 encoding="utf-8"),
            Request("http://example.com/b"), manager.crawler.spider)
    assert future.result().body == b"named (named)"


class SubclassNeedingTheCrawler(FilesPipeline):
    """querido-diario's QueridoDiarioFilesPipeline constructor."""

    def __init__(self, *args, crawler, **kwargs):
        super().__init__(*args, crawler=crawler, **kwargs)
        self.secondary = crawler.settings.get("FILES_STORE_SECONDARY", "")


class Scrapy12Subclass(FilesPipeline):
    def __init__(self, store_uri, download_func=None, settings=None):
        super().__init__(store_uri, download_func, settings)
        self.built = "scrapy 1.2"


def test_files_pipeline_is_built_with_the_crawler_as_in_scrapy_2_19(tmp_path):
    crawler = get_crawler(Named, {"FILES_STORE": str(tmp_path), "FILES_EXPIRES": 7,
                                  "FILES_STORE_SECONDARY": "s3://other"})
    pipe = SubclassNeedingTheCrawler.from_crawler(crawler)
    assert pipe.crawler is crawler and pipe.secondary == "s3://other"
    assert pipe.expires == 7 and pipe.store.basedir == str(tmp_path)
    old = Scrapy12Subclass.from_crawler(crawler)
    assert old.built == "scrapy 1.2" and old.crawler is crawler and old.expires == 7
    plain = FilesPipeline(str(tmp_path), crawler=crawler)
    assert plain.crawler is crawler and plain.expires == 7


def test_a_component_that_cannot_be_loaded_refuses_the_crawl():
    crawler = Crawler(Named, {
        "EXTENSIONS": {"spidermon.contrib.scrapy.extensions.Spidermon": 500},
        "DOWNLOADER_MIDDLEWARES": {"tests.no_such_module.Middleware": 610,
                                   "crawlfw.extensions.telnet.TelnetConsole": None},
        "SPIDER_MIDDLEWARES": {"crawlfw.spidermiddlewares.depth.NoSuchClass": 1}})
    with pytest.raises(CrawlStartError) as info:
        crawler._apply_settings()
    assert str(info.value).split("; ") == [
        "EXTENSIONS: cannot load 'spidermon.contrib.scrapy.extensions.Spidermon': "
        "ModuleNotFoundError: No module named 'spidermon' (a Scrapy plugin, which crawlfw "
        "cannot load: remove it or map it to None)",
        "DOWNLOADER_MIDDLEWARES: cannot load 'tests.no_such_module.Middleware': "
        "ModuleNotFoundError: No module named 'tests.no_such_module'",
        "SPIDER_MIDDLEWARES: cannot load 'crawlfw.spidermiddlewares.depth.NoSuchClass': "
        "NameError: Module 'crawlfw.spidermiddlewares.depth' doesn't define any object "
        "named 'NoSuchClass'"]
    assert crawler._extensions is None  # nothing made


def test_the_scrapy_argument_parser_takes_a_dash_colon_value():
    from crawlfw.cmdline import ScrapyArgumentParser

    parser = ScrapyArgumentParser()
    parser.add_argument("-o", "--output", action="append")
    assert parser.parse_args(["-o", "-:json", "-o", "items.jl"]).output == ["-:json",
                                                                          "items.jl"]


class HandlesTeapots(Spider):
    name = "teapots"
    handle_httpstatus_list = [418]


def test_http_error_middleware_hooks_without_the_spider():
    # kingfisher-collect's tests call Scrapy 2.19's hooks without a spider argument
    from crawlfw.spidermiddlewares.httperror import HttpError, HttpErrorMiddleware

    crawler = get_crawler(HandlesTeapots)
    crawler.spider = crawler.spidercls.from_crawler(crawler)
    middleware = HttpErrorMiddleware.from_crawler(crawler)
    request = Request("http://example.com")
    teapot = TextResponse(request.url, status=418, request=request, body=b"")
    assert middleware.process_spider_input(teapot) is None  # the crawler's spider's list
    missing = TextResponse(request.url, status=404, request=request, body=b"")
    with pytest.raises(HttpError) as info:
        middleware.process_spider_input(missing)
    assert list(middleware.process_spider_exception(missing, info.value)) == []
    assert crawler.stats.get_value("httperror/response_ignored_status_count/404") == 1


def test_deferred_from_coro_gives_a_deferred_to_a_running_twisted_reactor(monkeypatch):
    # A project's async tests under pytest-twisted --reactor=asyncio are driven by
    # Twisted, which can await a Deferred only: Scrapy's deferred_from_coro gives one.
    # Twisted is not a crawlfw dependency: its two modules are stood in for here.
    import sys
    import types

    from crawlfw.utils.defer import deferred_from_coro

    made = []

    class Deferred:
        @classmethod
        def fromFuture(cls, future):  # noqa: N802 (Twisted's name)
            made.append(future)
            return cls()

    reactor = types.SimpleNamespace(running=True, _asyncioEventloop=None)
    monkeypatch.setitem(sys.modules, "twisted.internet.reactor", reactor)
    monkeypatch.setitem(sys.modules, "twisted.internet.defer",
                        types.SimpleNamespace(Deferred=Deferred))

    async def value():
        return 42

    async def main():
        plain = deferred_from_coro(value())  # another loop than the reactor's: a Task
        assert isinstance(plain, asyncio.Task) and await plain == 42
        reactor._asyncioEventloop = asyncio.get_running_loop()
        wrapped = deferred_from_coro(value())
        assert isinstance(wrapped, Deferred) and len(made) == 1
        assert await made[0] == 42
        reactor.running = False
        assert isinstance(deferred_from_coro(value()), asyncio.Task)

    asyncio.run(main())


def test_an_async_crawler_process_inside_a_running_loop():
    # kingfisher-collect's command tests run execute() inside pytest-twisted's loop:
    # the AsyncCrawlerProcess of a command cannot run its own loop there.
    from crawlfw.crawler import AsyncCrawlerProcess

    async def main():
        process = AsyncCrawlerProcess({"LOG_ENABLED": False, "TELNETCONSOLE_ENABLED": False})
        process.start()  # nothing to crawl: returns
        process.shutdown()
        return process._loop.is_closed()

    assert asyncio.run(main())


class MissingKeySpider(Spider):
    """kingfisher-collect's spiders that need an API key raise in from_crawler."""

    name = "missing_key"

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        raise RuntimeError("API_KEY is not set")


def test_a_crawl_that_cannot_start_is_finished_so_join_returns():
    runner = CrawlerRunner({"LOG_ENABLED": False})
    with pytest.raises(RuntimeError, match="API_KEY"):
        runner.crawl(MissingKeySpider)
    assert runner.bootstrap_failed
    assert runner.join(timeout_s=5)
    [crawler] = runner.crawlers
    assert crawler.finish_reason == "start_failed: API_KEY is not set"
    runner.shutdown()


def test_crawler_runner_base_and_request_fingerprinter():
    from crawlfw.crawler import AsyncCrawlerRunner, CrawlerRunnerBase
    from crawlfw.utils.request import RequestFingerprinter, fingerprint

    assert issubclass(CrawlerRunner, CrawlerRunnerBase)
    assert issubclass(AsyncCrawlerRunner, CrawlerRunnerBase)
    with pytest.raises(TypeError, match="abstract"):
        CrawlerRunnerBase()
    crawler = Crawler(Named, {}, init_reactor=True)
    assert crawler.get_addon(object) is None
    with pytest.raises(RuntimeError, match="extension manager"):
        crawler.get_extension(CloseSpider)
    with pytest.raises(RuntimeError, match="crawl engine"):
        crawler.get_downloader_middleware(object)
    crawler._apply_settings()
    assert isinstance(crawler.request_fingerprinter, RequestFingerprinter)
    request = Request("http://example.com")
    assert crawler.request_fingerprinter.fingerprint(request) == fingerprint(request)
    from crawlfw.extensions.corestats import CoreStats

    assert isinstance(crawler.get_extension(CoreStats), CoreStats)
    assert crawler.get_extension(CloseSpider) is None  # not configured: not running


COMPONENTS_SPIDER = '''
import crawlfw
from crawlfw import signals
from crawlfw.downloadermiddlewares.useragent import UserAgentMiddleware
from crawlfw.extensions.corestats import CoreStats
from crawlfw.spidermiddlewares.depth import DepthMiddleware


class Pipeline:
    def process_item(self, item, spider):
        return item


class S(crawlfw.Spider):
    name = "components"
    custom_settings = {"ITEM_PIPELINES": {__name__ + ".Pipeline": 100}}
    found = {}

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.opened, signals.spider_opened)
        return spider

    def opened(self, spider):
        c = self.crawler
        S.found = {name: type(component).__name__ for name, component in (
            ("downloader", c.get_downloader_middleware(UserAgentMiddleware)),
            ("spider", c.get_spider_middleware(DepthMiddleware)),
            ("pipeline", c.get_item_pipeline(Pipeline)),
            ("extension", c.get_extension(CoreStats)))}

    def start_requests(self):
        yield crawlfw.Request(self.base + "/page/1/")

    def parse(self, response):
        yield {"url": response.url}
'''


@pytest.mark.slow
def test_crawl_async_and_the_running_components(quotes, tmp_path, monkeypatch):
    import importlib
    import sys

    (tmp_path / "components_spider.py").write_text(COMPONENTS_SPIDER)
    monkeypatch.syspath_prepend(str(tmp_path))
    spidercls = importlib.import_module("components_spider").S
    try:
        crawler = Crawler(spidercls, {"LOG_LEVEL": "INFO", "CONTROL_ENDPOINT": None})

        async def main():
            await crawler.crawl_async(base=quotes.url)
            await crawler.stop_async()  # finished already: returns

        asyncio.run(main())
        assert crawler.finish_reason == "finished"
        assert spidercls.found == {"downloader": "UserAgentMiddleware",
                                   "spider": "DepthMiddleware", "pipeline": "Pipeline",
                                   "extension": "CoreStats"}
        assert crawler.stats.get_value("item_scraped_count") == 1
    finally:
        sys.modules.pop("components_spider", None)


class _CustomSettingsSpider(Spider):
    name = "custom_settings"
    custom_settings = {"TEST1": "spider", "TEST2": "spider"}


def test_a_crawler_made_directly_has_its_settings_frozen_as_in_scrapy_1_2():
    # Scrapy 1.2.3's tests/test_crawler.py::CrawlerTestCase::test_populate_spidercls_settings
    settings = Settings()
    settings.setdict({"TEST1": "project", "TEST3": "project"}, priority="project")
    crawler = Crawler(_CustomSettingsSpider, settings)
    assert crawler.settings.get("TEST1") == "spider"
    assert crawler.settings.get("TEST2") == "spider"
    assert crawler.settings.get("TEST3") == "project"
    assert not settings.frozen
    assert crawler.settings.frozen
    # a runner's crawler keeps them open for from_crawler until the crawl applies them
    made = CrawlerRunner(settings).create_crawler(_CustomSettingsSpider)
    assert not made.settings.frozen


def test_a_crawl_opens_the_settings_while_its_spider_is_made(tmp_path):
    # a Crawler made directly (frozen, Scrapy 1.2), crawled: the spider's from_crawler may
    # still set some (Scrapy 2.19); the crawl then freezes them again
    crawler = Crawler(SampleSpider, {"CLOSESPIDER_ITEMCOUNT": 50, "CONTROL_ENDPOINT": False,
                                     "LOG_LEVEL": "WARNING"})
    assert crawler.settings.frozen
    crawler.crawl(sample="2")
    try:
        assert crawler.settings.frozen
        assert crawler.settings.getint("CONCURRENT_REQUESTS") == 1
    finally:
        crawler.stop()
        assert crawler.wait(30)
