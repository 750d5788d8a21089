"""crawlfw's resolver, without the downloader: the plain parts (cache, hosts file,
resolv.conf, failure kinds, Happy Eyeballs' resolution delay, the bound on lookups in
flight) table-driven, and :class:`CaresResolver` against a real DNS server on a
loopback address (``tests/support/dnsserver.py``, on a free port: c-ares is told it
through a ``resolv.conf``-style file), driven by a selector loop as the transport
drives it."""

import selectors
import time

import pytest

from crawlfw.core.transport import resolver_cares as resolver_module
from crawlfw.core.transport.dns import (
    Answer,
    DnsCache,
    HostsFile,
    LookupFailed,
    make_answer,
    no_lookup_needed,
    parse_hosts,
    read_resolv_conf,
)
from crawlfw.core.transport.resolver import Resolver, _failure_kind
from crawlfw.core.transport.resolver_cares import CaresResolver
from tests.support.dnsserver import LocalDNS
from tests.support.hand_resolver import HandResolver, drive

# -- plain parts ----------------------------------------------------------------------


def test_cache_drops_the_least_recently_used_name_past_its_size():
    cache = DnsCache(2)
    for host in ("a", "b"):
        cache.put(make_answer(host, [], ["10.0.0.1"], 100.0))
    assert cache.get("a", 0.0) is not None  # a is now the most recently used
    cache.put(make_answer("c", [], ["10.0.0.3"], 100.0))
    assert ("a" in cache, "b" in cache, "c" in cache) == (True, False, True)


def test_cache_forgets_an_expired_entry():
    cache = DnsCache(10)
    cache.put(make_answer("a", [], ["10.0.0.1"], 5.0))
    assert cache.get("a", 4.9).addresses == ("10.0.0.1",)
    assert cache.get("a", 5.0) is None
    assert len(cache) == 0


@pytest.mark.parametrize("size", [0, -1, 2.5, "10", True])
def test_cache_refuses_a_bad_size_naming_the_setting(size):
    with pytest.raises(ValueError, match="DNSCACHE_SIZE must be an int >= 1"):
        DnsCache(size)


def test_answer_puts_ipv6_first_and_stands_for_the_host_by_its_first_ipv4():
    answer = make_answer("h", ["::2", "::2"], ["10.0.0.1", "10.0.0.2"], 1.0)
    assert answer.addresses == ("::2", "10.0.0.1", "10.0.0.2")
    assert answer.ip == "10.0.0.1"
    assert make_answer("h", ["::2"], [], 1.0).ip == "::2"


@pytest.mark.parametrize("host, needed", [
    ("127.0.0.1", True), ("10.1.2.3", True), ("::1", True), ("fe80::1%eth0", True),
    ("localhost", True), ("site7.localhost", True), ("", True),
    ("example.com", False), ("1.example.com", False), ("123", False),
    ("localhost.example.com", False), ("999.1.1.1", False),
])
def test_ip_literals_and_localhost_names_need_no_lookup(host, needed):
    assert no_lookup_needed(host) is needed


def test_hosts_file_lines_comments_and_families():
    names = parse_hosts("127.0.0.1 localhost\n"
                        "10.0.0.5 Web.Example. web # the web server\n"
                        "::5 web\n"
                        "# 10.9.9.9 hidden\n"
                        "not-an-ip foo\n"
                        "10.0.0.6 web\n")
    assert names["web.example"] == ([], ["10.0.0.5"])
    assert names["web"] == (["::5"], ["10.0.0.5", "10.0.0.6"])
    assert "hidden" not in names and "foo" not in names


