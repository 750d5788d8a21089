"""The tests that need the site copies (the ``sites_dir`` fixture of tests/conftest.py):
found through ``CRAWLFW_SHARED_SITES``; skipped with a reason that says how to point them
at the copies (and counted in one line at the end) where they are absent; failed, not
skipped, under ``CI=true``. Each case runs pytest on a one-test file in a subprocess."""

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.slow

PROBE = '''
def test_needs_sites(sites_dir):
    assert (sites_dir / "quotes.toscrape.com").is_dir()
'''


def _pytest(tmp_path, sites, ci):
    (tmp_path / "test_probe.py").write_text(PROBE)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS")}
    env["CRAWLFW_SHARED_SITES"] = str(sites)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), env.get("PYTHONPATH", "")])
    if ci:
        env["CI"] = "true"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-rs", "-p", "tests.conftest", "-p",
         "no:cacheprovider", "test_probe.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_crawlfw_shared_sites_points_the_tests_at_the_copies(tmp_path):
    sites = tmp_path / "copies"
    (sites / "quotes.toscrape.com").mkdir(parents=True)
    run = _pytest(tmp_path, sites, ci=False)
    assert run.returncode == 0 and "1 passed" in run.stdout, run.stdout[-2000:]


@pytest.mark.parametrize("ci", [False, True])
def test_missing_copies_skip_with_a_clear_reason_but_fail_under_ci(tmp_path, ci):
    missing = tmp_path / "nowhere"
    run = _pytest(tmp_path, missing, ci=ci)
    if ci:
        assert run.returncode == 1 and "1 error" in run.stdout, run.stdout[-2000:]  # in setup
        assert f"{missing} (CRAWLFW_SHARED_SITES) is missing but CI=true" in run.stdout
    else:
        assert run.returncode == 0 and "1 skipped" in run.stdout, run.stdout[-2000:]
        assert (f"shared site copies not found at {missing} (CRAWLFW_SHARED_SITES): set "
                f"CRAWLFW_SHARED_SITES to the directory") in run.stdout
        assert "1 tests skipped: shared site copies not found at" in run.stdout
    assert "CRAWLFW_SHARED_SITES to the directory that holds the site copies" in run.stdout
