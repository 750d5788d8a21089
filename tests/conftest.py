"""Shared fixtures: the static site copies in ``../shared/sites`` served on 127.0.0.1,
actor cleanup after each test, and schema validation of every actor message."""

import os
from pathlib import Path

import pytest

# Every actor message is validated against its JSON Schema during tests.
os.environ.setdefault("CRAWLFW_VALIDATE_MESSAGES", "all")

from tests.support.servers import StaticSiteServer  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
SITES_DIR = Path(os.environ.get("CRAWLFW_SHARED_SITES", REPO_ROOT.parent / "shared" / "sites"))


@pytest.fixture(scope="session")
def sites_dir() -> Path:
    """Path of ``../shared/sites``; skips the test where it is absent (never under CI=true)."""
    if not SITES_DIR.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{SITES_DIR} is missing but CI=true: the shared site copies are required")
        pytest.skip(f"shared site copies not found at {SITES_DIR}")
    return SITES_DIR


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
