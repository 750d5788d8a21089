"""Name resolution through the system resolver: ``DNS_TIMEOUT`` and ``DNSCACHE_SIZE``.

The processes under test run in a mount namespace of their own whose
``/etc/resolv.conf`` names a tiny DNS server on a loopback address
(``tests/support/dnsserver.py``): libcurl's threaded resolver calls glibc's
``getaddrinfo``, which asks that server, which answers each name after the delay the
test gave it and counts the queries. No query leaves the loopback; the rest of the
machine keeps its resolver.
"""

import json
import subprocess
import sys
import textwrap
import time

import pytest

from crawlfw.core.transport.curl_options import DnsCacheBudget
from tests.support.broadsite import BroadSite
from tests.support.dnsserver import LocalDNS, namespaces_available, resolver_argv
from tests.support.proc import crawlfw_env

needs_namespaces = pytest.mark.skipif(
    not namespaces_available(),
    reason="needs root to run a process with its own /etc/resolv.conf (unshare -m)")


@pytest.fixture
def site():
    s = BroadSite(pages=1)  # no keep-alive: a reused connection needs no lookup
    yield s
    s.stop()


# -- DnsCacheBudget: plain, table-driven ------------------------------------------------


def test_budget_keeps_the_full_timeout_until_size_lookups_were_seen():
    budget = DnsCacheBudget(3)
    assert (budget.started(0.0), budget.started(0.1)) == (60, 60)
    assert not budget.bounding
    assert budget.started(0.2) == 0  # 3 lookups within 0.2 s: none may stay past its transfer
    assert budget.bounding


@pytest.mark.parametrize("starts, timeout_s", [
    ([0, 10, 20], 20),  # the oldest of the last 3 started 20 s ago
    ([0, 10, 20, 25], 15),  # the ring drops 0: oldest is 10
    ([0, 10, 20, 25, 27.5], 7),  # oldest is 20: whole seconds, rounded down
    ([0, 100, 200], 60),  # never past max_timeout_s
    ([0, 1, 2, 3, 4, 5, 6, 7], 2),  # 1 name a second, 3 names kept: 2 s (+ the one resolving)
])
def test_budget_timeout_is_the_age_of_the_oldest_of_the_last_size_lookups(starts, timeout_s):
    budget = DnsCacheBudget(3)
    for t in starts:
        budget.started(float(t))
    assert budget.timeout_s == timeout_s


@pytest.mark.parametrize("size", [0, -1, 2.5, "10", True])
def test_budget_refuses_a_bad_size_naming_the_setting(size):
    with pytest.raises(ValueError, match="DNSCACHE_SIZE must be an int >= 1"):
        DnsCacheBudget(size)


# -- the driver against a real resolver --------------------------------------------------

_DRIVER_SCRIPT = """
import json, sys, time
from crawlfw.core.transport.curl import MultiDriver
from crawlfw.core.transport.curl_options import DnsCacheBudget
from crawlfw.http import Request

port, spacing_s, size = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
budget = DnsCacheBudget(size) if size else None
driver = MultiDriver(dns_cache_budget=budget)

def fetch(name):
    driver.add(Request(f"http://{name}:{port}/"), timeout_s=30)
    results = []
    while driver.active:
        results += driver.perform(5)
    assert results[0].ok, results[0].error

for i in range(6):
    fetch(f"h{i}.dns.test")
    time.sleep(spacing_s)
fetch("h5.dns.test")  # resolved last, well within the cache timeout
fetch("h0.dns.test")  # resolved first, about 6 * spacing_s ago
print(json.dumps(budget.timeout_s if budget else None))
"""


def _run_in_resolver(dns, tmp_path, argv, timeout_s=120):
    conf = dns.resolv_conf(tmp_path)
    return subprocess.run(resolver_argv(argv, conf), cwd=str(tmp_path), env=crawlfw_env(),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout_s)