def test_hosts_file_is_read_again_when_it_changes(tmp_path):
    path = tmp_path / "hosts"
    path.write_text("10.0.0.1 a\n")
    hosts = HostsFile(path)
    assert hosts.lookup("a", 0.0) == ([], ["10.0.0.1"])
    path.write_text("10.0.0.2 a\n10.0.0.3 b\n")
    import os
    os.utime(path, (time.time() + 5, time.time() + 5))
    assert hosts.lookup("a", 0.5) == ([], ["10.0.0.1"])  # checked at most once a second
    assert hosts.lookup("a", 1.5) == ([], ["10.0.0.2"])
    assert HostsFile(tmp_path / "missing").lookup("a", 0.0) is None


def test_resolv_conf_servers_search_and_options(tmp_path):
    path = tmp_path / "resolv.conf"
    path.write_text("# comment\nnameserver 127.0.0.1:5353\nnameserver ::1\n"
                    "domain old.test\nsearch a.test b.test.\n"
                    "options ndots:2 timeout:3 attempts:4 rotate\n")
    conf = read_resolv_conf(path)
    assert conf == (["127.0.0.1:5353", "::1"], ["a.test", "b.test"], 2, 3.0, 4)


def test_resolv_conf_without_a_server_is_refused_naming_the_setting(tmp_path):
    path = tmp_path / "resolv.conf"
    path.write_text("search a.test\n")
    with pytest.raises(ValueError, match="DNS_RESOLV_CONF: .* names no nameserver"):
        read_resolv_conf(path)
    with pytest.raises(ValueError, match="DNS_RESOLV_CONF: cannot read"):
        read_resolv_conf(tmp_path / "missing")


@pytest.mark.parametrize("errors, kind", [
    (["nxdomain"], "nxdomain"),
    (["nxdomain", "nxdomain"], "nxdomain"),
    (["nxdomain", "nodata"], "nodata"),
    (["nodata"], "nodata"),
    (["timeout", "nodata"], "timeout"),
    (["nxdomain", "timeout"], "nxdomain"),
    (["servfail", "timeout"], "servfail"),
    (["refused"], "refused"),
    (["error"], "error"),
])
def test_failure_kind_of_a_lookup(errors, kind):
    assert _failure_kind(errors) == kind


