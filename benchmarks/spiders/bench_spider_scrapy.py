"""The crawl benchmark's spider for Scrapy: follow every link, one item per page.

    python -m scrapy runspider benchmarks/spiders/bench_spider_scrapy.py -a base_url=http://127.0.0.1:PORT -o out.jl

Run with the reference virtualenv's python (``benchmarks/_refenv.py``); never imported by
crawlfw. It is ``bench_spider.py`` with the import renamed, plus ``start()`` for Scrapy >= 2.13
(a test keeps the two in step).
"""

import scrapy


class BenchSpider(scrapy.Spider):
    name = "bench"

    base_url = "http://127.0.0.1:8000"

    def start_requests(self):
        # Not start_urls: those requests are dont_filter=True, so "/" would be fetched
        # again when a page links back to it; this way every page is fetched once.
        yield scrapy.Request(self.base_url.rstrip("/") + "/", callback=self.parse)

    async def start(self):
        # Scrapy >= 2.13 calls start(), not start_requests() (crawlfw follows Scrapy 1.2).
        for request in self.start_requests():
            yield request

    def parse(self, response):
        yield {"url": response.url, "title": response.css("title::text").extract_first()}
        for href in response.css("a::attr(href)").extract():
            yield scrapy.Request(response.urljoin(href), callback=self.parse)
