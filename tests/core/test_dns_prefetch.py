"""Names resolved ahead of their transfers, and a late address family merged into the
cached answer (issue 31): :meth:`Resolver.prefetch` with answers given by hand and with
c-ares against a local name server (``tests/support/dnsserver.py``), the frontier's hook
that tells which hosts are new (``HostQueues.on_new_host``) and the SchedulerActor's
choice of names, and a user's ``DNS_RESOLVER`` class with a blocking ``resolve(host)``.
"""

import selectors
import socket
import threading
import time

import pytest

from crawlfw.core.frontier.hostqueues import HostQueues
from crawlfw.core.transport.dns import Answer, DnsCache, LookupFailed, read_resolv_conf
from crawlfw.core.transport.resolver import ThreadedResolver
from crawlfw.core.transport.resolver_cares import CaresResolver
from tests.support.dnsserver import LocalDNS
from tests.support.hand_resolver import HandResolver, drive


def _collect():
    got = []
    return got, got.append


# -- prefetch, answers by hand ------------------------------------------------------------


def test_a_name_resolved_ahead_waits_in_the_cache_for_its_transfer():
    r = HandResolver(cache=DnsCache(100))
    assert r.prefetch("h", 0.0) is True
    assert r.started == ["h"] and (r.lookups, r.prefetched, r.in_flight) == (1, 1, 1)
    r.both("h", 0.01)
    got, waiter = _collect()
    answer = r.resolve("h", waiter, 1.0)  # the transfer comes later: no lookup to wait for
    assert isinstance(answer, Answer) and answer.addresses == ("10.0.0.1",)
    assert (r.lookups, r.cache_hits) == (1, 1) and got == []
    assert not r._ahead_live  # its place in the window is free again
    assert r.prefetch("h", 2.0) is False  # cached: nothing to do


def test_a_transfer_joins_a_lookup_asked_ahead_and_gets_its_own_dns_timeout():
    r = HandResolver(cache=DnsCache(100), timeout_s=2)
    r.prefetch("slow", 0.0)
    got, waiter = _collect()
    assert r.resolve("slow", waiter, 1.5) is None  # joins the lookup in flight
    assert r.started == ["slow"] and r.cache_hits == 1
    r.on_timer(2.0)  # the lookup's own deadline: the transfer asked later
    assert got == [] and r.in_flight == 1
    r.on_timer(3.5)  # 2 s after the transfer asked
    assert got == [LookupFailed("slow", "timeout",
                                "no answer for 'slow' within DNS_TIMEOUT, 2 s")]


def test_a_lookup_ahead_that_times_out_alone_is_asked_again_by_its_transfer():
    r = HandResolver(cache=DnsCache(100), timeout_s=2)
    r.prefetch("slow", 0.0)
    r.on_timer(2.0)  # nobody waited: failed, not cached
    assert r.failures["timeout"] == 1 and not r._ahead_live
    got, waiter = _collect()
    assert r.resolve("slow", waiter, 3.0) is None
    assert r.started == ["slow", "slow"]
    r.both("slow", 3.1)
    assert got[0].addresses == ("10.0.0.1",)


def test_a_failed_lookup_ahead_reaches_each_transfer_as_its_failure():
    """NXDOMAIN found ahead is cached: every transfer of the name gets it (the
    transport makes it a DNSLookupError in the request's errback)."""
    r = HandResolver(cache=DnsCache(100), negative_ttl_s=30)
    r.prefetch("nx", 0.0)
    r.answer("nx", 4, [], 0.01, error="nxdomain")
    got, waiter = _collect()
    for now in (0.5, 1.0):
        failed = r.resolve("nx", waiter, now)
        assert isinstance(failed, LookupFailed) and failed.kind == "nxdomain"
    assert r.started == ["nx"] and r.failures["nxdomain"] == 1


