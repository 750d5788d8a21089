"""One busy host never holds the others back (issue 18), through the CLI.

A slow local server (every answer held ``LATENCY_S``) serves one big host (``BIG_PAGES``
pages, each linking to 20 new ones) and ``SMALL_HOSTS`` small hosts of 2 pages; the
crawl runs at ``CONCURRENT_REQUESTS=32``, 8 per domain. The big host alone is bound by
politeness (8 transfers at a time); the small hosts' 300 pages need about 5 s of the
24 transfers it leaves free, less than the big host's 8 s, so the whole crawl should
take no longer than the big host alone. Before per-host queues (4a0604b) the Scheduler
handed the Engine the big host's requests in queue order, they filled
``CONCURRENT_REQUESTS`` waiting in its download slot, and the small hosts (their start
requests after the other requests of their priority) waited behind them: the whole
crawl took 1.31 times the big host alone, in memory and with a ``JOBDIR`` (at a
``LATENCY_S`` of 0.2 s; the wait grows with the latency as the crawl does).

The latency is long so that the crawl is bound by politeness, not by the CPU: the mixed
crawl parses 300 more pages, about 0.9 s of wall time more on a loaded 2-core machine
(the whole suite in 4 workers): at 0.2 s that alone took the ratio to 1.19.
"""

import datetime
import re

import pytest

from tests.crash.test_broad import run_broad
from tests.support.broadsite import BroadSite

LATENCY_S = 0.4
BIG_PAGES = 160
SMALL_HOSTS = 150
BIG = "big.localhost"
SETTINGS = ("CONCURRENT_REQUESTS=32", "CONCURRENT_REQUESTS_PER_DOMAIN=8")


@pytest.fixture
def slow_site():
    s = BroadSite(pages=2, latency_s=LATENCY_S, fanout=20, host_pages={BIG: BIG_PAGES})
    yield s
    s.stop()


def stat_time(stderr, name):
    """The datetime of stat ``name`` (``start_time``, ``finish_time``) in the stats dump."""
    found = re.search(rf"'{name}': datetime\.datetime\(([\d, ]+?),?\s*(?:tzinfo=[\w.]+)?\)",
                      stderr)
    assert found, stderr[-3000:]
    return datetime.datetime(*(int(x) for x in found.group(1).split(",")))


def timed_crawl(tmp_path, site, hosts, *settings):
    """The broad spider over ``hosts`` small hosts and the big one: (seconds from the
    spider's opening to its close, by the crawl's own ``start_time``/``finish_time``:
    the interpreter's start-up is not the crawl's; urls)."""
    tmp_path.mkdir(exist_ok=True)
    code, stderr, urls, _ = run_broad(tmp_path, site, hosts, *SETTINGS, *settings,
                                      args=("-a", f"big={BIG}"), timeout_s=120)
    assert code == 0, stderr[-3000:]
    elapsed = (stat_time(stderr, "finish_time") - stat_time(stderr, "start_time")
               ).total_seconds()
    assert len(urls) == len(set(urls)), "a page was crawled twice"
    return elapsed, urls


@pytest.mark.slow
@pytest.mark.parametrize("frontier", ["memory", "jobdir"])
def test_small_hosts_beside_a_busy_host_cost_no_time(slow_site, tmp_path, frontier):
    def settings(name):
        return (f"JOBDIR={tmp_path / name / 'job'}",) if frontier == "jobdir" else ()

    alone_s, urls = timed_crawl(tmp_path / "alone", slow_site, 0, *settings("alone"))
    assert len(urls) == BIG_PAGES
    mixed_s, urls = timed_crawl(tmp_path / "mixed", slow_site, SMALL_HOSTS,
                                *settings("mixed"))
    assert len(urls) == BIG_PAGES + 2 * SMALL_HOSTS
    # The politeness floor: the big host's pages, 8 at a time, LATENCY_S each.
    assert alone_s >= BIG_PAGES / 8 * LATENCY_S
    assert mixed_s <= 1.15 * alone_s, (
        f"the whole crawl took {mixed_s:.2f} s, the big host alone {alone_s:.2f} s")
