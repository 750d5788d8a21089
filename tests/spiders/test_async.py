"""Scrapy 2 spiders: ``async def`` callbacks (coroutines, async generators) and
``async def start()``, unit-level and in real crawls of a small local site."""

import asyncio
import threading

import pytest

import crawlfw
from crawlfw.http import HtmlResponse, Request
from crawlfw.spiders._async import (
    iterate_async_generator,
    iterate_fed,
    run_coroutine,
    thread_loop,
)
from crawlfw.spiders._start import start_output
from crawlfw.utils.spider import iterate_spider_output
from tests.support.crawl import run_crawl
from tests.support.servers import StaticSiteServer


def test_coroutine_output_is_run_and_flattened():
    async def callback():
        await asyncio.sleep(0)
        return [{"a": 1}, Request("http://example.com/")]

    out = list(iterate_spider_output(callback()))
    assert out[0] == {"a": 1} and isinstance(out[1], Request)

    async def single():
        return {"b": 2}

    assert list(iterate_spider_output(single())) == [{"b": 2}]


def test_async_generator_output_is_stepped_lazily_and_closed():
    steps, closed = [], []

    async def agen():
        try:
            for i in range(3):
                steps.append(i)
                await asyncio.sleep(0)
                yield {"i": i}
        finally:
            closed.append(True)

    it = iter(iterate_spider_output(agen()))
    assert next(it) == {"i": 0}
    assert steps == [0]  # nothing ran ahead
    it.close()
    assert closed == [True]


def test_async_generator_error_raises_when_reached():
    async def agen():
        yield {"ok": 1}
        raise KeyError("boom")

    it = iter(iterate_spider_output(agen()))
    assert next(it) == {"ok": 1}
    with pytest.raises(KeyError, match="boom"):
        next(it)


def _tenfold(log):
    async def agen(source):
        async for x in source:
            log.append(("got", x))
            yield x * 10
    return agen


def test_iterate_fed_streams_a_plain_iterable_stepped_outside_the_loop():
    """An async generator over a plain iterable that itself steps async code on this
    thread's loop (an async callback under a plain middleware): each value goes through
    as it is produced, the plain one stepped between two runs of the loop."""
    log = []

    async def callback():
        for i in range(3):
            await asyncio.sleep(0)
            log.append(("made", i))
            yield i

    plain = (x + 1 for x in iterate_async_generator(callback()))
    for value in iterate_fed(_tenfold(log), plain):
        log.append(("out", value))
    assert log == [("made", 0), ("got", 1), ("out", 10), ("made", 1), ("got", 2),
                   ("out", 20), ("made", 2), ("got", 3), ("out", 30)]


def test_iterate_fed_raises_after_the_values_before_and_closes_early():
    def failing():
        yield 1
        raise ValueError("boom")

    got = []
    with pytest.raises(ValueError, match="boom"):
        for value in iterate_fed(_tenfold([]), failing()):
            got.append(value)
    assert got == [10]  # what came before the error is kept

    closed = []

    async def agen(source):
        try:
            async for x in source:
                yield x
        finally:
            closed.append(True)

    def endless():
        n = 0
        while True:
            n += 1
            yield n

    gen = iterate_fed(agen, endless())  # lazy: endless start requests are fine
    assert [next(gen), next(gen)] == [1, 2]
    gen.close()
    assert closed == [True]


def test_each_thread_has_its_own_loop():
    loops = []
    t = threading.Thread(target=lambda: loops.append(thread_loop()))
    t.start()
    t.join()
    assert loops[0] is not thread_loop()
    assert run_coroutine(asyncio.sleep(0, result=7)) == 7


def test_a_thread_s_loop_is_closed_when_the_thread_ends(recwarn):
    import gc

    loops = []

    def work():
        assert run_coroutine(asyncio.sleep(0, result=1)) == 1
        loops.append(thread_loop())

    t = threading.Thread(target=work)
    t.start()
    t.join()
    gc.collect()
    assert loops[0].is_closed()
    assert not [w for w in recwarn if issubclass(w.category, ResourceWarning)]


def test_running_inside_a_running_loop_is_refused():
    async def main():
        with pytest.raises(RuntimeError, match="event loop is running"):
            list(iterate_async_generator(_one()))

    async def _one():
        yield 1

    asyncio.run(main())


def test_async_start_adapts_to_start_requests():
    class S(crawlfw.Spider):
        name = "s"

        async def start(self):
            await asyncio.sleep(0)
            yield Request("http://example.com/1")
            yield Request("http://example.com/2")

    assert [r.url for r in S().start_requests()] == ["http://example.com/1", "http://example.com/2"]


