"""The classic tutorial spider, on quotes.toscrape.com (or a local copy of it).

One item per quote (text, author, tags), following the "Next" pagination, and one item
per author page (name, birth date, birth place) reached from the quotes' author links.

    crawlfw runspider examples/quotes.py -a base_url=http://127.0.0.1:8000 -o quotes.jl

``examples/quotes_site`` is a small site of the same structure kept in the repository
(README's first command crawls it; see its PROVENANCE.txt).
"""

import crawlfw


class QuotesSpider(crawlfw.Spider):
    name = "quotes"
    base_url = "http://quotes.toscrape.com"

    def start_requests(self):
        yield crawlfw.Request(self.base_url.rstrip("/") + "/", callback=self.parse)

    def parse(self, response):
        for quote in response.css("div.quote"):
            yield {
                "type": "quote",
                "text": quote.css("span.text::text").extract_first(),
                "author": quote.css("small.author::text").extract_first(),
                "tags": quote.css("div.tags a.tag::text").extract(),
            }
            author_href = quote.css("span a::attr(href)").extract_first()
            if author_href:
                yield crawlfw.Request(response.urljoin(author_href), callback=self.parse_author)
        next_href = response.css("li.next a::attr(href)").extract_first()
        if next_href:
            yield crawlfw.Request(response.urljoin(next_href), callback=self.parse)

    def parse_author(self, response):
        def text(query):
            return (response.css(query).extract_first() or "").strip()

        yield {
            "type": "author",
            "name": text("h3.author-title::text"),
            "birth_date": text(".author-born-date::text"),
            "birth_place": text(".author-born-location::text").removeprefix("in ").strip(),
            "url": response.url,
        }
