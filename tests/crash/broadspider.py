"""A broad crawl for tests: ``-a hosts=N -a port=P`` starts at ``site<i>.localhost`` for
``i < N`` and follows every link; one item ``{"url"}`` per page. ``-a big=<host>``
starts at that host too, first (a skewed mix: one big host among small ones).

``-a hog_s=S``: at its first response the spider takes every free file descriptor and
gives them back ``S`` seconds later (something else in the process using them up:
tests/support/fdhog.py), so the connections made meanwhile meet ``EMFILE``.

With ``ROBOTSTXT_OBEY`` the spider prints ``robots.txt parsers cached: <n>`` to stderr
when it closes: the most parsers the RobotsTxtMiddleware held at any response."""

import gc
import sys

import crawlfw
from tests.support.fdhog import hog


class BroadSpider(crawlfw.Spider):
    name = "broad"
    hogged = False

    def start_requests(self):
        if getattr(self, "big", None):
            yield crawlfw.Request(f"http://{self.big}:{self.port}/")
        for i in range(int(self.hosts)):
            yield crawlfw.Request(f"http://site{i}.{getattr(self, 'domain', 'localhost')}:{self.port}/")

    robots_mw = None
    robots_max = 0

    def parse(self, response):
        if self.robots_mw is None and self.settings.getbool("ROBOTSTXT_OBEY"):
            from crawlfw.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
            self.robots_mw = next(obj for obj in gc.get_objects()
                                  if isinstance(obj, RobotsTxtMiddleware))
        if self.robots_mw is not None:
            self.robots_max = max(self.robots_max, len(self.robots_mw._parsers))
        if float(getattr(self, "hog_s", 0) or 0) and not self.hogged:
            self.hogged = True
            hog(float(self.hog_s))
        yield {"url": response.url}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)

    def closed(self, reason):
        if self.robots_mw is not None:
            print(f"robots.txt parsers cached: {self.robots_max}", file=sys.stderr,
                  flush=True)
