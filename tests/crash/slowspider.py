"""The spider of the shared-politeness tests: ``n`` requests to ``/slow/<i>`` of a
``CountingServer`` (``-a base=http://127.0.0.1:PORT -a n=30``), one item each."""

import crawlfw


class SlowSpider(crawlfw.Spider):
    name = "slow"
    base = ""
    n = "30"

    def start_requests(self):
        for i in range(int(self.n)):
            yield crawlfw.Request(f"{self.base}/slow/{i}")

    def parse(self, response):
        yield {"n": int(response.url.rsplit("/", 1)[1])}
