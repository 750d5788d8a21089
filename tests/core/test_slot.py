"""DownloadSlot (concurrency + delay with a fake clock) and slot_key."""

import random

import pytest

from crawlfw.core.transport.slot import DownloadSlot, slot_key
from crawlfw.exceptions import CrawlfwDeprecationWarning
from crawlfw.http import Request
from crawlfw.settings import Settings


def reqs(n):
    return [Request(f"http://example.com/{i}") for i in range(n)]


def names(requests):
    return [r.url.rsplit("/", 1)[1] for r in requests]


# Each step: (action, now_s, expected). Actions: "pop" -> names started,
# "done <i>" -> transfer_done(request i), "next" -> next_ready_in_s.
@pytest.mark.parametrize(
    "concurrency, delay_s, steps",
    [
        pytest.param(
            2,
            0.0,
            [
                ("pop", 0.0, ["0", "1"]),
                ("pop", 0.0, []),
                ("next", 0.0, None),  # capacity-bound
                ("done 0", 0.0, None),
                ("next", 0.0, 0.0),
                ("pop", 0.0, ["2"]),
                ("done 1", 0.0, None),
                ("done 2", 0.0, None),
                ("pop", 0.0, ["3", "4"]),
                ("next", 0.0, None),  # nothing queued
            ],
            id="concurrency-only",
        ),
        pytest.param(
            8,
            2.0,
            [
                ("pop", 10.0, ["0"]),  # one request per delay despite free slots
                ("pop", 10.0, []),
                ("next", 10.5, 1.5),
                ("pop", 11.9, []),
                ("pop", 12.0, ["1"]),
                ("next", 12.0, 2.0),
                ("pop", 20.0, ["2"]),  # late: starts at once, no catching up
                ("pop", 20.0, []),
                ("next", 21.0, 1.0),
            ],
            id="delay-bound",
        ),
        pytest.param(
            1,
            1.0,
            [
                ("pop", 0.0, ["0"]),
                ("pop", 5.0, []),  # delay passed but the only slot is busy
                ("next", 5.0, None),
                ("done 0", 5.0, None),
                ("next", 5.0, 0.0),
                ("pop", 5.0, ["1"]),
                ("done 1", 5.1, None),
                ("next", 5.5, 0.5),
                ("pop", 6.0, ["2"]),
            ],
            id="delay-and-concurrency",
        ),
    ],
)
def test_flow(concurrency, delay_s, steps):
    slot = DownloadSlot(concurrency, delay_s, False)
    requests = reqs(5)
    for r in requests:
        slot.enqueue(r)
    for action, now, expected in steps:
        if action == "pop":
            started = slot.pop_ready(now)
            assert names(started) == expected, (action, now)
            assert all(r in slot.inprogress for r in started)
        elif action == "next":
            got = slot.next_ready_in_s(now)
            if expected is None:
                assert got is None, (action, now)
            else:
                assert got == pytest.approx(expected), (action, now)
        else:
            slot.transfer_done(requests[int(action.split()[1])])
        assert slot.in_flight + slot.queued + _finished(slot, requests) == 5


def _finished(slot, requests):
    return sum(1 for r in requests if r not in slot.inprogress and r not in slot.queue)


def test_counts_and_idle():
    slot = DownloadSlot(3, 0, False)
    assert slot.is_idle() and slot.queued == 0 and slot.in_flight == 0
    a, b = reqs(2)
    slot.enqueue(a)
    slot.enqueue(b)
    assert not slot.is_idle() and slot.queued == 2 and slot.free_transfer_slots() == 3
    assert slot.pop_ready(0) == [a, b]
    assert slot.queued == 0 and slot.in_flight == 2 and slot.free_transfer_slots() == 1
    slot.transfer_done(a)
    slot.transfer_done(b)
    assert slot.is_idle()


def test_randomized_delay_stays_within_half_to_one_and_a_half():
    slot = DownloadSlot(1, 2.0, True, rng=random.Random(7))
    now, gaps = 0.0, []
    for r in reqs(200):
        slot.enqueue(r)
    last = None
    while slot.queued:
        wait = slot.next_ready_in_s(now)
        now += wait
        (started,) = slot.pop_ready(now)
        slot.transfer_done(started)
        if last is not None:
            gaps.append(now - last)
        last = now
    assert min(gaps) >= 1.0 - 1e-9 and max(gaps) <= 3.0 + 1e-9
    assert max(gaps) - min(gaps) > 1.0  # really randomized


def test_delay_change_applies_to_the_next_start():
    slot = DownloadSlot(4, 5.0, False)
    for r in reqs(3):
        slot.enqueue(r)
    assert len(slot.pop_ready(0.0)) == 1
    slot.delay_s = 1.0  # AutoThrottle lowering the delay
    assert slot.next_ready_in_s(0.5) == pytest.approx(0.5)
    assert len(slot.pop_ready(1.0)) == 1
    slot.delay_s = 0.0
    assert len(slot.pop_ready(1.0)) == 1


