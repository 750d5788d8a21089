"""The spider of the media kill test: ``/index.html`` of ``-a base=http://127.0.0.1:PORT``
gives an item with a file to download (``/slow.bin``), two without, and links to three
pages of one item each. Run with ``FilesPipeline`` and a ``JOBDIR``."""

import crawlfw


class MediaSpider(crawlfw.Spider):
    name = "media_kill"
    base = ""

    def start_requests(self):
        yield crawlfw.Request(self.base + "/index.html")

    def parse(self, response):
        yield {"name": "media", "file_urls": [self.base + "/slow.bin"]}
        yield {"name": "a"}
        yield {"name": "b"}
        for n in range(1, 4):
            yield crawlfw.Request(f"{self.base}/page/{n}", callback=self.parse_page)

    def parse_page(self, response):
        yield {"name": "page-" + response.url.rsplit("/", 1)[1]}
