"""``/metrics``: the crawls' figures in Prometheus's text exposition format, made with
``prometheus_client`` by a custom collector (:class:`CrawlCollector`) that takes one
fresh sample of each crawl per scrape (``get_sample``), so the figures are the stats'
own at that moment.

Every metric has the labels ``crawl`` (the crawl id, ``quotes-1``), ``spider`` and
``pid``; a worker of a shared crawl (``FRONTIER_URL``: each worker is a process of its
own) adds ``worker``, its id as the shared frontier knows it (``FRONTIER_WORKER``,
default ``<hostname>-<pid>``: stable across a restart when it is set, unlike ``pid``),
from the first publication of the shared figures (the scheduler's first tick; the
``crawlfw_shared_*`` gauges come with it). Sum a counter over ``worker`` for the whole
crawl (``sum without (pid, worker) (rate(crawlfw_responses_received_total[1m]))``); the
``crawlfw_shared_*`` gauges are the whole crawl as each worker last read it from Redis,
workers on other machines included. Metric -> the stat or figure it is:

==========================================  =============================================
``crawlfw_responses_total{status}``         ``downloader/response_status_count/<status>``
``crawlfw_responses_received_total``        ``response_received_count``
``crawlfw_items_scraped_total``             ``item_scraped_count``
``crawlfw_response_bytes_total``            ``downloader/response_bytes``
``crawlfw_errors_total{kind}``              download exceptions by class, spider
                                            exceptions by class, ``HTTP <status>``
                                            ignored (``crawlfw status``'s errors)
``crawlfw_request_duration_seconds``        histogram of download latencies
                                            (``request.meta['download_latency']``)
``crawlfw_queue_requests``                  requests queued
``crawlfw_queue_on_disk_requests``          of those, on disk (absent when none can be)
``crawlfw_requests_in_flight``              transfers in flight
``crawlfw_requests_leased``                 requests leased from the frontier
``crawlfw_hosts_ready``/``_waiting``        hosts that may start a request / waiting
``crawlfw_actor_restarts_total{actor}``     restarts by the Supervisor
``crawlfw_actor_mailbox_messages{actor}``   messages in the actor's inbox
``crawlfw_actor_cpu_seconds_total{actor}``  CPU of the actor's thread
``crawlfw_memory_rss_bytes``                resident memory of the process
``crawlfw_memory_limit_bytes``              ``MEMUSAGE_LIMIT_MB`` (absent when unset)
``crawlfw_crawl_paused``                    1 while paused, else 0
``crawlfw_shared_queue_requests``           a shared crawl's whole figures, as
``crawlfw_shared_requests_leased``          published in Redis: requests queued,
``crawlfw_shared_responses_received``       leased, pages, items, workers that
``crawlfw_shared_items_scraped``            published figures
``crawlfw_shared_workers``
==========================================  =============================================
"""

from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

from crawlfw.core.control.protocol import ControlError
from crawlfw.dashboard.sources import NoSuchCrawl

__all__ = ["CrawlCollector", "exposition", "CONTENT_TYPE"]

#: The ``Content-Type`` of ``/metrics``.
CONTENT_TYPE = CONTENT_TYPE_LATEST



