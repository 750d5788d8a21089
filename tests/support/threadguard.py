"""A pytest plugin that fails a test which leaves a crawlfw thread running.

A ``crawlfw-*`` thread (a LogStats or MemoryUsage timer, a CloseSpider timeout, a
control endpoint, a dashboard server...) or any non-daemon thread that a test started
and that is still alive :data:`GRACE_S` seconds after the test's teardown (its own
fixtures', and the Pykka actors stopped by conftest's ``_stop_all_actors``) fails the
test in its teardown, naming the threads. Such a thread outlives its test in the same
pytest-xdist worker: a LogStats timer left by a spider opened and never closed logged
"Crawled 0 pages" 5 s later into another test's records and failed it in CI. A
non-daemon thread left running also keeps the worker's interpreter from exiting.

Threads shared by the whole process by design (:data:`SHARED`) are not counted. The
check costs two ``threading.enumerate()`` per test, and waits only while a new thread
is still ending (a cancelled ``threading.Timer`` ends just after ``cancel()``).
"""

import threading
import time

import pytest

#: The name prefix of crawlfw's own threads.
PREFIX = "crawlfw-"

#: Name prefixes of threads that live as long as the process by design: the pool of
#: ``crawlfw.utils.decorators.inthread`` (shared by every ``@inthread`` function).
SHARED = ("crawlfw-inthread_",)

#: Seconds a thread new since the test began may take to end after its teardown (a leak
#: lives on: generous, for a loaded machine, and waited only when a thread is left).
GRACE_S = 5.0


def _watched(thread):
    """True for a thread the guard checks: crawlfw's own or a non-daemon one, not shared."""
    name = thread.name
    return ((name.startswith(PREFIX) or not thread.daemon)
            and not name.startswith(SHARED) and thread is not threading.main_thread())


def _describe(thread):
    target = getattr(getattr(thread, "_target", None), "__qualname__", None)
    kind = "daemon" if thread.daemon else "non-daemon"
    return f"{thread.name} ({kind}{', ' + target if target else ''})"


def leaked_threads(before, grace_s=GRACE_S):
    """The watched threads alive now that are not in ``before``, once each was given
    until ``grace_s`` seconds from now to end.

    Args:
        before (set[threading.Thread]): the threads alive when the test began.
        grace_s (float): seconds the new threads have, together, to end.

    Returns:
        list[threading.Thread]: those still alive, in start order.
    """
    new = [t for t in threading.enumerate() if t not in before and _watched(t)]
    deadline = time.monotonic() + grace_s
    for thread in new:
        thread.join(max(0.0, deadline - time.monotonic()))
    return [t for t in new if t.is_alive()]


@pytest.fixture(autouse=True)
def _no_leaked_threads(request):
    """Fail the test, in its teardown, when it left a watched thread running (see the
    module docstring). Set up before conftest's fixtures, so torn down after them."""
    before = set(threading.enumerate())
    yield
    left = leaked_threads(before)
    if left:
        pytest.fail(
            f"{request.node.nodeid} left {len(left)} thread(s) running after it ended: "
            f"{', '.join(_describe(t) for t in left)}; close what the test opened (send "
            f"spider_closed for a spider_opened sent by hand, stop the crawler, close the "
            f"pipeline or server) in the test or its fixture's teardown",
            pytrace=False)
