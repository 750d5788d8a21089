"""bench_broad.py's skewed-mix spider for crawlfw: one big host beside small ones.

    crawlfw runspider benchmarks/spiders/skewed_spider.py -a port=PORT -a big=big.localhost \
        -a hosts=300 -o out.jl

Starts at ``http://<big>:<port>/`` first, then at ``http://site<i>.localhost:<port>/`` for
``i < hosts`` (``-a hosts=0``: the big host alone), and follows every link; one item
``{"url"}`` per page. ``skewed_spider_scrapy.py`` is the same spider for Scrapy (a test
keeps the two in step).
"""

import crawlfw


class SkewedSpider(crawlfw.Spider):
    name = "skewed"

    port = "8000"
    big = "big.localhost"
    hosts = "0"

    def start_requests(self):
        yield crawlfw.Request(f"http://{self.big}:{self.port}/")
        for i in range(int(self.hosts)):
            yield crawlfw.Request(f"http://site{i}.localhost:{self.port}/")

    def parse(self, response):
        yield {"url": response.url}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)
