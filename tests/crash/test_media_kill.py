"""Lose nothing with media downloads: a ``JOBDIR`` crawl killed (SIGKILL) while an item
waits in the Pipeline actor for its file is resumed by the same command and ends with
every item once in the feed, the file stored. The item's lease is not acked while its
download is pending (its checkpoint waits behind it).

A real ``crawlfw runspider`` subprocess, a real local server whose ``/slow.bin`` answers
only once the test lets it (after the kill), a real SIGKILL.
"""

import http.server
import json
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.support.servers import handler_server
from tests.support.wait import wait_for

pytestmark = pytest.mark.slow

SPIDER = Path(__file__).with_name("mediaspider.py")
ROOT = Path(__file__).resolve().parents[2]
PAGES = ("/page/1", "/page/2", "/page/3")


class Handler(http.server.BaseHTTPRequestHandler):
    """``/slow.bin`` waits for ``release``; every other path answers at once. Paths
    asked are noted in ``hits``."""

    release: threading.Event
    hits: list

    def do_GET(self):  # noqa: N802 (http.server's name)
        self.hits.append(self.path)
        if self.path == "/slow.bin":
            self.release.wait(60)
            body, kind = b"the slow file", "application/octet-stream"
        elif self.path == "/index.html" or self.path in PAGES:
            body, kind = b"<html><title>page</title></html>", "text/html"
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):  # noqa: A002
        pass


@pytest.fixture
def server():
    with handler_server(type("H", (Handler,), {"release": threading.Event(), "hits": []})) as httpd:
        yield httpd


def start(server, tmp_path, log):
    cmd = [sys.executable, "-m", "crawlfw.cmdline", "runspider", str(SPIDER),
           "-a", f"base={server.url}", "-s", f"JOBDIR={tmp_path / 'job'}",
           "-o", str(tmp_path / "items.jl"), "-s", "LOG_LEVEL=INFO",
           "-s", "ROBOTSTXT_OBEY=False", "-s", "FRONTIER_CHECKPOINT_INTERVAL=0.1",
           "-s", "ITEM_PIPELINES={\"crawlfw.pipelines.files.FilesPipeline\": 1}",
           "-s", f"FILES_STORE={tmp_path / 'files'}"]
    return subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log)


def test_kill_9_while_a_media_download_is_pending_loses_no_item(server, tmp_path):
    hits = server.handler.hits
    with open(tmp_path / "first.log", "wb") as log:
        proc = start(server, tmp_path, log)
        try:
            # the media item waits for /slow.bin while the pages' items go through
            wait_for(lambda: "/slow.bin" in hits and all(p in hits for p in PAGES),
                     "the slow file and every page to be asked for", alive=proc)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(60)
    server.handler.release.set()
    with open(tmp_path / "second.log", "wb") as log:
        code = start(server, tmp_path, log).wait(120)
    text = (tmp_path / "second.log").read_text(errors="replace")
    assert code == 0, text[-3000:]
    assert "'finish_reason': 'finished'" in text, text[-3000:]
    items = [json.loads(line) for line in (tmp_path / "items.jl").read_text().splitlines()]
    assert sorted(item["name"] for item in items) == [
        "a", "b", "media", "page-1", "page-2", "page-3"]
    [media] = [item for item in items if item["name"] == "media"]
    [stored] = media["files"]
    assert stored["url"] == server.url + "/slow.bin"
    assert (tmp_path / "files" / stored["path"]).read_bytes() == b"the slow file"
