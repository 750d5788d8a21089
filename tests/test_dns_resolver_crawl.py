"""crawlfw's own resolver in real crawls (issue 31): crawl subprocesses whose
``DNS_RESOLV_CONF`` names a DNS server on a loopback address and a free port
(``tests/support/dnsserver.py``) that answers ``A`` at once and never answers
``AAAA``, and whose ``DNS_HOSTS_FILE`` is the test's own. No query leaves the loopback,
no root needed; the host names are mapped to the loopback HTTP servers
(``tests/support/broadsite.py``)."""

import json
import subprocess
import sys
import textwrap
import time

import pytest

from tests.support.broadsite import BroadSite
from tests.support.dnsserver import LocalDNS
from tests.support.proc import crawlfw_env

pytestmark = pytest.mark.slow

_SPIDER = """
import time
import crawlfw

class DnsSpider(crawlfw.Spider):
    name = "dns"
    custom_settings = {"RETRY_ENABLED": False}

    def start_requests(self):
        self.t0 = time.monotonic()
        for url in self.urls.split(","):
            yield crawlfw.Request(url, errback=self.failed, dont_filter=True)

    def parse(self, response):
        yield {"url": response.url, "status": response.status,
               "slot": response.meta.get("download_slot"), "ip": response.ip_address and
               str(response.ip_address)}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, errback=self.failed)

    def failed(self, failure):
        yield {"url": failure.request.url, "error": type(failure.value).__name__,
               "message": str(failure.value), "after_s": time.monotonic() - self.t0}
        again = int(getattr(self, "again", 0))
        if again and failure.request.meta.get("n", 0) < again:  # ask the same name again
            yield failure.request.replace(meta={"n": failure.request.meta.get("n", 0) + 1})
"""


def _crawl(tmp_path, dns, urls, *settings, again=0, hosts_text="", timeout_s=120):
    (tmp_path / "dns_spider.py").write_text(textwrap.dedent(_SPIDER))
    conf = dns.resolv_conf(tmp_path, timeout_s=30)
    hosts = tmp_path / "hosts"
    hosts.write_text(hosts_text)
    feed = tmp_path / "items.jl"
    args = [sys.executable, "-m", "crawlfw.cmdline", "runspider", "dns_spider.py",
            "-a", "urls=" + ",".join(urls), "-a", f"again={again}", "-O", str(feed),
            "-s", f"DNS_RESOLV_CONF={conf}", "-s", f"DNS_HOSTS_FILE={hosts}",
            "-s", "LOG_LEVEL=INFO"]
    for setting in settings:
        args += ["-s", setting]
    started = time.monotonic()
    result = subprocess.run(args, cwd=str(tmp_path), env=crawlfw_env(),
                            stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            timeout=timeout_s)
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stderr[-3000:]
    items = [json.loads(line) for line in feed.read_text().splitlines()]
    return items, result.stderr, elapsed


def _stat(stderr, name):
    """A stat's value from the dump at the end of the log (0 when absent)."""
    for line in stderr.splitlines():
        line = line.strip().lstrip("{").rstrip(",}")
        if line.startswith(f"'{name}':"):
            return int(line.split(":", 1)[1].strip().rstrip(",}"))
    return 0


@pytest.fixture
def site():
    s = BroadSite(pages=1)
    yield s
    s.stop()


def test_200_hosts_whose_aaaa_is_never_answered_are_crawled_in_seconds(tmp_path, site):
    """Each name's A answer comes at once, its AAAA never: the resolver goes on after
    the resolution delay (50 ms), so 200 new hosts take seconds, not 200 x a
    resolver timeout; every name is asked once, and libcurl resolves none itself."""
    names = {f"h{i}.dns.test": ("127.0.0.1", 0) for i in range(200)}
    with LocalDNS(names, port=0, aaaa="drop") as dns:
        items, stderr, elapsed = _crawl(
            tmp_path, dns, [f"http://{name}:{site.port}/" for name in names],
            "CONCURRENT_REQUESTS=50")
        assert all(dns.count(name) == 1 for name in names)
        assert dns.count_aaaa("h0.dns.test") == 1
    assert sorted(item["url"] for item in items if item.get("status") == 200) == sorted(
        f"http://{name}:{site.port}/" for name in names)
    assert elapsed < 30, elapsed  # a crawl process start included; seconds, not minutes
    assert _stat(stderr, "dns/lookups") == 200
    assert _stat(stderr, "dns/answered") == 200
    assert _stat(stderr, "dns/prefetched") > 0  # asked as their first requests were queued
    assert _stat(stderr, "dns/curl_lookups") == 0


