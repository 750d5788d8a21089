"""crawlfw.cmdline.execute: start-up objects are frozen out of the garbage collector's
generations before the command runs (so full collections during a crawl skip them), and
the first GC threshold is raised unless someone changed it."""

import subprocess
import sys

import pytest

from crawlfw.utils.test import get_testenv
from tests.support.servers import StaticSiteServer

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
    execute(["crawlfw", "version"])
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


GC_PROBE = """
import gc, sys
import crawlfw
if sys.argv[1] == "off":
    gc.disable()
gc.collect()  # the young generation empty: what follows starts from zero
starts = []
gc.callbacks.append(lambda phase, info: phase == "start" and starts.append(
    (info["generation"], gc.get_freeze_count() > 0)))
from crawlfw.cmdline import execute
enabled_after_import = gc.isenabled()
try:
    execute(["crawlfw", "version"])
finally:
    print("before_freeze", [g for g, frozen in starts if not frozen])
    print("enabled", enabled_after_import, gc.isenabled())
"""


def _gc_probe(mode):
    out = subprocess.run(
        [sys.executable, "-c", GC_PROBE, mode], capture_output=True, text=True,
        env=get_testenv(), timeout=60,
    ).stdout
    lines = dict(line.split(" ", 1) for line in out.splitlines()
                 if line.startswith(("before_freeze", "enabled")))
    return eval(lines["before_freeze"]), lines["enabled"]  # noqa: S307 -- our own probe's output


def test_no_automatic_collection_runs_before_the_freeze():
    # start-up (#20): importing crawlfw.cmdline and execute() up to gc.freeze() make
    # long-lived objects only; the one full collection before the freeze is the only one
    # (the automatic ones were ~1 % of a one-request crawl, 8 % of "crawlfw version")
    before_freeze, enabled = _gc_probe("on")
    # the full one last; at most one young collection, which loading cmdline's own code
    # may trigger before its first line runs (there were 26 with the collector left on)
    assert before_freeze[-1] == 2 and before_freeze[:-1] in ([], [0]), before_freeze
    assert enabled == "True True"


def test_a_collector_disabled_by_the_program_stays_disabled():
    before_freeze, enabled = _gc_probe("off")
    assert before_freeze == [2]  # execute()'s own gc.collect()
    assert enabled == "False False"


COMMAND_PROBE = """
import sys
from crawlfw.cmdline import execute
try:
    execute(sys.argv)  # the program name first ("-c"), as Scrapy's
except SystemExit:
    pass
finally:
    print("modules", sorted(m for m in sys.modules
                            if m.startswith("crawlfw.commands.") or m in HEAVY))
"""
# what the command line alone does not need: "crawlfw version" is to load none of them
HEAVY = ("unittest", "w3lib.html", "w3lib.url", "urllib.request", "http.client", "ssl",
         "hashlib", "platform", "optparse", "pkgutil")
COMMAND_PROBE = f"HEAVY = {HEAVY!r}\n" + COMMAND_PROBE


def _modules_after(*argv):
    out = subprocess.run(
        [sys.executable, "-c", COMMAND_PROBE, *argv], capture_output=True, text=True,
        env=get_testenv(), timeout=60,
    ).stdout
    line = next(line for line in out.splitlines() if line.startswith("modules "))
    return set(eval(line.split(" ", 1)[1]))  # noqa: S307 -- our own probe's output


def test_a_named_builtin_command_imports_only_its_own_module():
    # start-up (#20): "crawlfw version" builds the version command alone; the other
    # command modules (check's unittest, bench's http.server...) are not imported
    modules = _modules_after("version")
    assert "crawlfw.commands.version" in modules
    assert not modules & {"crawlfw.commands.check", "crawlfw.commands.bench",
                          "crawlfw.commands.genspider", "crawlfw.commands.shell",
                          "unittest"}
    # nor w3lib (whose w3lib.url loads urllib.request, http.client, ssl and email: a
    # third of the command's start-up), hashlib, platform (-v only), optparse (class-based
    # commands) or pkgutil (packages of commands or spiders)
    assert not modules & set(HEAVY), modules & set(HEAVY)


def test_the_listing_and_an_unknown_command_still_see_every_command():
    for argv in ([], ["-h"], ["no-such-command"]):
        modules = _modules_after(*argv)
        assert {"crawlfw.commands.check", "crawlfw.commands.version",
                "crawlfw.commands.runspider"} <= modules, argv


CRAWL_PROBE = '''
import sys
import crawlfw

class OneRequest(crawlfw.Spider):
    name = "one"
    start_urls = ["{url}/index.html"]

    def parse(self, response):
        pass

    def closed(self, reason):
        from crawlfw.responsetypes import responsetypes
        print("LOADED", sorted(m for m in ("asyncio", "unittest", "xmlrpc.client",
                                             "http.server",
                                             "importlib.metadata", "protego",
                                             "xml.sax.saxutils",
                                             "webbrowser", "subprocess", "optparse",
                                             "pkgutil", "ftplib")
                                 if m in sys.modules), responsetypes._mimetypes is None)
'''


def test_a_one_request_crawl_imports_nothing_it_does_not_use(tmp_path):
    # start-up (#20): asyncio (a spider's own async callbacks), xmlrpc (XmlRpcRequest), the system's mime.types (responses without Content-Type),
    # importlib.metadata (a distribution declaring crawlfw.commands), protego
    # (ROBOTSTXT_OBEY), xml.sax (XML feeds), webbrowser (open_in_browser), subprocess
    # (--workers), optparse (class-based commands), pkgutil (walk_modules: spider
    # and command packages) and ftplib (FTP feeds) are loaded when needed only. lxml.html
    # comes with the selectors, imported at every crawl's start (a first import
    # mid-crawl meeting EMFILE would lose a page)
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text("<html><body>one page</body></html>")
    server = StaticSiteServer(tmp_path / "site").start()
    try:
        spider = tmp_path / "one.py"
        spider.write_text(CRAWL_PROBE.format(url=server.url))
        out = subprocess.run(
            [sys.executable, "-m", "crawlfw.cmdline", "runspider", str(spider),
             "-s", "LOG_LEVEL=WARNING", "-o", str(tmp_path / "items.jl")],
            capture_output=True, text=True, env=get_testenv(), timeout=120, cwd=tmp_path,
        )
    finally:
        server.stop()
    line = next(line for line in out.stdout.splitlines() if line.startswith("LOADED "))
    assert line == "LOADED [] True", out.stderr[-2000:]
