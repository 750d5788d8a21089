"""A pytest plugin that keeps the ``slow`` marker honest.

A test must be marked ``@pytest.mark.slow`` (or sit in a module or class so marked) when
it starts a process (``subprocess``, ``os.fork``/``forkpty``/``posix_spawn``/``system``/
``exec*``: a crawl subprocess, ``redis-server``...), starts a server that announces
itself with the audit event :data:`SERVER_EVENT` (the FTP and S3 servers of
tests/support), or uses one of :data:`SLOW_FIXTURES` or a fixture seen starting one (a
module- or session-scoped server counts for every test that uses it, not only the one
that had it set up). An unmarked one fails in its teardown with a message naming what it
started, so the fast inner loop (``pytest -m "not slow"``) stays fast and a new test
cannot forget the marker.

Processes are seen through a :func:`sys.addaudithook` hook (PEP 578 audit events), which
records only while a test runs (setup to teardown).
"""

import sys

import pytest

#: The audit event a test server raises when it starts: ``sys.audit(SERVER_EVENT, name)``.
SERVER_EVENT = "crawlfw.tests.server_started"

#: Fixtures whose tests count as slow whether or not this run started the server (a
#: session-scoped server is started once, by whichever test needs it first).
SLOW_FIXTURES = frozenset({"redis_server", "ftp_server", "s3_server", "s3_endpoint",
                           "s3_client"})

#: The audit events that start a process (CPython's names), and :data:`SERVER_EVENT`.
SPAWN_EVENTS = frozenset({"subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn",
                          "os.spawn", "os.system", "os.exec", SERVER_EVENT})


class _SpawnWatch:
    """The audit hook: while ``active``, records ``(event, first argument)`` of each
    process start in ``seen``."""

    def __init__(self):
        self.active = False
        self.seen = []

    def __call__(self, event, args):
        if self.active and event in SPAWN_EVENTS:
            # subprocess.Popen, os.exec, os.posix_spawn: (executable, argv, ...)
            argv = args[1] if len(args) > 1 and isinstance(args[1], (list, tuple)) else None
            self.seen.append((event, argv or (args[0] if args else "")))


_watch = _SpawnWatch()
_hook_added = False

#: Fixture definitions (``FixtureDef`` objects: a name is not enough, modules define
#: their own ``project`` or ``crawl``) seen starting a process or server in their setup
#: in this process: a test that uses one is slow even when another test had it set up.
_spawning_fixtures = set()


def pytest_configure(config):
    """Install the audit hook (the ``slow`` marker itself is registered in pyproject.toml)."""
    global _hook_added
    if not _hook_added:  # audit hooks cannot be removed: one per process
        sys.addaudithook(_watch)
        _hook_added = True


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item):
    _watch.seen = []
    _watch.active = True
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef, request):
    before = len(_watch.seen)
    try:
        return (yield)
    finally:
        if len(_watch.seen) > before:
            _spawning_fixtures.add(fixturedef)


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_teardown(item, nextitem):
    try:
        result = yield
    finally:
        _watch.active = False
    if item.get_closest_marker("slow") is None:
        fixtures = sorted(name for name in getattr(item, "fixturenames", ())
                          if name in SLOW_FIXTURES or _uses_spawning(item, name))
        if _watch.seen or fixtures:
            what = [f"{event} {_describe(arg)}" for event, arg in _watch.seen[:3]]
            what += [f"the fixture {name}" for name in fixtures]
            pytest.fail(f"{item.nodeid} is not marked slow but it started "
                        f"{'; '.join(what)}: add @pytest.mark.slow (or pytestmark = "
                        f"pytest.mark.slow in its module)", pytrace=False)
    return result


def _uses_spawning(item, name) -> bool:
    """True when the definition of fixture ``name`` that ``item`` gets was seen starting
    a process or server."""
    info = getattr(item, "_fixtureinfo", None)
    definitions = info.name2fixturedefs.get(name) if info is not None else None
    return bool(definitions) and definitions[-1] in _spawning_fixtures


def _describe(arg) -> str:
    """A short text for an audit event's first argument (an executable, an argv list)."""
    if isinstance(arg, (list, tuple)):
        arg = " ".join(str(a) for a in arg[:4])
    text = str(arg)
    return text if len(text) <= 120 else text[:117] + "..."