def test_an_a_answer_later_than_dns_timeout_fails_as_dns_lookup_error(tmp_path, site):
    answers = {"slow.dns.test": ("127.0.0.1", 6), "fast.dns.test": ("127.0.0.1", 0)}
    with LocalDNS(answers, port=0, aaaa="drop") as dns:
        items, stderr, elapsed = _crawl(
            tmp_path, dns, [f"http://{name}:{site.port}/" for name in answers],
            "DNS_TIMEOUT=1", "DOWNLOAD_TIMEOUT=60")
    by_host = {item["url"].split("/")[2].split(":")[0]: item for item in items}
    assert by_host["fast.dns.test"]["status"] == 200
    slow = by_host["slow.dns.test"]
    assert slow["error"] == "DNSLookupError"
    assert "no answer for 'slow.dns.test' within DNS_TIMEOUT, 1 s" in slow["message"]
    assert slow["after_s"] < 5, slow  # 1 s asked, well before the answer (6 s)
    assert _stat(stderr, "dns/failures/timeout") == 1
    assert "downloader/exception_type_count/crawlfw.exceptions.DNSLookupError': 1" in stderr


def test_nxdomain_is_asked_once_per_name_within_its_cache_time(tmp_path, site):
    """The spider asks the same missing name 5 times in a row (each request after the
    previous one failed): one query, five DNSLookupErrors naming NXDOMAIN. The query is
    asked ahead, as the first request is queued (``dns/prefetched``): its failure still
    reaches that request's errback (the transfer finds it in the cache or waits for the
    lookup), and the four others' from the cache."""
    with LocalDNS({}, port=0, unknown="nxdomain", aaaa="drop") as dns:
        items, stderr, _ = _crawl(tmp_path, dns, [f"http://missing.dns.test:{site.port}/"],
                                  again=4)
        assert dns.count("missing.dns.test") == 1
    assert len(items) == 5
    assert {item["error"] for item in items} == {"DNSLookupError"}
    assert all("no such host name: 'missing.dns.test' (NXDOMAIN)" in item["message"]
               for item in items)
    assert _stat(stderr, "dns/failures/nxdomain") == 1
    assert _stat(stderr, "dns/lookups") == 1
    assert _stat(stderr, "dns/prefetched") == 1
    assert _stat(stderr, "dns/cache_hits") == 5


def test_the_hosts_file_overrides_the_name_servers(tmp_path, site):
    hosts_text = "127.0.0.1 pinned.dns.test\n"
    with LocalDNS({"pinned.dns.test": ("10.255.255.1", 0)}, port=0, aaaa="drop") as dns:
        items, stderr, _ = _crawl(tmp_path, dns, [f"http://pinned.dns.test:{site.port}/"],
                                  hosts_text=hosts_text)
        assert dns.count("pinned.dns.test") == 0 and dns.count_aaaa("pinned.dns.test") == 0
    assert [item.get("status") for item in items] == [200]
    assert _stat(stderr, "dns/lookups") == 0


def test_concurrent_requests_per_ip_groups_host_names_by_their_address(tmp_path):
    """Three names on 127.0.0.1 and three on 127.0.0.2 (two servers), three pages each:
    once a name's address is known its requests go to the slot of that address."""
    one = BroadSite(pages=3, address="127.0.0.1")
    two = BroadSite(pages=3, address="127.0.0.2")
    try:
        answers = {f"a{i}.dns.test": ("127.0.0.1", 0) for i in range(3)}
        answers.update({f"b{i}.dns.test": ("127.0.0.2", 0) for i in range(3)})
        urls = [f"http://{name}:{(one if name[0] == 'a' else two).port}/" for name in answers]
        with LocalDNS(answers, port=0, aaaa="drop") as dns:
            items, stderr, _ = _crawl(tmp_path, dns, urls, "CONCURRENT_REQUESTS_PER_IP=1")
            assert all(dns.count(name) == 1 for name in answers)
    finally:
        one.stop()
        two.stop()
    pages = [item for item in items if item.get("status") == 200]
    assert len(pages) == 18
    later = [item for item in pages if "/p/" in item["url"]]
    assert {item["slot"] for item in later if "//a" in item["url"]} == {"127.0.0.1"}
    assert {item["slot"] for item in later if "//b" in item["url"]} == {"127.0.0.2"}