@pytest.mark.parametrize("kwargs, message", [
    ({"max_in_flight": 0}, "DNS_CONCURRENT_LOOKUPS must be an int >= 1"),
    ({"timeout_s": -1}, "DNS_TIMEOUT must be a number of seconds >= 0"),
    ({"min_ttl_s": -1}, "DNSCACHE_MIN_TTL must be a number of seconds >= 0"),
    ({"min_ttl_s": 10, "max_ttl_s": 5}, "DNSCACHE_MAX_TTL"),
    ({"negative_ttl_s": float("nan")}, "DNSCACHE_NEGATIVE_TTL"),
])
def test_bad_bounds_are_refused_naming_the_setting(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Resolver(**kwargs)


# -- the shared machinery, with answers given by hand ------------------------------------


def _collect():
    got = []
    return got, got.append


def test_a_first_then_aaaa_within_the_resolution_delay_gives_both():
    r = HandResolver(cache=DnsCache(10))
    got, waiter = _collect()
    assert r.resolve("h", waiter, 0.0) is None
    r.answer("h", 4, ["10.0.0.1"], 0.010)
    assert r.next_deadline_s(0.010) == pytest.approx(0.060)
    r.answer("h", 6, ["::1"], 0.030)
    assert got == [make_answer("h", ["::1"], ["10.0.0.1"], 0.030 + 300)]


def test_a_without_aaaa_is_answered_after_the_resolution_delay():
    r = HandResolver(cache=DnsCache(10))
    got, waiter = _collect()
    r.resolve("h", waiter, 0.0)
    r.answer("h", 4, ["10.0.0.1"], 0.010)
    r.on_timer(0.059)
    assert got == []
    r.on_timer(0.061)
    assert got == [make_answer("h", [], ["10.0.0.1"], 0.061 + 300)]
    r.answer("h", 6, ["::1"], 0.5) if "h" in r._pending else None  # late: nothing waits
    assert r.resolve("h", waiter, 1.0).addresses == ("10.0.0.1",)  # from the cache
    assert (r.lookups, r.cache_hits, r.in_flight) == (1, 1, 0)


def test_aaaa_first_waits_the_resolution_delay_for_a_too():
    r = HandResolver()
    got, waiter = _collect()
    r.resolve("h", waiter, 0.0)
    r.answer("h", 6, ["::1"], 0.001)
    r.answer("h", 4, ["10.0.0.1"], 0.020)
    assert got[0].addresses == ("::1", "10.0.0.1")


def test_one_family_failing_answers_with_the_other_at_once():
    r = HandResolver()
    got, waiter = _collect()
    r.resolve("h", waiter, 0.0)
    r.answer("h", 6, [], 0.001, error="nodata")
    assert got == []
    r.answer("h", 4, ["10.0.0.1"], 0.002)
    assert got[0].addresses == ("10.0.0.1",)  # no resolution delay: AAAA is in


def test_nxdomain_is_cached_for_the_negative_ttl_and_counted():
    r = HandResolver(cache=DnsCache(10), negative_ttl_s=30)
    got, waiter = _collect()
    r.resolve("nx", waiter, 0.0)
    r.answer("nx", 4, [], 0.01, error="nxdomain")  # AAAA not needed: no such name
    assert got == [LookupFailed("nx", "nxdomain", "no such host name: 'nx' (NXDOMAIN)", 30.01)]
    assert r.resolve("nx", waiter, 29.0).kind == "nxdomain"
    assert r.resolve("nx", waiter, 31.0) is None  # expired: asked again
    assert r.started == ["nx", "nx"]
    assert r.failures["nxdomain"] == 1


def test_ttls_are_kept_within_bounds():
    r = HandResolver(cache=DnsCache(10), min_ttl_s=10, max_ttl_s=100)
    for host, ttl, kept in (("low", 1, 10), ("mid", 50, 50), ("high", 999, 100)):
        got, waiter = _collect()
        r.resolve(host, waiter, 0.0)
        r.answer(host, 4, ["10.0.0.1"], 0.0, ttl_s=ttl)
        r.answer(host, 6, [], 0.0, error="nodata")
        assert got[0].expires_s == kept


def test_waiters_of_one_name_share_one_lookup():
    r = HandResolver()
    got, waiter = _collect()
    for _ in range(3):
        r.resolve("h", waiter, 0.0)
    r.answer("h", 4, ["10.0.0.1"], 0.0)
    r.answer("h", 6, [], 0.0, error="nodata")
    assert len(got) == 3 and r.started == ["h"]
    assert (r.lookups, r.cache_hits) == (1, 2)


def test_lookups_in_flight_are_bounded_the_others_queued_in_order():
    r = HandResolver(max_in_flight=2)
    got, waiter = _collect()
    for host in "abcd":
        r.resolve(host, waiter, 0.0)
    assert r.started == ["a", "b"] and (r.in_flight, r.queued) == (2, 2)
    r.answer("a", 4, [], 0.1, error="nxdomain")
    assert r.started == ["a", "b", "c"] and (r.in_flight, r.queued) == (2, 1)


def test_dns_timeout_fails_the_lookup_and_counts_it():
    r = HandResolver(timeout_s=2, max_in_flight=1)
    got, waiter = _collect()
    r.resolve("slow", waiter, 0.0)
    r.resolve("queued", waiter, 1.0)  # waits for the one lookup in flight
    assert r.next_deadline_s(1.0) == 2.0
    r.on_timer(2.0)
    assert got == [LookupFailed("slow", "timeout", "no answer for 'slow' within DNS_TIMEOUT, 2 s")]
    assert r.started == ["slow", "queued"]
    r.on_timer(3.0)
    assert got[1].host == "queued" and got[1].kind == "timeout"
    assert r.failures["timeout"] == 2 and r.in_flight == 0


# -- c-ares against a real server --------------------------------------------------------


def _loop(resolver, selector, until, timeout_s=10.0):
    drive(resolver, selector, until, timeout_s, step_s=0.5)


@pytest.fixture
def cares(tmp_path):
    made = []

    def make(dns, *, hosts=None, search="", ndots=None, **kw):
        selector = selectors.DefaultSelector()
        conf = read_resolv_conf(dns.resolv_conf(tmp_path, timeout_s=5, search=search,
                                                ndots=ndots))
        kw.setdefault("cache", DnsCache(100))
        r = CaresResolver(resolv_conf=conf, hosts=HostsFile(hosts) if hosts else None,
                          ipv6=True, **kw)
        r.attach(selector)
        made.append((r, selector))
        return r, selector

    yield make
    for r, selector in made:
        r.close()
        selector.close()


def _resolve(r, selector, host):
    got = []
    now = time.monotonic()
    known = r.resolve(host, got.append, now)
    if known is not None:
        return known, 0.0
    _loop(r, selector, lambda: got)
    return got[0], time.monotonic() - now


def test_an_aaaa_never_answered_costs_the_resolution_delay_only(cares):
    with LocalDNS({"a.test": ("127.0.0.1", 0)}, port=0, aaaa="drop") as dns:
        r, selector = cares(dns)
        answer, took = _resolve(r, selector, "a.test")
        assert isinstance(answer, Answer) and answer.addresses == ("127.0.0.1",)
        assert 0.045 <= took < 1.0, took
        assert dns.count("a.test") == 1 and dns.count_aaaa("a.test") == 1


def test_both_families_answered_come_ipv6_first(cares):
    with LocalDNS({"b.test": ("127.0.0.2", 0)}, port=0, aaaa={"b.test": "::1"}) as dns:
        r, selector = cares(dns)
        answer, _ = _resolve(r, selector, "b.test")
        assert answer.addresses == ("::1", "127.0.0.2") and answer.ip == "127.0.0.2"


def test_nxdomain_is_asked_once_within_its_cache_time(cares):
    with LocalDNS({}, port=0, unknown="nxdomain") as dns:
        r, selector = cares(dns, negative_ttl_s=30)
        for _ in range(3):
            failed, _ = _resolve(r, selector, "missing.test")
            assert failed.kind == "nxdomain"
        assert dns.count("missing.test") == 1
        assert r.failures["nxdomain"] == 1 and r.cache_hits == 2


def test_a_ttl_is_respected(cares):
    with LocalDNS({"t.test": ("127.0.0.1", 0, 1)}, port=0) as dns:
        r, selector = cares(dns, min_ttl_s=0)
        answer, _ = _resolve(r, selector, "t.test")
        _resolve(r, selector, "t.test")
        assert dns.count("t.test") == 1
        time.sleep(max(0.0, answer.expires_s - time.monotonic()) + 0.05)
        _resolve(r, selector, "t.test")
        assert dns.count("t.test") == 2


def test_the_hosts_file_answers_without_asking(cares, tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("10.9.8.7 pinned.test\n")
    with LocalDNS({"pinned.test": ("127.0.0.1", 0)}, port=0) as dns:
        r, selector = cares(dns, hosts=hosts)
        answer, took = _resolve(r, selector, "pinned.test")
        assert answer.addresses == ("10.9.8.7",) and took == 0.0
        assert dns.count("pinned.test") == 0 and dns.count_aaaa("pinned.test") == 0


def test_the_search_list_and_ndots_apply(cares):
    with LocalDNS({"short.corp.test": ("127.0.0.3", 0)}, port=0, unknown="nxdomain") as dns:
        r, selector = cares(dns, search="corp.test", ndots=1)
        answer, _ = _resolve(r, selector, "short")
        assert answer.addresses == ("127.0.0.3",) and answer.host == "short"


def test_a_delayed_past_dns_timeout_fails_as_timeout(cares):
    with LocalDNS({"slow.test": ("127.0.0.1", 3)}, port=0, aaaa="drop") as dns:
        r, selector = cares(dns, timeout_s=0.3)
        failed, took = _resolve(r, selector, "slow.test")
        assert failed == LookupFailed("slow.test", "timeout",
                                      "no answer for 'slow.test' within DNS_TIMEOUT, 0.3 s")
        assert 0.25 <= took < 2.0
        assert dns.count("slow.test") == 1


def test_channels_are_renewed_and_every_lookup_answered(cares, monkeypatch):
    monkeypatch.setattr(resolver_module, "CHANNEL_LOOKUPS", 3)
    names = {f"n{i}.test": ("127.0.0.1", 0) for i in range(10)}
    with LocalDNS(names, port=0, aaaa="drop") as dns:
        r, selector = cares(dns, max_in_flight=4)
        got = []
        now = time.monotonic()
        for name in names:
            r.resolve(name, got.append, now)
        _loop(r, selector, lambda: len(got) == len(names))
        assert sorted(a.host for a in got) == sorted(names)
        assert all(isinstance(a, Answer) for a in got)
        assert len(r._draining) <= 1 and r.in_flight == 0
        assert dns.count("n9.test") == 1


# -- the transport with the resolver -------------------------------------------------------


@pytest.fixture
def http_site():
    from tests.support.broadsite import BroadSite

    site = BroadSite(pages=1)
    yield site
    site.stop()


def _driver(dns, tmp_path, **kw):
    from crawlfw.core.transport.curl import MultiDriver

    conf = read_resolv_conf(dns.resolv_conf(tmp_path, timeout_s=5))
    kw.setdefault("cache", DnsCache(100))
    return MultiDriver(resolver=CaresResolver(resolv_conf=conf, ipv6=True, **kw))


def _fetch_all(driver, urls, timeout_s=30.0, **add):
    from crawlfw.http import Request

    for url in urls:
        driver.add(Request(url), timeout_s=timeout_s, **add)
    results = []
    deadline = time.monotonic() + 20
    while driver.active:
        assert time.monotonic() < deadline
        results += driver.perform(1.0)
    return results


def test_ip_literals_and_localhost_never_reach_the_resolver(tmp_path, http_site):
    with LocalDNS({}, port=0) as dns:
        driver = _driver(dns, tmp_path)
        try:
            results = _fetch_all(driver, [f"http://127.0.0.1:{http_site.port}/",
                                          f"http://site1.localhost:{http_site.port}/"] * 2)
            assert [r.response.status for r in results] == [200] * 4
            assert [r.resolved_ip for r in results] == ["127.0.0.1"] * 4
            resolver = driver._resolver
            assert (resolver.lookups, resolver.cache_hits) == (0, 0)
            assert resolver._current is None  # no c-ares channel was even made
            assert driver.curl_lookups == 0
        finally:
            driver.close()


def test_named_hosts_are_pinned_with_curlopt_resolve(tmp_path, http_site):
    with LocalDNS({"a.test": ("127.0.0.1", 0)}, port=0, aaaa="drop") as dns:
        driver = _driver(dns, tmp_path)
        try:
            url = f"http://a.test:{http_site.port}/"
            results = _fetch_all(driver, [url, url]) + _fetch_all(driver, [url])
            assert [r.response.status for r in results] == [200] * 3
            assert {r.resolved_ip for r in results} == {"127.0.0.1"}
            assert dns.count("a.test") == 1
            resolver = driver._resolver
            assert (resolver.lookups, resolver.cache_hits) == (1, 2)  # 1 waiter, 1 pin
            assert driver.curl_lookups == 0  # libcurl resolved nothing itself
        finally:
            driver.close()


def test_the_download_timeout_covers_a_lookup_that_takes_longer(tmp_path, http_site):
    from crawlfw.exceptions import DownloadTimeoutError

    with LocalDNS({"slow.test": ("127.0.0.1", 3)}, port=0, aaaa="drop") as dns:
        driver = _driver(dns, tmp_path, timeout_s=60)
        try:
            started = time.monotonic()
            [result] = _fetch_all(driver, [f"http://slow.test:{http_site.port}/"],
                                  timeout_s=0.3)
            assert isinstance(result.error, DownloadTimeoutError)
            assert "not resolved within the download timeout, 0.3 s" in str(result.error)
            assert time.monotonic() - started < 2.5
        finally:
            driver.close()


def test_a_failed_lookup_is_a_dns_lookup_error_for_every_waiting_transfer(tmp_path,
                                                                          http_site):
    from crawlfw.exceptions import DNSLookupError

    with LocalDNS({}, port=0, unknown="nxdomain") as dns:
        driver = _driver(dns, tmp_path)
        try:
            url = f"http://nx.test:{http_site.port}/"
            results = _fetch_all(driver, [url, url]) + _fetch_all(driver, [url])
            assert [type(r.error) for r in results] == [DNSLookupError] * 3
            assert str(results[0].error) == (f"DNS lookup failed: {url} (no such host name: "
                                             f"'nx.test' (NXDOMAIN))")
            assert results[0].error.curl_code == 6
            assert dns.count("nx.test") == 1
        finally:
            driver.close()


def test_a_proxys_name_is_resolved_not_the_targets(tmp_path, http_site):
    """Through an HTTP proxy the proxy resolves the target: only the proxy's name is
    looked up (here the 'proxy' is the site itself, which answers any URL)."""
    with LocalDNS({"proxy.test": ("127.0.0.1", 0)}, port=0, aaaa="drop") as dns:
        driver = _driver(dns, tmp_path)
        try:
            [result] = _fetch_all(driver, ["http://target.test/"],
                                  proxy=f"http://proxy.test:{http_site.port}")
            assert result.response is not None, result.error  # the proxy answered
            assert (dns.count("proxy.test"), dns.count("target.test")) == (1, 0)
            assert result.resolved_ip is None
        finally:
            driver.close()


# -- stats and status ------------------------------------------------------------------------


def test_dns_stats_add_up_the_downloaders_counters_and_status_shows_them():
    from crawlfw.commands.status import format_status
    from crawlfw.control import _dns_status
    from crawlfw.resolver import DnsStats
    from crawlfw.settings import Settings
    from crawlfw.statscollectors import MemoryStatsCollector

    class _Crawler:
        settings = Settings()
    stats = MemoryStatsCollector(_Crawler())
    one, two = HandResolver(), HandResolver()
    publishers = [DnsStats(r, stats, None) for r in (one, two)]
    got, waiter = _collect()
    for r in (one, two):
        r.resolve("h", waiter, 0.0)
    one.answer("h", 4, [], 0.2, error="nxdomain")
    two.cache_hits += 6
    for p in publishers:
        p.publish()
    values = stats.get_stats()
    assert (values["dns/lookups"], values["dns/cache_hits"], values["dns/in_flight"]) == (2, 6, 1)
    assert values["dns/failures/nxdomain"] == 1 and values["dns/latency_max_ms"] == 200
    status = _dns_status(None, values)
    assert status == {"in_flight": 1, "queued": 0, "lookups": 2, "cache_hits": 6,
                      "hit_rate": 0.75, "failures": 1}
    crawl = {"crawl_id": "c-1", "spider": "s", "state": "running", "pages": 1,
             "pages_per_min": 1.0, "items": 0, "items_per_min": 0.0, "pending": 0,
             "in_flight": 1, "slots": {}, "errors": {}, "peak_memory_bytes": 1 << 20,
             "uptime_s": 3.0, "jobdir": None, "shared": None, "dns": status}
    assert ("dns         1 lookups in flight (0 queued), cache hit rate 75% (6 hits, 2 "
            "lookups, 1 failed)") in format_status(1, crawl)
    assert _dns_status(None, {}) is None