def test_lookups_ahead_leave_room_for_transfers_and_stay_within_the_window():
    """Two lookups in flight at most, a window of four names resolved ahead and not
    asked for; a transfer's lookup goes before the names still waiting their turn."""
    r = HandResolver(cache=DnsCache(100), max_in_flight=2)
    assert r.ahead_window == 4
    for host in "abcdefg":
        r.prefetch(host, 0.0)
    assert r.started == ["a", "b"] and r.queued == 0 and list(r._ahead) == list("cdefg")
    got, waiter = _collect()
    r.resolve("x", waiter, 0.1)  # a transfer's: queued behind the two in flight
    assert r.queued == 1
    r.both("a", 0.2)
    assert r.started == ["a", "b", "x"]  # the transfer's first, not "c"
    r.both("x", 0.3)
    assert r.started == ["a", "b", "x", "c"]
    for host, now in (("b", 0.4), ("c", 0.5)):
        r.both(host, now)
    assert r.started == ["a", "b", "x", "c", "d"]  # a, b, c, d: the window is full
    r.both("d", 0.6)
    assert r.started[-1] == "d" and r.in_flight == 0 and list(r._ahead) == list("efg")
    assert r.resolve("a", waiter, 0.7).addresses == ("10.0.0.1",)  # "a" is asked for...
    assert r.started[-1] == "e"  # ...so "e" is resolved in its place
    assert r.prefetched == 5 and r.lookups == 6


def test_names_resolved_ahead_and_never_asked_for_free_the_window_when_they_expire():
    r = HandResolver(cache=DnsCache(100), max_in_flight=1, min_ttl_s=10, max_ttl_s=10)
    for host in "abc":
        r.prefetch(host, 0.0)
    r.both("a", 0.1)
    r.both("b", 0.2)
    assert r.started == ["a", "b"]  # window 2: "c" waits
    r.prefetch("d", 5.0)
    assert r.started == ["a", "b"]
    r.prefetch("e", 10.2)  # "a" expired at 10.1, "b" at 10.2: room for two
    assert r.started == ["a", "b", "c"]  # one in flight at a time
    r.both("c", 10.3)
    assert r.started == ["a", "b", "c", "d"]


def test_no_lookup_ahead_without_a_cache_or_for_a_hosts_file_name(tmp_path):
    r = HandResolver(cache=None)
    assert r.ahead_window == 0 and r.prefetch("h", 0.0) is False and r.started == []
    from crawlfw.core.transport.dns import HostsFile

    hosts = tmp_path / "hosts"
    hosts.write_text("127.0.0.1 pinned.test\n")
    cares = CaresResolver(hosts=HostsFile(hosts), cache=DnsCache(10), ipv6=False)
    try:
        cares.attach(selectors.DefaultSelector())
        cares.prefetch("pinned.test", 0.0)
        assert cares.lookups == 0 and cares._current is None  # not even a channel
    finally:
        cares.close()


def test_the_waiting_names_are_bounded_by_the_cache_size():
    r = HandResolver(cache=DnsCache(4), max_in_flight=1)
    assert (r.ahead_window, r.ahead_limit) == (2, 4)
    taken = [r.prefetch(f"h{i}", 0.0) for i in range(10)]
    assert taken == [True] * 5 + [False] * 5  # one started, four waiting, the rest dropped


# -- c-ares against a real server ----------------------------------------------------------


def _loop(resolver, selector, until, timeout_s=10.0):
    drive(resolver, selector, until, timeout_s, step_s=0.05)


def _cares(dns, tmp_path, **kw):
    selector = selectors.DefaultSelector()
    conf = read_resolv_conf(dns.resolv_conf(tmp_path, timeout_s=5))
    kw.setdefault("cache", DnsCache(100))
    r = CaresResolver(resolv_conf=conf, ipv6=True, **kw)
    r.attach(selector)
    return r, selector


