"""Real crawl processes to see and steer from the test (``crawlfw runspider`` in a
subprocess), each test with a private control-socket directory (``XDG_RUNTIME_DIR``)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from tests.commands.conftest import crawlfw_env
from tests.support.wait import wait_for

#: Seconds any wait on a crawl process may take before the test fails.
WAIT_S = 60.0

#: A spider crawling ``/slow/0`` .. ``/slow/<pages-1>`` of a CountingServer, one item each.
SLOW_SPIDER = '''
import crawlfw


class SlowSpider(crawlfw.Spider):
    name = "slow"
    base_url = "http://127.0.0.1:1"
    pages = 40

    def start_requests(self):
        for n in range(int(self.pages)):
            yield crawlfw.Request(f"{self.base_url}/slow/{n}")

    def parse(self, response):
        yield {"url": response.url, "title": response.css("title::text").extract_first()}

    def parse_extra(self, response):
        yield {"url": response.url, "extra": True}
'''


class RuntimeDir:
    """A short private ``XDG_RUNTIME_DIR`` (Unix socket paths are limited to 107 bytes,
    so not under pytest's long ``tmp_path``); removed by :meth:`cleanup`."""

    def __init__(self):
        self.path = Path(tempfile.mkdtemp(prefix="cfw"))
        os.chmod(self.path, 0o700)
        self.sockets = self.path / "crawlfw"

    def env(self, extra=None) -> dict:
        return crawlfw_env({"XDG_RUNTIME_DIR": str(self.path), **(extra or {})})

    def cli(self, *args, timeout=WAIT_S, input=None) -> subprocess.CompletedProcess:  # noqa: A002
        """Run ``crawlfw <args>`` against this runtime directory."""
        return subprocess.run([sys.executable, "-m", "crawlfw.cmdline", *map(str, args)],
                              env=self.env(), capture_output=True, text=True,
                              timeout=timeout, input=input or "", cwd=str(self.path))

    def cli_json(self, *args):
        result = self.cli(*args, "--json")
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    def cleanup(self):
        shutil.rmtree(self.path, ignore_errors=True)


class LiveCrawl:
    """``crawlfw runspider`` of :data:`SLOW_SPIDER` running in the background.

    Args:
        runtime: the :class:`RuntimeDir` its endpoint listens in.
        workdir: where the spider file, the feed (``items.jl``) and the log
            (``crawl.log``, standard error) go.
        base_url: the CountingServer's URL.
        pages: how many pages the spider crawls.
        args: more command-line arguments (``-s NAME=VALUE``...).
        spider: the spider module's source (another spider taking the same ``-a``
            arguments).
    """

    def __init__(self, runtime, workdir: Path, base_url: str, pages: int = 40, args=(),
                 name="crawl", spider: str = SLOW_SPIDER):
        self.runtime = runtime
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        source, spider = spider, self.workdir / "slowspider.py"
        spider.write_text(textwrap.dedent(source).lstrip())
        self.feed = self.workdir / f"{name}.jl"
        self.log = self.workdir / f"{name}.log"
        self._log_file = open(self.log, "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "crawlfw.cmdline", "runspider", str(spider),
             "-a", f"base_url={base_url}", "-a", f"pages={pages}", "-o", str(self.feed),
             "-s", "CONCURRENT_REQUESTS=2", *args],
            cwd=str(self.workdir), env=runtime.env(), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=self._log_file)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def socket(self) -> Path:
        return self.runtime.sockets / f"{self.pid}.sock"

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def crawled_lines(self) -> int:
        return self.log_text().count("] DEBUG: Crawled (")

    def wait_listed(self, min_pages: int = 0) -> dict:
        """Wait until ``crawlfw status <pid> --json`` answers with at least ``min_pages``
        pages; return that status."""
        def listed():
            assert self.proc.poll() is None, f"the crawl exited early:\n{self.log_text()}"
            if self.socket.exists():
                result = self.runtime.cli("status", self.pid, "--json")
                if result.returncode == 0:
                    status = json.loads(result.stdout)
                    if status["pages"] >= min_pages:
                        return status
            return None

        return wait_for(listed, f"crawl {self.pid} listed with {min_pages} pages",
                        timeout_s=WAIT_S, poll_s=0.05)

    def wait(self, timeout_s: float = WAIT_S) -> int:
        try:
            return self.proc.wait(timeout=timeout_s)
        finally:
            self._log_file.close()

    def items(self) -> list[dict]:
        return [json.loads(line) for line in self.feed.read_text().splitlines()]

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self._log_file.close()
