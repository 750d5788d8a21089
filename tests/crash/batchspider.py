"""The spider of the restart tests: five items per page of a ``LinkSite`` (so the
Pipeline and the Exporters get batches of several items), following links.

Run with ``crawlfw runspider batchspider.py -a base=http://127.0.0.1:PORT``.
"""

import crawlfw

ITEMS_PER_PAGE = 5


class BatchSpider(crawlfw.Spider):
    name = "batches"
    base = ""

    def start_requests(self):
        yield crawlfw.Request(self.base + "/p/0")

    def parse(self, response):
        n = int(response.url.rsplit("/", 1)[1])
        for k in range(ITEMS_PER_PAGE):
            yield {"n": n, "k": k}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, callback=self.parse)