def test_names_resolved_ahead_by_c_ares_are_cache_hits_for_their_transfers(tmp_path):
    names = [f"h{i}.test" for i in range(20)]
    with LocalDNS({n: ("127.0.0.1", 0) for n in names}, port=0, aaaa="drop") as dns:
        r, selector = _cares(dns, tmp_path)
        try:
            now = time.monotonic()
            for name in names:
                r.prefetch(name, now)
            _loop(r, selector, lambda: r.pending == 0 and not r._ahead)
            got, waiter = _collect()
            answers = [r.resolve(name, waiter, time.monotonic()) for name in names]
            assert all(a.addresses == ("127.0.0.1",) for a in answers)
            assert (r.lookups, r.prefetched, r.cache_hits) == (20, 20, 20)
            assert all(dns.count(n) == 1 for n in names)
        finally:
            r.close()
            selector.close()


def test_a_late_aaaa_answer_is_merged_into_the_cached_answer(tmp_path):
    """AAAA comes 0.3 s after A: the lookup is answered with A after the resolution
    delay, then the AAAA addresses join the cached answer (IPv6 first) and the
    transport is told."""
    with LocalDNS({"late.test": ("127.0.0.1", 0)}, port=0,
                  aaaa={"late.test": ("::1", 0.3)}) as dns:
        r, selector = _cares(dns, tmp_path)
        merged = []
        r.on_merged = merged.append
        try:
            got, waiter = _collect()
            assert r.resolve("late.test", waiter, time.monotonic()) is None
            _loop(r, selector, lambda: got)
            assert got[0].addresses == ("127.0.0.1",)  # after the delay, not the AAAA
            _loop(r, selector, lambda: merged)
            entry = r.cache.get("late.test", time.monotonic())
            assert entry.addresses == ("::1", "127.0.0.1") and entry.ip == "127.0.0.1"
            assert entry.expires_s <= got[0].expires_s
            assert merged == [entry] and r.merged == 1
            assert r.resolve("late.test", waiter, time.monotonic()) == entry
            assert (dns.count("late.test"), dns.count_aaaa("late.test")) == (1, 1)
        finally:
            r.close()
            selector.close()


def test_a_late_family_reaches_the_addresses_given_to_libcurl(tmp_path):
    """The transport's pinned CURLOPT_RESOLVE entry of the host takes the merged
    answer: the next transfer is given both families (the site listens on 127.0.0.1
    only, so libcurl's race falls back to it)."""
    from crawlfw.core.transport.curl import MultiDriver
    from crawlfw.http import Request
    from tests.support.broadsite import BroadSite

    site = BroadSite(pages=1)
    try:
        with LocalDNS({"late.test": ("127.0.0.1", 0)}, port=0,
                      aaaa={"late.test": ("::1", 0.3)}) as dns:
            conf = read_resolv_conf(dns.resolv_conf(tmp_path, timeout_s=5))
            resolver = CaresResolver(resolv_conf=conf, ipv6=True, cache=DnsCache(100))
            driver = MultiDriver(resolver=resolver)
            url = f"http://late.test:{site.port}/"
            key = f"http://late.test:{site.port}"
            try:
                results = []
                driver.add(Request(url), timeout_s=10)
                deadline = time.monotonic() + 10
                while driver.active or not resolver.merged:
                    assert time.monotonic() < deadline
                    results += driver.perform(0.05)
                assert driver._pins[key][1] == [f"+late.test:{site.port}:[::1],127.0.0.1"]
                driver.add(Request(url), timeout_s=10)
                while driver.active:
                    assert time.monotonic() < deadline
                    results += driver.perform(0.05)
                assert [res.response.status for res in results] == [200, 200]
                assert dns.count("late.test") == 1
            finally:
                driver.close()
    finally:
        site.stop()


# -- which hosts are resolved ahead ----------------------------------------------------------


class _Req:
    _host = None


class _Policy:
    randomize = False

    def concurrency(self, key):
        return 2

    def base_delay_s(self, key):
        return 0.0


