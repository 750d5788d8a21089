"""crawlfw.cmdline.execute: start-up objects are frozen out of the garbage collector's
generations before the command runs (so full collections during a crawl skip them)."""

import subprocess
import sys

from crawlfw.utils.test import get_testenv

PROBE = """
import gc, sys
import crawlfw.commands.version as v
seen = []
orig = v.version
def version(*a, **k):
    seen.append(gc.get_freeze_count())
    return orig(*a, **k)
v.version = version
from crawlfw.cmdline import execute
print("before", gc.get_freeze_count())
try:
    execute(["version"])
finally:
    print("during", seen)
"""


def test_startup_objects_frozen_before_the_command_runs():
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=get_testenv(), timeout=60
    ).stdout
    lines = dict(line.split(" ", 1) for line in out.splitlines() if line.startswith(("before", "during")))
    assert lines["before"] == "0"
    during = eval(lines["during"])  # noqa: S307 -- our own probe's output
    assert len(during) == 1 and during[0] > 5000