_USER_RESOLVER = '''
import socket
import threading


class MapResolver:
    """A user's DNS_RESOLVER: a blocking resolve(host), each call noted in a file."""

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.settings.get("BOT_NAME"))

    def __init__(self, bot):
        self.bot = bot

    def resolve(self, host):
        with open("resolver_calls.txt", "a") as f:
            f.write(f"{host} {threading.current_thread().name} {self.bot}\\n")
        if host.startswith("missing."):
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return ["127.0.0.1"]
'''


def test_a_users_resolver_class_with_a_blocking_resolve(tmp_path):
    """``DNS_RESOLVER`` naming a class of the user's with a blocking ``resolve(host)``
    (built by its ``from_crawler``): it answers every name, once per name (the cache),
    on crawlfw's worker threads; a name it fails is a ``DNSLookupError`` in the errback;
    no name server is asked."""
    site = BroadSite(pages=2)
    try:
        (tmp_path / "userdns.py").write_text(_USER_RESOLVER)
        names = [f"u{i}.dns.test" for i in range(5)]
        urls = [f"http://{name}:{site.port}/" for name in names]
        urls.append(f"http://missing.dns.test:{site.port}/")
        with LocalDNS({}, port=0) as dns:
            items, stderr, _ = _crawl(tmp_path, dns, urls, "DNS_RESOLVER=userdns.MapResolver",
                                      "BOT_NAME=mybot")
            assert sum(dns.queries.values()) + sum(dns.aaaa_queries.values()) == 0
    finally:
        site.stop()
    pages = sorted(item["url"] for item in items if item.get("status") == 200)
    assert pages == sorted(u + p for u in urls[:-1] for p in ("", "p/1"))
    [failed] = [item for item in items if "error" in item]
    assert failed["error"] == "DNSLookupError"
    assert "no such host name: 'missing.dns.test' (NXDOMAIN)" in failed["message"]
    calls = [line.split() for line in (tmp_path / "resolver_calls.txt").read_text().splitlines()]
    assert sorted(host for host, _, _ in calls) == sorted([*names, "missing.dns.test"])
    assert {thread.startswith("crawlfw-dns") for _, thread, _ in calls} == {True}
    assert {bot for _, _, bot in calls} == {"mybot"}
    assert _stat(stderr, "dns/lookups") == 6
    assert _stat(stderr, "dns/failures/nxdomain") == 1


_LOADED_SPIDER = """
import sys
import crawlfw

class LoadedSpider(crawlfw.Spider):
    name = "loaded"

    def start_requests(self):
        yield crawlfw.Request(self.url)

    def parse(self, response):
        yield {"url": response.url,
               "loaded": sorted(m for m in ("pycares", "rbloom") if m in sys.modules)}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)
"""


def test_a_crawl_of_ip_literals_loads_neither_c_ares_nor_a_bloom_filter(tmp_path, site):
    """pycares is loaded with the resolver's first channel (a name to look up), rbloom
    with the seen set's first spill or DUPEFILTER_BLOOM_ERROR_RATE: a crawl of
    addresses pays for neither at its start."""
    (tmp_path / "loaded.py").write_text(_LOADED_SPIDER)
    feed = tmp_path / "items.jl"
    result = subprocess.run(
        [sys.executable, "-m", "crawlfw.cmdline", "runspider", "loaded.py", "-O", str(feed),
         "-a", f"url=http://127.0.0.1:{site.port}/", "-s", "LOG_LEVEL=INFO"],
        cwd=str(tmp_path), env=crawlfw_env(), stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    items = [json.loads(line) for line in feed.read_text().splitlines()]
    assert [item["url"] for item in items] == [f"http://127.0.0.1:{site.port}/"]
    assert all(item["loaded"] == [] for item in items), items
