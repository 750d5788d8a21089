"""SchedulerActor: owns the crawl's :class:`crawlfw.core.scheduler.Scheduler`.

Receives ``enqueue_requests`` (from the Engine and the SpiderRunner), ``pull_requests``
(credit from the Engine) and ``check_idle``; sends ``requests_dequeued`` and
``idle_checked`` to the Engine. Fires ``request_scheduled`` / ``request_dropped``.
"""

from crawlfw import signals
from crawlfw.actors._base import CrawlActor

__all__ = ["SchedulerActor"]


class SchedulerActor(CrawlActor):
    """Args:
    crawler: the Crawler (``signals``, ``spider``).
    scheduler: an opened-on-start scheduler object (``Scheduler`` API).
    **kw: ``CrawlActor`` arguments.
    """

    role = "scheduler"

    def __init__(self, crawler, scheduler, **kw):
        super().__init__(settings=crawler.settings, **kw)
        self.crawler = crawler
        self.spider = crawler.spider
        self.scheduler = scheduler
        self.credit = 0
        self.reply_to = None

    def on_start(self):
        self.scheduler.open(self.spider)

    def on_stop(self):
        left = self.scheduler.close("finished")
        if left:
            self.crawler.stats.set_value("scheduler/unprocessed", len(left), spider=self.spider)

    def handle_enqueue_requests(self, message):
        enqueue = self.scheduler.enqueue_request
        send = self.crawler.signals.send_catch_log
        for request in message["requests"]:
            if enqueue(request):
                send(signals.request_scheduled, request=request, spider=self.spider)
            else:
                send(signals.request_dropped, request=request, spider=self.spider)
        self._dispatch()

    def handle_pull_requests(self, message):
        self.credit += message["count"]
        self.reply_to = message["reply_to"]
        self._dispatch()

    def on_undelivered(self, ref, message):
        if message["type"] == "requests_dequeued":
            # The engine stopped (shutdown) before taking these: keep them queued, so a
            # JOBDIR keeps them for the resumed crawl.
            self.credit = 0
            self.reply_to = None
            for request in message["requests"]:
                self.scheduler.enqueue_request(request.replace(dont_filter=True))
            return
        super().on_undelivered(ref, message)

    def handle_check_idle(self, message):
        self.send(
            message["reply_to"],
            {"type": "idle_checked", "token": message["token"], "pending": len(self.scheduler)},
        )

    def _dispatch(self):
        if not self.credit or self.reply_to is None:
            return
        batch = []
        next_request = self.scheduler.next_request
        while self.credit:
            request = next_request()
            if request is None:
                break
            batch.append(request)
            self.credit -= 1
        if batch:
            self.send(
                self.reply_to,
                {"type": "requests_dequeued", "requests": batch, "pending": len(self.scheduler)},
            )
