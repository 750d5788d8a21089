"""Broad crawls through the CLI: thousands of hosts served by one local server (curl
resolves ``*.localhost`` to the loopback address itself), with threads and file
descriptors sampled from ``/proc/<pid>`` while the crawl runs.

Before the fixed pool of downloaders, every host got its own actor thread, CurlMulti and
pipe: a 2,000-host crawl held thousands of threads and fds, and under ``ulimit -n 1024``
the crawl died with ``OSError: [Errno 24] Too many open files`` after ~200 pages.
"""

import json
import os
import re
import resource
import subprocess
import sys
import threading
import zlib
from pathlib import Path

import pytest

from tests.support.broadsite import BroadSite
from tests.support.proc import crawlfw_env

pytestmark = pytest.mark.slow

SPIDER = Path(__file__).with_name("broadspider.py")


@pytest.fixture
def site():
    s = BroadSite(pages=2)
    yield s
    s.stop()


class Sampler:
    """Samples the threads and open fds of process ``pid`` every 20 ms until stopped."""

    def __init__(self, pid: int):
        self.pid = pid
        self.max_threads = 0
        self.max_fds = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        status = Path(f"/proc/{self.pid}/status")
        fd_dir = f"/proc/{self.pid}/fd"
        while not self._stop.wait(0.02):
            try:
                text = status.read_text()
                fds = len(os.listdir(fd_dir))
            except (FileNotFoundError, ProcessLookupError):
                return
            threads = int(re.search(r"^Threads:\s+(\d+)", text, re.M).group(1))
            self.max_threads = max(self.max_threads, threads)
            self.max_fds = max(self.max_fds, fds)
            self.samples += 1

    def stop(self):
        self._stop.set()
        self._thread.join(5)


def _limit_fds(limit):
    def preexec():
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))
    return preexec


