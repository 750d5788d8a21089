"""A user actor that keeps per-domain error counts and stops downloading from a domain
after too many errors, with a spider that uses it.

``DomainErrorGuard`` runs in every crawl that lists it in ``ACTORS``. It subscribes to
the crawl's ``response_received`` events, counts the responses with an error status
(``DOMAIN_GUARD_STATUSES``, by default 500 and up) per download slot (per host), and once
a host has given ``DOMAIN_GUARD_MAX_ERRORS`` (5) of them it blocks that slot: every
request for the host that comes to be downloaded afterwards fails with
``IgnoreRequest`` (its errback runs) instead of loading the struggling site further.
The counts are in the stats (``domain_guard/errors/<host>``, ``domain_guard/blocked``), so
they survive a restart of the actor.

    crawlfw runspider examples/domain_guard.py -a urls=http://127.0.0.1:8000/a,http://...

The spider requests the comma-separated ``urls`` and yields one item per page it got,
``{"url", "status"}``, and one per request that failed, ``{"url", "error"}``.
"""

import logging

from crawlfw.actors import UserActor
from crawlfw.http import Request
from crawlfw.spiders import Spider

logger = logging.getLogger(__name__)


class DomainErrorGuard(UserActor):
    """Blocks a download slot (host) after ``DOMAIN_GUARD_MAX_ERRORS`` error responses.

    Settings:
        DOMAIN_GUARD_MAX_ERRORS: error responses per host before it is blocked (int, 5).
        DOMAIN_GUARD_STATUSES: the HTTP statuses that count as errors (list of int;
            default every status from 500 to 599).
    """

    role = "domain_guard"
    events = ("response_received",)

    def __init__(self, crawler, **kw):
        super().__init__(crawler, **kw)
        settings = crawler.settings
        self.max_errors = settings.getint("DOMAIN_GUARD_MAX_ERRORS", 5)
        statuses = settings.getlist("DOMAIN_GUARD_STATUSES")
        self.statuses = {int(s) for s in statuses} if statuses else set(range(500, 600))
        self.stats = crawler.stats

    def handle_response_received(self, message):
        if message["response"].status not in self.statuses:
            return
        slot = message["slot"]
        key = f"domain_guard/errors/{slot}"
        self.stats.inc_value(key)
        if self.stats.get_value(key) == self.max_errors:
            logger.warning("%(slot)s answered %(n)d errors: no more requests to it",
                           {"slot": slot, "n": self.max_errors}, extra={"spider": self.spider})
            self.stats.inc_value("domain_guard/blocked")
            self.block_slot(slot, f"{self.max_errors} error responses (DOMAIN_GUARD_MAX_ERRORS)")


class GuardedSpider(Spider):
    """Requests ``urls`` (comma-separated spider argument) under the guard."""

    name = "guarded"
    custom_settings = {
        "ACTORS": {f"{__name__}.DomainErrorGuard": 100},
        "HTTPERROR_ALLOW_ALL": True,  # error pages reach parse(): they are items too
    }
    urls = ""

    def start_requests(self):
        for url in filter(None, self.urls.split(",")):
            yield Request(url, callback=self.parse, errback=self.failed)

    def parse(self, response):
        yield {"url": response.url, "status": response.status}

    def failed(self, failure):
        yield {"url": failure.request.url, "error": str(failure.value)}
