"""Waiting in tests on a condition, never for a fixed time.

:func:`wait_for` polls a predicate until it holds (a condition that no event announces:
a file that grows, a count a server thread keeps, a process that exits), failing with a
message that names what was awaited. :func:`happens_within` proves a negative claim
("no download starts while paused"): it watches, for a short time, the condition that
would hold if the claim were false. Where something can set a
:class:`threading.Event`, wait on that instead.
"""

import time

#: Seconds any wait may take before the test fails (generous: the machine may be loaded).
WAIT_S = 60.0

#: Seconds between two polls: short, so a wait ends within this of its condition holding.
POLL_S = 0.01


def wait_for(predicate, what: str = "the condition", timeout_s: float = WAIT_S,
             poll_s: float = POLL_S, alive=None):
    """Poll ``predicate()`` until it returns a true value, and return that value.

    Args:
        predicate: a callable without arguments.
        what: what is awaited, for the failure message ("the first response").
        timeout_s: seconds before the wait fails.
        poll_s: seconds between two calls of ``predicate``.
        alive: optionally a ``subprocess.Popen`` that must keep running meanwhile: its
            exit fails the wait at once (with its exit status) instead of at the timeout.

    Returns:
        The first true value ``predicate()`` returned.

    Raises:
        AssertionError: after ``timeout_s`` seconds without it, or when ``alive`` exited
            first.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if alive is not None and alive.poll() is not None:
            raise AssertionError(f"the process exited ({alive.returncode}) while waiting "
                                 f"for {what}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}")
        time.sleep(poll_s)


def happens_within(predicate, within_s: float, poll_s: float = POLL_S) -> bool:
    """True as soon as ``predicate()`` returns a true value, False when it has not after
    ``within_s`` seconds: for a negative claim, ``assert not happens_within(...)`` on the
    condition that would hold at once if the claim were false, over the shortest time
    that still shows it (a fraction of a second for anything the code does at once)."""
    deadline = time.monotonic() + within_s
    while True:
        if predicate():
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(poll_s)