def run_broad(tmp_path, site, hosts, *settings, args=(), env=None, nofile=None,
              timeout_s=600):
    """Run the broad spider over ``hosts`` hosts with ``settings`` (``NAME=value``) and
    more command-line ``args``, its open file limit set to ``nofile`` (soft and hard);
    returns ``(returncode, stderr, urls, sampler)``."""
    feed = tmp_path / "items.jl"
    args = [sys.executable, "-m", "crawlfw.cmdline", "runspider", str(SPIDER),
            "-a", f"hosts={hosts}", "-a", f"port={site.port}", "-o", str(feed),
            "-s", "LOG_LEVEL=INFO", "-s", "COOKIES_ENABLED=0", "-s", "RETRY_ENABLED=0",
            *(x for s in settings for x in ("-s", s)), *args]
    err_path = tmp_path / "stderr.txt"
    with open(err_path, "wb") as err:
        process = subprocess.Popen(args, cwd=str(tmp_path), env=crawlfw_env(env),
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=err, preexec_fn=_limit_fds(nofile) if nofile else None)
    sampler = Sampler(process.pid)
    try:
        returncode = process.wait(timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise AssertionError(f"the broad crawl did not end within {timeout_s} s: "
                             + err_path.read_text(errors="replace")[-3000:]) from None
    finally:
        sampler.stop()
    stderr = err_path.read_text(errors="replace")
    urls = [json.loads(line)["url"] for line in feed.read_text().splitlines()] \
        if feed.exists() else []
    return returncode, stderr, urls, sampler


def expected_urls(site, hosts):
    return sorted(url for i in range(hosts) for url in (site.url(i), site.url(i) + "p/1"))


def test_2000_hosts_under_1024_fds_with_bounded_threads_and_fds(site, tmp_path):
    hosts = 2000
    code, stderr, urls, sampler = run_broad(
        tmp_path, site, hosts, "CONCURRENT_REQUESTS=100", nofile=1024)
    assert code == 0, stderr[-3000:]
    assert len(urls) == len(set(urls)), "a page was crawled twice"
    assert sorted(urls) == expected_urls(site, hosts)
    assert sampler.samples > 10
    assert sampler.max_threads <= 64, f"{sampler.max_threads} threads"
    assert sampler.max_fds <= 1000, f"{sampler.max_fds} fds"
    assert "Too many open files" not in stderr


def test_killed_downloader_restarts_and_serves_its_hosts_again(site, tmp_path):
    # Two downloaders; the one that gets the 150th fetch dies (CRAWLFW_FAULTS); it is
    # restarted, its in-flight requests re-sent, and it serves its hosts' slots again.
    hosts = 200
    code, stderr, urls, _ = run_broad(
        tmp_path, site, hosts, "DOWNLOADER_ACTORS=2", "CONCURRENT_REQUESTS=16",
        "SUPERVISOR_BACKOFF=0.05", "LOG_LEVEL=DEBUG",
        env={"CRAWLFW_FAULTS": "downloader.fetch:150:raise"}, timeout_s=300)
    assert code == 0, stderr[-3000:]
    assert sorted(urls) == expected_urls(site, hosts)
    died = re.search(r"Actor downloader \((\d)\) of crawl broad-\d+ failed: InjectedFault",
                     stderr)
    assert died, stderr[-3000:]
    index = int(died.group(1))
    assert "'supervisor/restarts/downloader': 1" in stderr
    # what was crawled after the death was logged (its replacement logs "re-sending"
    # only when the dead one had transfers in flight, which a burst may have left at 0)
    after = stderr[died.end():]
    served = {m.group(1) for m in re.finditer(
        r"Crawled \(200\) <GET http://(site\d+\.localhost):\d+/", after)}
    own = {h for h in served if zlib.crc32(h.encode()) % 2 == index}
    assert len(own) >= 5, f"the restarted downloader served {sorted(own)} after its restart"


def test_downloader_dying_mid_transfer_loses_no_page_and_repeats_none(site, tmp_path):
    # A downloader dies in a pump with transfers in flight (CRAWLFW_FAULTS
    # downloader.transfers): its replacement takes its slot table over and starts
    # those transfers again; the Engine re-sends nothing (it keeps no copy of them).
    hosts = 150
    code, stderr, urls, _ = run_broad(
        tmp_path, site, hosts, "DOWNLOADER_ACTORS=2", "CONCURRENT_REQUESTS=16",
        "SUPERVISOR_BACKOFF=0.05",
        env={"CRAWLFW_FAULTS": "downloader.transfers:40:raise"}, timeout_s=300)
    assert code == 0, stderr[-3000:]
    assert len(urls) == len(set(urls)), "a page was crawled twice"
    assert sorted(urls) == expected_urls(site, hosts)
    died = re.search(r"Actor downloader \((\d)\) of crawl broad-\d+ failed: InjectedFault",
                     stderr)
    assert died, stderr[-3000:]
    resent = re.search(rf"Downloader {died.group(1)} failed; re-sending its (\d+) requests",
                       stderr)
    assert resent and int(resent.group(1)) >= 1, stderr[-3000:]
    assert "'supervisor/restarts/downloader': 1" in stderr
    assert "poison" not in stderr.lower()


def test_concurrency_that_does_not_fit_the_fd_limit_is_lowered(site, tmp_path):
    hosts = 300
    code, stderr, urls, sampler = run_broad(
        tmp_path, site, hosts, "CONCURRENT_REQUESTS=200", nofile=256)
    assert code == 0, stderr[-3000:]
    assert sorted(urls) == expected_urls(site, hosts)
    lines = [line for line in stderr.splitlines() if "needs about" in line]
    assert len(lines) == 1
    assert lines[0].endswith(
        "WARNING: CONCURRENT_REQUESTS = 200 needs about 670 open files, but the limit "
        "(RLIMIT_NOFILE, ulimit -n) is 256: crawling with 62 concurrent requests instead "
        "(raise the hard limit to go faster)")
    assert sampler.max_fds <= 256


def test_out_of_fds_during_transfers_is_transient(site, tmp_path):
    # The spider takes every free fd for 1.5 s as the crawl starts: the connections
    # made meanwhile fail with EMFILE; their requests wait and are tried again (retries
    # are off: a failed request would be lost), no actor dies.
    hosts = 50
    code, stderr, urls, _ = run_broad(
        tmp_path, site, hosts, "CONCURRENT_REQUESTS=8", args=("-a", "hog_s=1.5"), nofile=256)
    assert code == 0, stderr[-3000:]
    assert sorted(urls) == expected_urls(site, hosts)
    assert "Out of file descriptors (EMFILE/ENFILE) while connecting for" in stderr
    count = re.search(r"'downloader/exception_type_count/builtins.OSError': (\d+)", stderr)
    assert count and int(count.group(1)) >= 1, stderr[-3000:]
    assert "_failed" not in stderr


def test_robots_txt_parsers_are_bounded(site, tmp_path):
    # 300 hosts, at most 20 robots.txt parsers kept: hosts evicted before their second
    # page fetch robots.txt again, every page is still crawled once.
    hosts = 300
    code, stderr, urls, _ = run_broad(
        tmp_path, site, hosts, "CONCURRENT_REQUESTS=50", "ROBOTSTXT_OBEY=1",
        "ROBOTSTXT_CACHE_SIZE=20", timeout_s=300)
    assert code == 0, stderr[-3000:]
    assert len(urls) == len(set(urls)), "a page was crawled twice"
    assert sorted(urls) == expected_urls(site, hosts)
    cached = re.findall(r"robots.txt parsers cached: (\d+)", stderr)
    assert cached and 5 <= int(cached[-1]) <= 20, stderr[-3000:]
    fetched = int(re.search(r"'robotstxt/request_count': (\d+)", stderr).group(1))
    assert fetched >= hosts