def test_a_plain_start_method_is_not_the_start_hook():
    class Old(crawlfw.Spider):
        name = "old"
        start_urls = ["http://example.com/a"]

        def start(self):  # a 1.2 spider's own helper that happens to be called start
            return "not requests"

    assert [r.url for r in Old().start_requests()] == ["http://example.com/a"]


def test_default_start_yields_start_urls_and_overridden_start_requests():
    class Plain(crawlfw.Spider):
        name = "p"
        start_urls = ["http://example.com/a"]

    class Custom(crawlfw.Spider):
        name = "c"

        def start_requests(self):
            yield Request("http://example.com/custom")

    class Both(crawlfw.Spider):
        name = "b"

        async def start(self):
            async for request in super().start():
                yield request
            yield Request("http://example.com/extra")

        def start_requests(self):  # for Scrapy < 2.13, and for code calling it
            yield Request("http://example.com/old")

    async def collect(spider):
        return [r.url async for r in spider.start()]

    assert run_coroutine(collect(Plain())) == ["http://example.com/a"]
    assert run_coroutine(collect(Custom())) == ["http://example.com/custom"]
    assert [r.url for r in Both().start_requests()] == ["http://example.com/old"]
    # the crawl iterates start() (Scrapy 2.13's entry point), whose super().start() is
    # the default: it iterates the start_requests() above (Scrapy 2.13 to 2.15's rule)
    assert [r.url for r in start_output(Both())] == ["http://example.com/old",
                                                       "http://example.com/extra"]


@pytest.fixture
def pages_site(tmp_path):
    """Three pages linked by ``li.next a``, each with two quotes (one non-ASCII)."""
    for n in (1, 2, 3):
        next_link = f'<li class="next"><a href="/page/{n + 1}/">Next</a></li>' if n < 3 else ""
        page = tmp_path / "page" / str(n)
        page.mkdir(parents=True)
        (page / "index.html").write_text(
            "<html><body>"
            f'<div class="quote"><span class="text">quote {n}a</span></div>'
            f'<div class="quote"><span class="text">caf\u00e9 {n}b</span></div>'
            f'<ul class="pager">{next_link}</ul></body></html>',
            encoding="utf-8",
        )
    server = StaticSiteServer(tmp_path).start()
    yield server
    server.stop()


class AsyncQuotesSpider(crawlfw.Spider):
    """A Scrapy 2.13 spider: async start, async generator and coroutine callbacks,
    ``response.follow_all(css=...)``."""

    name = "asyncquotes"

    async def start(self):
        await asyncio.sleep(0)
        yield Request(f"{self.base_url}/page/1/", callback=self.parse)

    async def parse(self, response):
        for quote in response.css("div.quote"):
            await asyncio.sleep(0)
            yield {"text": quote.css("span.text::text").get(), "page": response.url}
        for request in response.follow_all(css="li.next a", callback=self.parse_last):
            yield request

    async def parse_last(self, response):
        await asyncio.sleep(0)
        items = [{"text": t, "page": response.url}
                 for t in response.css("span.text::text").getall()]
        next_page = response.css("li.next a")
        if next_page:
            items.append(response.follow(next_page[0], callback=self.parse))
        return items


def test_async_spider_crawls_every_page(pages_site):
    result = run_crawl(AsyncQuotesSpider, {"LOG_LEVEL": "INFO"}, base_url=pages_site.url)
    assert result.finish_reason == "finished"
    texts = sorted(item["text"] for item in result.items)
    assert texts == sorted(["quote 1a", "caf\u00e9 1b", "quote 2a", "caf\u00e9 2b",
                            "quote 3a", "caf\u00e9 3b"])
    assert result.stats.get("spider_exceptions/TypeError") is None
    assert result.stats["response_received_count"] == 3


def test_async_callback_error_is_a_spider_error(pages_site, caplog):
    class Failing(crawlfw.Spider):
        name = "failing"

        def start_requests(self):
            yield Request(f"{pages_site.url}/page/1/")

        async def parse(self, response):
            yield {"first": True}
            raise ValueError("async boom")

    result = run_crawl(Failing, {"LOG_LEVEL": "INFO"})
    assert result.items == [{"first": True}]
    assert result.stats["spider_exceptions/ValueError"] == 1
    assert "async boom" in caplog.text


def test_response_follow_all_css_from_a_real_page():
    body = b'<ul><li class="next"><a href="/page/2/">Next</a></li></ul>'
    response = HtmlResponse("http://127.0.0.1/page/1/", body=body, encoding="utf-8")
    (request,) = response.follow_all(css="li.next a")
    assert request.url == "http://127.0.0.1/page/2/"