def test_the_frontier_tells_each_host_once_while_it_has_requests():
    hq = HostQueues(_Policy())
    new = []
    hq.on_new_host = new.append
    hq.added("a.test", 0)
    hq.added("a.test", 0)
    hq.added("b.test", 0, 3)
    assert new == ["a.test", "b.test"]
    taken = hq.lease(10, 1.0, lambda key, limit, bound: ([_Req() for _ in range(limit)], None))
    assert len(taken) == 4
    hq.added("a.test", 0)  # in flight still: not new
    assert new == ["a.test", "b.test"]
    hq.finished({"a.test": 2, "b.test": 2}, 2.0)
    hq.lease(10, 2.0, lambda key, limit, bound: ([_Req()], None))
    hq.finished({"a.test": 1}, 3.0)
    hq.added("a.test", 0)  # forgotten since: new again (its name is cached by then)
    assert new == ["a.test", "b.test", "a.test"]


@pytest.mark.parametrize("key, told", [
    ("example.com", True), ("www.example.co.uk", True), ("xn--bcher-kva.example", True),
    ("127.0.0.1", False), ("::1", False), ("site1.localhost", False),
    ("my-slot", False), ("", False), ("slot with spaces.example", False),
])
def test_the_scheduler_resolves_ahead_only_what_looks_like_a_host_name(key, told):
    from crawlfw.actors.scheduler import _HOST_NAME
    from crawlfw.core.transport.dns import no_lookup_needed

    assert bool(_HOST_NAME.fullmatch(key) and not no_lookup_needed(key)) is told


def test_resolves_ahead_with_crawlfws_resolver_and_its_cache_only():
    from crawlfw.resolver import resolves_ahead
    from crawlfw.settings import Settings

    assert resolves_ahead(Settings())
    assert resolves_ahead(Settings({"DNS_RESOLVER": "scrapy.resolver.CachingThreadedResolver"}))
    assert resolves_ahead(Settings({"DNS_RESOLVER": "socket.socket"}))  # a user's class
    assert not resolves_ahead(Settings({"DNSCACHE_ENABLED": False}))
    assert not resolves_ahead(Settings({"DNS_RESOLVER": "crawlfw.resolver.LibcurlResolver"}))
    assert not resolves_ahead(Settings({"DNS_RESOLVER": "no.such.Resolver"}))


# -- a user's resolver class --------------------------------------------------------------


class _MapResolver:
    """A user's DNS_RESOLVER: a blocking ``resolve(host)``."""

    def __init__(self):
        self.calls = []

    def resolve(self, host):
        self.calls.append((host, threading.current_thread().name))
        if host == "missing.test":
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        if host == "slow.test":
            time.sleep(0.5)
        return ["127.0.0.1", "::1"] if host == "both.test" else "127.0.0.1"


def test_a_users_blocking_resolver_runs_on_worker_threads_behind_the_cache():
    user = _MapResolver()
    r = ThreadedResolver(user, threads=2, cache=DnsCache(10), timeout_s=0.2)
    selector = selectors.DefaultSelector()
    r.attach(selector)
    try:
        got, waiter = _collect()
        for host in ("a.test", "both.test", "missing.test", "slow.test", "a.test"):
            assert r.resolve(host, waiter, time.monotonic()) is None
        _loop(r, selector, lambda: len(got) == 5)
        by_host = {}
        for result in got:
            by_host.setdefault(result.host, []).append(result)
        assert [a.addresses for a in by_host["a.test"]] == [("127.0.0.1",)] * 2
        assert by_host["both.test"][0].addresses == ("::1", "127.0.0.1")
        assert by_host["missing.test"][0].kind == "nxdomain"
        assert by_host["slow.test"][0].kind == "timeout"  # DNS_TIMEOUT, 0.2 s
        assert r.resolve("a.test", waiter, time.monotonic()).ip == "127.0.0.1"  # cached
        assert sorted(h for h, _ in user.calls) == ["a.test", "both.test", "missing.test",
                                                    "slow.test"]
        assert {name.startswith("crawlfw-dns") for _, name in user.calls} == {True}
        assert r.prefetch("ahead.test", time.monotonic())  # resolved ahead too
        _loop(r, selector, lambda: r.pending == 0)
        assert r.cache.get("ahead.test", time.monotonic()).ip == "127.0.0.1"
    finally:
        r.close()
        selector.close()