def test_transfer_done_of_unknown_request():
    slot = DownloadSlot(1, 0, False)
    with pytest.raises(KeyError, match="not in flight"):
        slot.transfer_done(Request("http://example.com/"))


def test_requeue_inprogress_puts_them_first_in_start_order():
    slot = DownloadSlot(2, 0, False)
    a, b, c = reqs(3)
    for r in (a, b, c):
        slot.enqueue(r)
    assert slot.pop_ready(0) == [a, b]
    assert slot.requeue_inprogress() == [a, b]
    assert list(slot.queue) == [a, b, c] and slot.in_flight == 0


@pytest.mark.parametrize(
    "concurrency, delay", [(0, 0), (-1, 0), (1.5, 0), (1, -1), (1, float("nan"))]
)
def test_bad_arguments(concurrency, delay):
    with pytest.raises(ValueError):
        DownloadSlot(concurrency, delay, False)


@pytest.mark.parametrize(
    "url, meta, ip_cache, key",
    [
        ("http://Example.COM:8080/x", {}, None, "example.com"),
        ("https://sub.example.com/", {}, None, "sub.example.com"),
        ("http://example.com/", {"download_slot": "shared"}, None, "shared"),
        ("http://example.com/", {"download_slot": "shared"}, {"example.com": "1.2.3.4"}, "shared"),
        ("http://example.com/", {}, {"example.com": "1.2.3.4"}, "1.2.3.4"),
        ("http://other.com/", {}, {"example.com": "1.2.3.4"}, "other.com"),
        ("file:///tmp/x.html", {}, None, ""),
    ],
)
def test_slot_key(url, meta, ip_cache, key):
    assert slot_key(Request(url, meta=meta), ip_cache) == key


class _Spider:
    pass


@pytest.mark.parametrize(
    "settings, spider_attrs, expected",
    [
        ({}, {}, (8, 0.0, True)),
        ({"CONCURRENT_REQUESTS_PER_DOMAIN": 3, "DOWNLOAD_DELAY": 1.5}, {}, (3, 1.5, True)),
        ({"CONCURRENT_REQUESTS_PER_IP": 2, "RANDOMIZE_DOWNLOAD_DELAY": False}, {}, (2, 0.0, False)),
        ({}, {"download_delay": 4, "max_concurrent_requests": 1}, (1, 4.0, True)),
    ],
)
def test_from_settings(settings, spider_attrs, expected):
    spider = _Spider()
    for name, value in spider_attrs.items():
        setattr(spider, name, value)
    slot = DownloadSlot.from_settings(Settings(settings), spider)
    assert (slot.concurrency, slot.delay_s, slot.randomize_delay) == expected


def test_from_settings_deprecated_spider_attribute():
    spider = _Spider()
    spider.DOWNLOAD_DELAY = 3
    with pytest.warns(CrawlfwDeprecationWarning, match="download_delay"):
        slot = DownloadSlot.from_settings(Settings(), spider)
    assert slot.delay_s == 3.0


def test_paced_requests_skip_the_delay_but_not_the_concurrency():
    """Requests the frontier already spaced (``_paced``) start at once up to the
    concurrency; a request that is not paced (robots.txt, ``engine.download``) still
    waits the delay after the last start."""
    slot = DownloadSlot(2, 5.0, False)
    paced = reqs(3)
    for r in paced:
        r._paced = True
    own = Request("http://example.com/robots.txt")
    slot.extend(paced[:2] + [own] + paced[2:])
    assert slot.next_ready_in_s(0.0) == 0.0
    assert names(slot.pop_ready(0.0)) == ["0", "1"]  # not one per delay: both
    assert slot.pop_ready(0.0) == []  # concurrency 2
    slot.transfer_done(paced[0])
    assert slot.pop_ready(1.0) == []  # robots.txt: 5 s after the last start
    assert slot.next_ready_in_s(1.0) == 4.0
    assert names(slot.pop_ready(5.0)) == ["robots.txt"]
    slot.transfer_done(paced[1])
    assert names(slot.pop_ready(5.0)) == ["2"]  # paced: no wait


@pytest.mark.parametrize("url", [
    "http://a.b/x", "https://user:pw@Host.Example:8080/p?q#f", "http://[::1]:80/",
    "http://[FE80::1]/x", "file:///x", "ftp://h", "http://h:80", "http://h?x=a/b",
    "http://h#a/b", "data:text/plain,hi", "http://u@h@x/p", "s3://bucket/key",
    "http://h./p", "HTTP://UPPER.example/", "http://xn--bcher-kva.example/", "",
])
def test_url_host_is_urlsplit_hostname(url):
    from urllib.parse import urlsplit

    from crawlfw.core.transport.slot import url_host

    assert url_host(url) == (urlsplit(url).hostname or "")