@pytest.mark.slow
@needs_namespaces
@pytest.mark.parametrize("size, h0_queries", [(3, 2), (0, 1)])
def test_dnscache_size_bounds_libcurls_cache(tmp_path, site, size, h0_queries):
    """Six names resolved 0.7 s apart: with DNSCACHE_SIZE=3 the cache keeps them
    ~1.4 s (the age of the oldest of the last 3 lookups, whole seconds: 1 s), so the
    last name is still cached but the first is looked up again; without a budget
    (libcurl's 60 s) the first is still cached too."""
    names = {f"h{i}.dns.test": ("127.0.0.1", 0) for i in range(6)}
    script = tmp_path / "driver.py"
    script.write_text(_DRIVER_SCRIPT)
    with LocalDNS(names) as dns:
        result = _run_in_resolver(dns, tmp_path, [sys.executable, str(script), site.port,
                                                  0.7, size])
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout) == (1 if size else None)
        assert dns.count("h5.dns.test") == 1  # answered from the cache
        assert dns.count("h0.dns.test") == h0_queries


# -- DNS_TIMEOUT in a real crawl -----------------------------------------------------------

_SPIDER = """
import time
import crawlfw

class DnsSpider(crawlfw.Spider):
    name = "dns"

    def start_requests(self):
        self.t0 = time.monotonic()
        for host in ("slow.dns.test", "fast.dns.test"):
            yield crawlfw.Request(f"http://{host}:{self.port}/", errback=self.failed,
                                  dont_filter=True)

    def parse(self, response):
        yield {"url": response.url, "status": response.status}

    def failed(self, failure):
        yield {"url": failure.request.url, "error": type(failure.value).__name__,
               "message": str(failure.value), "after_s": time.monotonic() - self.t0}
"""


@pytest.mark.slow
@needs_namespaces
def test_dns_timeout_fails_an_unanswered_lookup_as_dns_lookup_error(tmp_path, site):
    """Scrapy's DNS_TIMEOUT: a name whose resolver does not answer within it fails as
    DNSLookupError (here after 1 s, while the server answers only after 8 s and
    DOWNLOAD_TIMEOUT is 60 s); the other name is fetched."""
    (tmp_path / "dns_spider.py").write_text(textwrap.dedent(_SPIDER))
    feed = tmp_path / "items.jl"
    answers = {"slow.dns.test": ("127.0.0.1", 8), "fast.dns.test": ("127.0.0.1", 0)}
    with LocalDNS(answers) as dns:
        started = time.monotonic()
        result = _run_in_resolver(dns, tmp_path, [
            sys.executable, "-m", "crawlfw.cmdline", "runspider", "dns_spider.py",
            "-a", f"port={site.port}", "-o", str(feed), "-s", "DNS_TIMEOUT=1",
            "-s", "DOWNLOAD_TIMEOUT=60", "-s", "RETRY_ENABLED=0", "-s", "LOG_LEVEL=INFO"])
        elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    items = {item["url"].split("/")[2].split(":")[0]: item
             for item in map(json.loads, feed.read_text().splitlines())}
    assert items["fast.dns.test"]["status"] == 200
    slow = items["slow.dns.test"]
    assert slow["error"] == "DNSLookupError"
    assert "no answer for 'slow.dns.test' within DNS_TIMEOUT, 1 s" in slow["message"]
    assert slow["after_s"] < 6, slow  # 1 s asked; generous, well before the answer (8 s)
    assert "downloader/exception_type_count/crawlfw.exceptions.DNSLookupError': 1" \
        in result.stderr
    assert "has no effect" not in result.stderr
    assert elapsed < 100


@pytest.mark.parametrize("setting, error", [
    ("DNS_TIMEOUT=-1",
     "DNS_TIMEOUT must be a number of seconds >= 0 (0: no limit of its own), got '-1'"),
    ("DNSCACHE_SIZE=0", "DNSCACHE_SIZE must be an int >= 1, got 0"),
])
@pytest.mark.slow
def test_a_bad_dns_setting_refuses_the_crawl_in_one_line(tmp_path, setting, error):
    (tmp_path / "dns_spider.py").write_text(textwrap.dedent(_SPIDER))
    result = subprocess.run(
        [sys.executable, "-m", "crawlfw.cmdline", "runspider", "dns_spider.py", "-a", "port=1",
         "-s", setting], cwd=str(tmp_path), env=crawlfw_env(),
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=90)
    assert result.returncode == 1
    assert f"Crawl could not start: {error}" in result.stderr
    assert "Traceback" not in result.stderr
