"""crawlfw.cmdline.execute: start-up objects are frozen out of the garbage collector's
generations before the command runs (so full collections during a crawl skip them), and
the first GC threshold is raised unless someone changed it."""

import subprocess
import sys

import pytest

from crawlfw.utils.test import get_testenv

pytestmark = pytest.mark.slow

PROBE = """
import gc, sys
import crawlfw.commands.version as v
seen = []
orig = v.version
def version(*a, **k):
    seen.append((gc.get_freeze_count(), gc.get_threshold()))
    return orig(*a, **k)
v.version = version
from crawlfw.cmdline import execute
if len(sys.argv) > 1:
    gc.set_threshold(int(sys.argv[1]))
print("before", gc.get_freeze_count())
try:
    execute(["version"])
finally:
    print("during", seen)
"""


def _run_probe(*args):
    out = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
        env=get_testenv(), timeout=60,
    ).stdout
    lines = dict(line.split(" ", 1) for line in out.splitlines() if line.startswith(("before", "during")))
    assert lines["before"] == "0"
    during = eval(lines["during"])  # noqa: S307 -- our own probe's output
    assert len(during) == 1
    return during[0]


def test_startup_objects_frozen_before_the_command_runs():
    frozen, threshold = _run_probe()
    assert frozen > 5000
    assert threshold[0] == 7000 and threshold[1:] == (10, 10)


def test_threshold_set_by_the_program_is_kept():
    frozen, threshold = _run_probe("1234")
    assert threshold[0] == 1234