class CrawlCollector:
    """A ``prometheus_client`` collector of every crawl of a source.

    Args:
        source: a :class:`~crawlfw.dashboard.sources.LocalSource` or
            :class:`~crawlfw.dashboard.sources.RemoteSource`.
    """

    def __init__(self, source) -> None:
        self.source = source

    def _samples(self) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        out = []
        for entry in self.source.crawls():
            try:
                reply = self.source.ask(entry["id"], {"type": "get_sample"})
            except (NoSuchCrawl, ControlError):
                continue  # ended meanwhile
            out.append((entry, reply["sample"]))
        return out

    def describe(self):
        return []

    def collect(self):
        crawls = self._samples()
        f = _Families()
        for entry, s in crawls:
            base = {"crawl": entry["crawl_id"], "spider": entry["name"], "pid": str(entry["pid"])}
            worker = (s.get("shared") or {}).get("worker") or entry.get("worker")
            if worker:  # a worker of a shared crawl: its id, as the frontier knows it
                base["worker"] = str(worker)
            for status, n in sorted(s["status"].items()):
                f.counter("responses", "HTTP responses by status", {**base, "status": status}, n)
            f.counter("responses_received", "Responses that reached the engine", base,
                      s["pages"])
            f.counter("items_scraped", "Items scraped", base, s["items"])
            f.counter("response_bytes", "Response bytes received", base, s["bytes"])
            f.family("counter", "errors", "Errors by kind")  # present with no error too
            for kind, n in sorted(s["errors"].items()):
                f.counter("errors", "Errors by kind", {**base, "kind": kind}, n)
            latency = s["latency"]
            bounds = [str(b) for b in latency["buckets"]] + ["+Inf"]
            running, buckets = 0, []
            for bound, n in zip(bounds, latency["counts"], strict=False):
                running += n
                buckets.append((bound, running))
            f.histogram("request_duration_seconds",
                        "Download latency (time to the first response byte)", base, buckets,
                        latency.get("sum", 0.0))
            frontier = s["frontier"]
            f.gauge("queue_requests", "Requests queued", base, frontier["queued"])
            if frontier["on_disk"] is not None:
                f.gauge("queue_on_disk_requests", "Queued requests on disk", base,
                        frontier["on_disk"])
            f.gauge("requests_in_flight", "Transfers in flight", base, frontier["in_flight"])
            f.gauge("requests_leased", "Requests leased from the frontier", base,
                    frontier["leased"])
            hosts = s["hosts"]
            if hosts["ready"] is not None:
                f.gauge("hosts_ready", "Hosts that may start a request now", base,
                        hosts["ready"])
                f.gauge("hosts_waiting", "Hosts with requests waiting for their delay or "
                                         "concurrency", base, hosts["waiting"])
            for actor in s["actors"]:
                labels = {**base, "actor": actor["name"]}
                f.counter("actor_restarts", "Actor restarts by the Supervisor", labels,
                          actor["restarts"])
                f.gauge("actor_mailbox_messages", "Messages in the actor's inbox", labels,
                        actor["mailbox"])
                if actor["cpu"] is not None:
                    f.counter("actor_cpu_seconds", "CPU seconds of the actor's thread", labels,
                              actor["cpu"])
            memory = s["memory"]
            f.gauge("memory_rss_bytes", "Resident memory of the process", base, memory["rss"])
            if memory["limit"] is not None:
                f.gauge("memory_limit_bytes", "MEMUSAGE_LIMIT_MB in bytes", base,
                        memory["limit"])
            f.gauge("crawl_paused", "1 while the crawl is paused", base,
                    1 if s["state"] == "paused" else 0)
            shared = s.get("shared")
            if shared:
                f.gauge("shared_queue_requests", "Requests in the shared queue", base,
                        shared["queued"])
                f.gauge("shared_requests_leased", "Requests leased by every worker", base,
                        shared["leased"])
                f.gauge("shared_responses_received", "Responses of every worker (as "
                                                     "published)", base, shared["pages"])
                f.gauge("shared_items_scraped", "Items of every worker (as published)", base,
                        shared["items"])
                f.gauge("shared_workers", "Workers that published figures", base,
                        shared["workers"])
        yield from f.all()
        up = GaugeMetricFamily("crawlfw_crawls", "Running crawls shown")
        up.add_metric([], len(crawls))
        yield up


class _Families:
    """The metric families of one scrape, made once each by name; their samples added
    with a label dict each (a shared crawl's worker has the ``worker`` label, a crawl on
    its own frontier has none)."""

    _KINDS = {"counter": CounterMetricFamily, "gauge": GaugeMetricFamily,
              "histogram": HistogramMetricFamily}

    def __init__(self) -> None:
        self._families: dict[str, Any] = {}

    def family(self, kind: str, name: str, doc: str):
        """The family ``crawlfw_<name>`` of ``kind`` (made on first use)."""
        family = self._families.get(name)
        if family is None:
            family = self._families[name] = self._KINDS[kind](f"crawlfw_{name}", doc)
        return family

    def counter(self, name: str, doc: str, labels: dict[str, str], value: float) -> None:
        family = self.family("counter", name, doc)
        family.add_sample(f"{family.name}_total", labels, value)

    def gauge(self, name: str, doc: str, labels: dict[str, str], value: float) -> None:
        family = self.family("gauge", name, doc)
        family.add_sample(family.name, labels, value)

    def histogram(self, name: str, doc: str, labels: dict[str, str],
                  buckets: list[tuple[str, float]], total: float) -> None:
        """``buckets``: ``[(upper bound as text, cumulative count), ..., ("+Inf", n)]``."""
        family = self.family("histogram", name, doc)
        for bound, count in buckets:
            family.add_sample(f"{family.name}_bucket", {**labels, "le": bound}, count)
        family.add_sample(f"{family.name}_count", labels, buckets[-1][1])
        family.add_sample(f"{family.name}_sum", labels, total)

    def all(self):
        return list(self._families.values())


def exposition(source) -> bytes:
    """The text exposition of every crawl of ``source`` (Prometheus format 0.0.4)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(CrawlCollector(source))
    return generate_latest(registry)
