"""The spider of the crash tests: one item per page of a ``LinkSite``, following links.

Run with ``crawlfw runspider linkspider.py -a base=http://127.0.0.1:PORT``. It keeps a
count of pages parsed in ``spider.state`` (to check that the state survives crashes).
"""

import crawlfw


class LinkSpider(crawlfw.Spider):
    name = "links"
    base = ""

    def start_requests(self):
        yield crawlfw.Request(self.base + "/p/0")

    def parse(self, response):
        n = int(response.url.rsplit("/", 1)[1])
        state = getattr(self, "state", None)
        if state is not None:
            state["parsed"] = state.get("parsed", 0) + 1
        yield {"n": n, "title": response.css("title::text").get()}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, callback=self.parse)
