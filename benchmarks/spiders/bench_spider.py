"""The crawl benchmark's spider for crawlfw: follow every link, one item per page.

    crawlfw runspider benchmarks/spiders/bench_spider.py -a base_url=http://127.0.0.1:PORT -o out.jl

``bench_spider_scrapy.py`` is the same spider for Scrapy (only the import differs; a test
keeps the two in step).
"""

import crawlfw


class BenchSpider(crawlfw.Spider):
    name = "bench"

    base_url = "http://127.0.0.1:8000"

    def start_requests(self):
        # Not start_urls: those requests are dont_filter=True, so "/" would be fetched
        # again when a page links back to it; this way every page is fetched once.
        yield crawlfw.Request(self.base_url.rstrip("/") + "/", callback=self.parse)

    def parse(self, response):
        yield {"url": response.url, "title": response.css("title::text").extract_first()}
        for href in response.css("a::attr(href)").extract():
            yield crawlfw.Request(response.urljoin(href), callback=self.parse)
