"""What the spill tests share (tests/test_frontier_spill.py, tests/test_seen_spill.py): a
spider whose first page queues many links to slow pages, a scratch TMPDIR, a crawl on a
full disk."""

import resource
import signal
import subprocess
import sys
import textwrap

from tests.support.proc import crawlfw_env

#: ``-a base=URL`` (a CountingServer), ``-a links=N`` (30,000 by default): one page whose
#: callback yields N requests to ``/slow/<i>``.
MANY_LINKS_SPIDER = textwrap.dedent('''
    import crawlfw


    class ManyLinks(crawlfw.Spider):
        name = "many_links"
        base = ""
        links = "30000"

        def start_requests(self):
            yield crawlfw.Request(self.base + "/page/0")

        def parse(self, response):
            for i in range(int(self.links)):
                yield crawlfw.Request(f"{self.base}/slow/{i}", callback=self.parse_slow)

        def parse_slow(self, response):
            pass
''')


def write_spider_and_tmpdir(tmp_path, spider=MANY_LINKS_SPIDER):
    """Write ``spider`` to ``tmp_path/spider.py``; return a new ``tmp_path/tmp`` (the
    crawl's TMPDIR)."""
    (tmp_path / "spider.py").write_text(spider)
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    return tmpdir


def run_on_a_full_disk(tmp_path, tmpdir, base_url, limit_bytes, *args):
    """Run ``crawlfw runspider spider.py -a base=<base_url> <args>`` in ``tmp_path`` with
    ``TMPDIR`` ``tmpdir`` and ``RLIMIT_FSIZE`` ``limit_bytes``, which stands for a full
    disk (no root, no mount needed): a write past it fails with EFBIG ("disk I/O error"
    in SQLite; a full disk's ENOSPC says "database or disk is full"). SIGXFSZ is ignored
    (kept across exec). Returns the ``subprocess.CompletedProcess`` (text output)."""
    def limit_file_size():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    return subprocess.run(
        [sys.executable, "-m", "crawlfw.cmdline", "runspider", "spider.py",
         "-a", f"base={base_url}", *args],
        cwd=tmp_path, env=crawlfw_env({"TMPDIR": str(tmpdir), "PYTHONDONTWRITEBYTECODE": "1"}),
        capture_output=True, text=True, timeout=120, preexec_fn=limit_file_size)
