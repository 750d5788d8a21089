"""The ``slow`` marker is on every test that starts a process or a server: checked on the
sources (a file that can start one carries the marker) and at run time by the plugin
tests/support/slowguard.py (a test that did start one without it fails); the plugin
itself is tested here on a small test file in a pytest subprocess."""

import ast
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent

#: What in a test file can start a process or a server: the modules and helpers that do.
SPAWN_CODE = re.compile(
    r"^\s*(import|from) (subprocess|pty|multiprocessing)\b"
    r"|\b(Popen|os\.fork|os\.system|os\.exec\w*|os\.posix_spawn)\s*\("
    r"|\b(start_crawlfw|run_crawlfw|run_measured|LiveCrawl|RuntimeDir|RedisServer"
    r"|LocalFTPServer|ThreadedMotoServer)\b",
    re.M)

#: Shared fixtures that start one (tests/commands/conftest.py runs the command line).
SPAWN_FIXTURES = frozenset({"crawlfw", "project", "quotes_project", "redis_server",
                            "ftp_server", "s3_server", "s3_endpoint", "s3_client"})


def _test_files():
    return sorted(p for p in TESTS.rglob("test_*.py") if p != Path(__file__).resolve())


def _can_spawn(source: str) -> bool:
    """True when the test module ``source`` imports or calls a process or server starter,
    or a test of it takes a shared fixture that starts one (not one it defines itself)."""
    if SPAWN_CODE.search(source):
        return True
    tree = ast.parse(source)
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    own = {f.name for f in functions}
    return any(arg.arg in SPAWN_FIXTURES - own
               for f in functions if f.name.startswith("test")
               for arg in f.args.args)


def test_every_file_that_can_start_a_process_or_server_has_slow_tests():
    unmarked = [str(p.relative_to(REPO)) for p in _test_files()
                if _can_spawn(p.read_text()) and "pytest.mark.slow" not in p.read_text()]
    assert not unmarked, (
        f"these test files start processes or servers but mark no test slow: {unmarked}; "
        f"mark those tests @pytest.mark.slow (or the module: pytestmark = pytest.mark.slow)")


def test_the_fast_loop_command_is_in_the_readme():
    readme = (REPO / "README.md").read_text()
    assert 'python3 -m pytest -q -m "not slow"' in readme


def test_the_readme_gives_the_suite_command_ci_runs():
    ci_run = (REPO / ".ci" / "run").read_text()
    [command] = [line for line in ci_run.splitlines() if line.startswith("python3 -m pytest")]
    readme = (REPO / "README.md").read_text()
    assert f"pip install -e '.[test]' && {command}\n" in readme
    assert f"`{command}` runs everything (CI's command" in readme


GUARDED = '''
import subprocess
import sys

import pytest


def test_unmarked_spawner():
    subprocess.run([sys.executable, "-c", "pass"], check=True)


@pytest.mark.slow
def test_marked_spawner():
    subprocess.run([sys.executable, "-c", "pass"], check=True)


def test_no_spawn():
    assert True


def test_unmarked_server_fixture(redis_server):
    pass


@pytest.fixture
def redis_server():
    return None


@pytest.fixture(scope="module")
def started_once():
    subprocess.run([sys.executable, "-c", "pass"], check=True)


@pytest.mark.slow
def test_marked_starts_the_shared_fixture(started_once):
    pass


def test_unmarked_uses_the_shared_fixture_started_before(started_once):
    pass
'''


@pytest.mark.slow
def test_the_guard_fails_an_unmarked_test_that_starts_a_process(tmp_path):
    (tmp_path / "test_guarded.py").write_text(textwrap.dedent(GUARDED))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "tests.support.slowguard", "-p",
         "no:randomly", "-p", "no:xdist", "-p", "no:cacheprovider", "-o", "markers=slow: slow",
         "test_guarded.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**_env(), "PYTHONPATH": str(REPO)})
    out = result.stdout
    assert result.returncode == 1, out
    assert "6 passed, 3 errors" in out, out
    assert ("test_guarded.py::test_unmarked_spawner is not marked slow but it started "
            f"subprocess.Popen {sys.executable} -c pass") in out, out
    assert ("test_guarded.py::test_unmarked_server_fixture is not marked slow but it "
            "started the fixture redis_server") in out, out
    assert ("test_guarded.py::test_unmarked_uses_the_shared_fixture_started_before is not "
            "marked slow but it started the fixture started_once") in out, out
    assert "test_marked_spawner is not marked" not in out
    assert "test_no_spawn is not marked" not in out


def _env():
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
