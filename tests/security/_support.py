"""Helpers of the hostile-site tests: run a one-file spider with ``crawlfw runspider`` in
a real subprocess against servers on 127.0.0.1 and read back what reached the feed, the
log and the stats.

Every spider source given to :func:`crawl` gets :data:`STATS_MIXIN` prepended: a
``closed`` hook that writes the crawl's numeric stats to ``stats.json`` (the stats a test
asserts on, without parsing the log's stats dump).
"""

import json

from tests.support.proc import run_measured

STATS_MIXIN = '''
import json as _json

import crawlfw


class StatsSpider(crawlfw.Spider):
    def closed(self, reason):
        stats = {k: v for k, v in self.crawler.stats.get_stats().items()
                 if isinstance(v, (int, float, str))}
        with open("stats.json", "w") as f:
            _json.dump(stats, f)
'''


class Crawl:
    """What a CLI crawl left: ``result`` (:class:`tests.support.proc.Finished`),
    ``items`` (the JSON-lines feed), ``feed`` (its raw text), ``stats`` (a dict) and
    ``log`` (stderr)."""

    def __init__(self, result, feed_text, stats):
        self.result = result
        self.feed = feed_text
        self.items = [json.loads(line) for line in feed_text.splitlines()]
        self.stats = stats
        self.log = result.stderr

    def warnings(self, needle: str) -> list[str]:
        """The WARNING log lines that contain ``needle``."""
        return [line for line in self.log.splitlines() if "WARNING" in line and needle in line]


def crawl(tmp_path, spider_source: str, *args, timeout_s: float = 90.0, env=None) -> Crawl:
    """``crawlfw runspider`` the spider (``STATS_MIXIN`` + ``spider_source``) in
    ``tmp_path`` with ``-o items.jl`` and extra CLI ``args``; fail on a timeout or a
    non-zero exit."""
    spider_file = tmp_path / "hostile_spider.py"
    spider_file.write_text(STATS_MIXIN + spider_source)
    feed = tmp_path / "items.jl"
    result = run_measured(
        "runspider", spider_file, "-o", feed, "-s", "LOG_LEVEL=DEBUG", *args,
        cwd=tmp_path, timeout_s=timeout_s, env=env,
    )
    assert not result.timed_out, result.stderr[-3000:]
    assert result.returncode == 0, result.stderr[-3000:]
    stats_file = tmp_path / "stats.json"
    stats = json.loads(stats_file.read_text()) if stats_file.exists() else {}
    return Crawl(result, feed.read_text() if feed.exists() else "", stats)


def html(body: str, headers=()):
    """A 200 text/html answer for ScriptedServer routes."""
    return (200, [("Content-Type", "text/html; charset=utf-8"), *headers], body.encode())


def redirect(location: str, status: int = 302):
    """A redirect answer for ScriptedServer routes."""
    return (status, [("Location", location), ("Content-Type", "text/html")], b"moved")
