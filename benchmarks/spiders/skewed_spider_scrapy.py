"""bench_broad.py's skewed-mix spider for Scrapy: one big host beside small ones.

    PYTHONPATH=benchmarks/spiders python -m scrapy runspider \
        benchmarks/spiders/skewed_spider_scrapy.py -a port=PORT -a big=big.localhost \
        -a hosts=300 -s DNS_RESOLVER=skewed_spider_scrapy.LocalhostResolver -o out.jl

Run with a python that has Scrapy (>= 2.13: it calls ``start()``); never imported by
crawlfw. It is ``skewed_spider.py`` with the import renamed, plus ``start()`` and
:class:`LocalhostResolver` (a test keeps the two in step).
"""

import scrapy
from scrapy.resolver import CachingThreadedResolver
from twisted.internet import defer


class LocalhostResolver(CachingThreadedResolver):
    """Answers ``localhost`` and ``*.localhost`` with 127.0.0.1 without a lookup, as curl
    does (RFC 6761 section 6.3); other names go to Scrapy's resolver."""

    def getHostByName(self, name, timeout=()):  # noqa: N802 (Twisted's name)
        if name == "localhost" or name.endswith(".localhost"):
            return defer.succeed("127.0.0.1")
        return super().getHostByName(name, timeout)


class SkewedSpider(scrapy.Spider):
    name = "skewed"

    port = "8000"
    big = "big.localhost"
    hosts = "0"

    def start_requests(self):
        yield scrapy.Request(f"http://{self.big}:{self.port}/")
        for i in range(int(self.hosts)):
            yield scrapy.Request(f"http://site{i}.localhost:{self.port}/")

    async def start(self):
        # Scrapy >= 2.13 calls start(), not start_requests() (crawlfw follows Scrapy 1.2).
        for request in self.start_requests():
            yield request

    def parse(self, response):
        yield {"url": response.url}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)
