"""The Downloader's inbox (``_WakeupInbox``): a message put while the actor's thread
waits in curl ends that wait; a message put at any other time costs no wake-up byte;
none is lost. Real threads and a real ``MultiDriver`` (no transfers: its ``perform``
waits on the wake-up descriptor only)."""

import random
import select
import threading
import time

from crawlfw.actors.downloader import _WakeupInbox
from crawlfw.core.transport.curl import MultiDriver


def _readable(fd) -> bool:
    return bool(select.select([fd], [], [], 0)[0])


def test_a_put_while_nobody_waits_writes_no_wakeup_byte():
    inbox = _WakeupInbox()
    try:
        for i in range(100):
            inbox.put(i)
        assert not _readable(inbox.wake_fd)
        assert [inbox.get_nowait() for _ in range(100)] == list(range(100))
        assert inbox.empty()
    finally:
        inbox.close()


def test_a_put_while_the_consumer_waits_makes_the_fd_readable_and_drain_empties_it():
    inbox = _WakeupInbox()
    try:
        inbox.waiting = True
        for i in range(3):
            inbox.put(i)
        assert _readable(inbox.wake_fd)
        inbox.drain()
        assert not _readable(inbox.wake_fd)
        inbox.drain()  # nothing written since: no read at all, no error
        assert inbox.qsize() == 3
    finally:
        inbox.close()


def test_a_full_pipe_is_drained_whole():
    inbox = _WakeupInbox()
    try:
        inbox.waiting = True
        for i in range(70_000):  # more bytes than a pipe holds (64 KiB): never blocks
            inbox.put(i)
        inbox.drain()
        assert not _readable(inbox.wake_fd)
        assert inbox.qsize() == 70_000
    finally:
        inbox.close()


def test_a_put_after_close_is_queued_without_error():
    inbox = _WakeupInbox()
    inbox.waiting = True
    inbox.close()
    inbox.put("late")
    assert inbox.get_nowait() == "late"


def test_every_put_during_the_wait_wakes_it_promptly_and_none_is_lost():
    """The consumer follows handle_pump's protocol (waiting, drain, empty check, wait in
    curl for up to 30 s, not waiting); a producer thread puts 300 messages at seeded
    random moments. Each wait that had a message put during it must end long before
    its 30 s, and every message must be taken, in order."""
    rng = random.Random(20)
    n = 300
    inbox = _WakeupInbox()
    driver = MultiDriver()
    got = []
    longest = [0.0]
    finished = threading.Event()

    def consumer():
        while len(got) < n:
            inbox.waiting = True
            inbox.drain()
            if inbox.empty():
                started = time.monotonic()
                driver.perform(30.0, inbox.wake_fd)
                longest[0] = max(longest[0], time.monotonic() - started)
            inbox.waiting = False
            while not inbox.empty():
                got.append(inbox.get_nowait())
        finished.set()

    def producer():
        for i in range(n):
            if rng.random() < 0.3:
                time.sleep(rng.random() * 0.002)
            inbox.put(i)

    threads = [threading.Thread(target=consumer, daemon=True),
               threading.Thread(target=producer, daemon=True)]
    try:
        for t in threads:
            t.start()
        assert finished.wait(60), f"only {len(got)} of {n} messages taken"
        assert got == list(range(n))
        assert longest[0] < 10, f"a wait lasted {longest[0]:.1f} s: a put did not wake it"
    finally:
        driver.close()
        inbox.close()
