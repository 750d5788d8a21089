"""What the spill tests share (tests/test_frontier_spill.py, tests/test_seen_spill.py): a
spider whose first page queues many links to slow pages, and a scratch TMPDIR."""

import textwrap

#: ``-a base=URL`` (a CountingServer), ``-a links=N`` (30,000 by default): one page whose
#: callback yields N requests to ``/slow/<i>``.
MANY_LINKS_SPIDER = textwrap.dedent('''
    import crawlfw


    class ManyLinks(crawlfw.Spider):
        name = "many_links"
        base = ""
        links = "30000"

        def start_requests(self):
            yield crawlfw.Request(self.base + "/page/0")

        def parse(self, response):
            for i in range(int(self.links)):
                yield crawlfw.Request(f"{self.base}/slow/{i}", callback=self.parse_slow)

        def parse_slow(self, response):
            pass
''')


def write_spider_and_tmpdir(tmp_path, spider=MANY_LINKS_SPIDER):
    """Write ``spider`` to ``tmp_path/spider.py``; return a new ``tmp_path/tmp`` (the
    crawl's TMPDIR)."""
    (tmp_path / "spider.py").write_text(spider)
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    return tmpdir
