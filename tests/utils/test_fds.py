"""File descriptors: the concurrency a crawl can hold within RLIMIT_NOFILE, and telling
fd exhaustion apart from a failed connection."""

import logging
import resource
import subprocess
import sys
import textwrap

import pytest

from crawlfw.settings import Settings
from crawlfw.core._fds import RESERVED_FDS, fds_needed, fit_concurrency


@pytest.mark.parametrize("settings, limit, expected", [
    pytest.param({}, 1024, 16, id="the default fits"),
    pytest.param({"CONCURRENT_REQUESTS": 100}, 1024, 100, id="100 fit in 1024"),
    pytest.param({"CONCURRENT_REQUESTS": 500}, 1024, 318, id="500 do not: (1024-70)//3"),
    pytest.param({"CONCURRENT_REQUESTS": 500, "CURL_MAXCONNECTS": 10}, 1024, 472,
                 id="a fixed connection cache: (1024-70-10)//2"),
    pytest.param({"CONCURRENT_REQUESTS": 500, "DOWNLOADER_ACTORS": 2}, 1024, 316,
                 id="6 fds per downloader"),
    pytest.param({"CONCURRENT_REQUESTS": 50}, 80, 3, id="(80-70)//3"),
    pytest.param({"CONCURRENT_REQUESTS": 50}, 60, 1, id="never below 1"),
    pytest.param({"CONCURRENT_REQUESTS": 10_000}, float("inf"), 10_000, id="unlimited"),
])
def test_fit_concurrency(settings, limit, expected, caplog):
    caplog.set_level(logging.WARNING)
    s = Settings(settings)
    assert fit_concurrency(s, limit) == expected
    asked = s.getint("CONCURRENT_REQUESTS")
    if expected < asked:
        (record,) = caplog.records
        assert record.getMessage().startswith(
            f"CONCURRENT_REQUESTS = {asked} needs about ")
        assert f"the limit (RLIMIT_NOFILE, ulimit -n) is {limit}: crawling with " \
               f"{expected} concurrent requests instead" in record.getMessage()
    else:
        assert not caplog.records


def test_fds_needed():
    assert fds_needed(100, 100, 1) == RESERVED_FDS + 6 + 300


@pytest.mark.slow
def test_soft_limit_raised_to_hard_and_exhaustion_detected():
    # In a child: soft 100, hard 200 -> raised to 200; filling every fd -> exhausted.
    code = textwrap.dedent("""
        import os, resource, logging
        logging.basicConfig(level=logging.DEBUG)
        resource.setrlimit(resource.RLIMIT_NOFILE, (100, 200))
        from crawlfw.core._fds import raise_nofile_limit, fds_exhausted
        print(raise_nofile_limit(), fds_exhausted())
        held = []
        try:
            while True:
                held.append(os.open("/dev/null", os.O_RDONLY))
        except OSError:
            pass
        print(fds_exhausted())
        os.close(held.pop())
        print(fds_exhausted())
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == ["(200, 200) False", "True", "False"]
    assert "Raised the open file limit (RLIMIT_NOFILE) from 100 to 200" in done.stderr
    assert resource.getrlimit(resource.RLIMIT_NOFILE)  # this process untouched
