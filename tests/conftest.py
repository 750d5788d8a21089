"""Shared fixtures: the static site copies in ``../shared/sites`` served on 127.0.0.1,
actor cleanup after each test, and schema validation of every actor message."""

import os
from pathlib import Path

import pytest

# Every actor message is validated against its JSON Schema during tests.
os.environ.setdefault("CRAWLFW_VALIDATE_MESSAGES", "all")

from tests.support.servers import StaticSiteServer  # noqa: E402

#: tests/support/slowguard.py fails a test that starts a process or server unmarked slow;
#: tests/support/threadguard.py one that leaves a crawlfw (or non-daemon) thread running;
#: tests/support/changing_site.py gives the ``changing_site`` fixture (issue 32).
pytest_plugins = ["tests.support.slowguard", "tests.support.threadguard",
                  "tests.support.changing_site"]

REPO_ROOT = Path(__file__).resolve().parents[1]
#: The site copies: ``$CRAWLFW_SHARED_SITES`` if set, else ``../shared/sites`` beside the
#: repository.
SITES_DIR = Path(os.environ.get("CRAWLFW_SHARED_SITES", REPO_ROOT.parent / "shared" / "sites"))
#: How to point the tests at the copies, said by every skip (and failure) for want of them.
SITES_HINT = ("set CRAWLFW_SHARED_SITES to the directory that holds the site copies "
              "(quotes.toscrape.com/, ...)")
SITES_SKIP = "shared site copies not found at"


@pytest.fixture(scope="session")
def sites_dir() -> Path:
    """Path of the site copies (:data:`SITES_DIR`); skips the test where it is absent,
    saying where it looked and how to point it elsewhere; under ``CI=true`` the test
    fails instead (CI must run them all)."""
    if not SITES_DIR.is_dir():
        where = ("CRAWLFW_SHARED_SITES" if "CRAWLFW_SHARED_SITES" in os.environ
                 else "../shared/sites beside the repository")
        if os.environ.get("CI") == "true":
            pytest.fail(f"{SITES_DIR} ({where}) is missing but CI=true: the shared site "
                        f"copies are required; {SITES_HINT}")
        pytest.skip(f"{SITES_SKIP} {SITES_DIR} ({where}): {SITES_HINT}")
    return SITES_DIR


def pytest_terminal_summary(terminalreporter):
    """Say in one line, at the end of the run, how many tests skipped for want of the
    site copies and how to run them (a skip is otherwise only a count)."""
    skipped = [r for r in terminalreporter.stats.get("skipped", ())
               if isinstance(r.longrepr, tuple) and SITES_SKIP in str(r.longrepr[2])]
    if skipped:
        terminalreporter.write_line(
            f"{len(skipped)} tests skipped: {SITES_SKIP} {SITES_DIR}; {SITES_HINT}, "
            f"or run with CI=true to make them fail instead", yellow=True)


@pytest.fixture(scope="session")
def site_server(sites_dir):
    """Factory: ``site_server("quotes.toscrape.com")`` -> a running StaticSiteServer.

    One server per site folder for the whole session; ``.url`` is ``http://127.0.0.1:PORT``.
    """
    servers = {}

    def start(name: str) -> StaticSiteServer:
        if name not in servers:
            root = sites_dir / name
            if not root.is_dir():
                pytest.fail(f"site copy {root} does not exist")
            servers[name] = StaticSiteServer(root).start()
        return servers[name]

    yield start
    for server in servers.values():
        server.stop()


@pytest.fixture(autouse=True)
def _restore_environ():
    """Put ``os.environ`` back as it was before the test: code under test may set
    variables (``get_project_settings`` sets ``CRAWLFW_SETTINGS_MODULE``), and a test
    must not see another's, whatever the order (pytest-xdist runs them in any)."""
    saved = dict(os.environ)
    yield
    if os.environ != saved:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture(autouse=True)
def _restore_log_levels():
    """Put back the levels of the root logger and of the loggers ``configure_logging``
    sets (every CrawlerProcess calls it: ``crawlfw`` to DEBUG, the root logger to
    NOTSET). Left so, what the later tests of the worker capture (``caplog``) would
    depend on whether such a test ran before them there: every crawlfw INFO and DEBUG
    line, of any thread, or none unless asked for."""
    import logging

    from crawlfw.utils.log import DEFAULT_LOGGING

    loggers = [logging.root, *map(logging.getLogger, DEFAULT_LOGGING["loggers"])]
    levels = [logger.level for logger in loggers]
    yield
    for logger, level in zip(loggers, levels, strict=True):
        logger.setLevel(level)


@pytest.fixture(autouse=True)
def _stop_all_actors():
    """Stop every Pykka actor a test left running (pykka's own test suite does the same)."""
    yield
    import pykka

    pykka.ActorRegistry.stop_all(timeout=10)


@pytest.fixture
def redis_server(tmp_path):
    """A fresh ``redis-server`` on a free 127.0.0.1 port (``.url``), stopped after the
    test; skipped without ``redis-server``, except under CI=true (then it fails)."""
    from tests.support.redisserver import RedisServer, require_redis

    require_redis()
    server = RedisServer(tmp_path / "redis", appendonly=True).start()
    yield server
    server.stop()


@pytest.fixture
def runtime():
    """A private runtime directory for live crawls' control sockets
    (:class:`tests.support.live.RuntimeDir`), removed after the test."""
    from tests.support.live import RuntimeDir

    r = RuntimeDir()
    yield r
    r.cleanup()


@pytest.fixture
def server():
    """A :class:`tests.support.countserver.CountingServer` on 127.0.0.1 holding each
    answer 0.25 s (a live crawl's pages), stopped after the test."""
    from tests.support.countserver import CountingServer

    s = CountingServer(hold_s=0.25)
    yield s
    s.stop()


@pytest.fixture
def procs():
    """A list for the test's processes (``Popen``) and live crawls (anything with
    ``kill()``): each killed, and a ``Popen`` reaped, after the test."""
    import subprocess

    started = []
    yield started
    for p in started:
        if hasattr(p, "kill"):
            p.kill()
        if isinstance(p, subprocess.Popen):
            p.wait(timeout=10)
