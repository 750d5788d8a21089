"""Politeness held by the downloaders' slots in real crawls.

``CONCURRENT_REQUESTS_PER_IP``: host names on one address share one download slot once
their address is known (Scrapy keys slots by its ``dnscache`` the same way), so a
shared-hosting IP is polite as one. Three host names (curl resolves ``*.localhost`` to
the loopback itself) on one local server that counts the requests it serves at once.

AutoThrottle: the delay it computes on the engine's thread reaches the slot by message
(``set_slot_delay``) and spaces the slot's starts."""

import pytest

import crawlfw
from tests.support.countserver import CountingServer
from tests.support.crawl import run_crawl

HOSTS = ("a.localhost", "b.localhost", "c.localhost")


@pytest.fixture
def server():
    s = CountingServer(hold_s=0.1)
    yield s
    s.stop()


class SharedHostingSpider(crawlfw.Spider):
    """Visits each host once, one after the other (so each address is learned), then
    asks for 4 slow pages of every host at once."""

    name = "shared_hosting"
    port = None

    def start_requests(self):
        yield crawlfw.Request(f"http://{HOSTS[0]}:{self.port}/page/0", callback=self.chain,
                              cb_kwargs={"i": 0})

    def chain(self, response, i):
        yield {"url": response.url}
        if i + 1 < len(HOSTS):
            yield crawlfw.Request(f"http://{HOSTS[i + 1]}:{self.port}/page/0",
                                  callback=self.chain, cb_kwargs={"i": i + 1})
            return
        for n in range(4):
            for host in HOSTS:
                yield crawlfw.Request(f"http://{host}:{self.port}/slow/{n}", callback=self.done)

    def done(self, response):
        yield {"url": response.url}


@pytest.mark.parametrize("settings, most", [
    pytest.param({"CONCURRENT_REQUESTS_PER_IP": 1}, 1, id="per IP: one at a time"),
    pytest.param({"CONCURRENT_REQUESTS_PER_IP": 2}, 2, id="per IP: two at a time"),
])
def test_host_names_on_one_ip_share_a_slot(server, settings, most):
    port = server.url.rsplit(":", 1)[1]
    result = run_crawl(SharedHostingSpider, {"CONCURRENT_REQUESTS": 16,
                                             "CONCURRENT_REQUESTS_PER_DOMAIN": 8, **settings},
                       port=port)
    assert result.finish_reason == "finished"
    assert len(result.items) == 3 + 12
    assert server.max_active == most


def test_without_per_ip_each_host_name_is_its_own_slot(server):
    port = server.url.rsplit(":", 1)[1]
    result = run_crawl(SharedHostingSpider, {"CONCURRENT_REQUESTS": 16,
                                             "CONCURRENT_REQUESTS_PER_DOMAIN": 1}, port=port)
    assert len(result.items) == 3 + 12
    assert server.max_active == 3


class OneHostSpider(crawlfw.Spider):
    name = "one_host"
    url = None

    def start_requests(self):
        for n in range(3):
            yield crawlfw.Request(f"{self.url}/page/{n}", callback=self.done)

    def done(self, response):
        yield {"url": response.url}


def test_autothrottle_delay_spaces_the_starts_of_a_slot(server):
    # The slot starts with AUTOTHROTTLE_START_DELAY (2 s); the first fast response halves
    # it (Scrapy's rule) and the engine tells the slot's downloader: the second start
    # comes ~1 s after the first (2 s if the message did not arrive), the third ~0.5 s
    # after it.
    result = run_crawl(OneHostSpider, {"AUTOTHROTTLE_ENABLED": True,
                                       "AUTOTHROTTLE_START_DELAY": 2.0,
                                       "RANDOMIZE_DOWNLOAD_DELAY": False,
                                       "CONCURRENT_REQUESTS_PER_DOMAIN": 8}, url=server.url)
    assert len(result.items) == 3
    t = server.times
    assert 0.8 <= t[1] - t[0] < 1.7, t
    assert 0.4 <= t[2] - t[1] < 0.9, t
