"""A broad crawl for tests: ``-a hosts=N -a port=P`` starts at ``site<i>.localhost`` for
``i < N`` and follows every link; one item ``{"url"}`` per page."""

import crawlfw


class BroadSpider(crawlfw.Spider):
    name = "broad"

    def start_requests(self):
        for i in range(int(self.hosts)):
            yield crawlfw.Request(f"http://site{i}.localhost:{self.port}/")

    def parse(self, response):
        yield {"url": response.url}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)
