"""Out of file descriptors is a transient condition, not a death: a feed file opened or
a control connection accepted while something else in the process holds every
descriptor is tried again after a short backoff (``crawlfw.core._fds``).

The crawl-level tests run ``crawlfw runspider`` in a subprocess under a low
``RLIMIT_NOFILE`` whose spider, at its first response, takes every free descriptor and
gives them back ``hog_s`` seconds later.
"""

import errno
import json
import logging
import re
import resource
import socket
import subprocess
import sys
import textwrap
import time

import pytest

from crawlfw.core._fds import FD_RETRY_DELAYS_S, out_of_fds, retry_when_out_of_fds
from tests.support.countserver import CountingServer
from tests.support.wait import wait_for

# -- retry_when_out_of_fds ------------------------------------------------------------


def _failing(times, err=errno.EMFILE):
    calls = []

    def call():
        calls.append(1)
        if len(calls) <= times:
            raise OSError(err, "Too many open files", "items.jl")
        return "opened"
    return call, calls


@pytest.mark.parametrize("err, name", [(errno.EMFILE, "EMFILE"), (errno.ENFILE, "ENFILE")])
def test_retried_after_a_backoff_with_one_warning_naming_the_file(caplog, err, name):
    caplog.set_level(logging.INFO)
    call, calls = _failing(3, err)
    slept, counted = [], []
    assert retry_when_out_of_fds(call, "feed /tmp/items.jl", on_retry=lambda: counted.append(1),
                                 sleep=slept.append) == "opened"
    assert len(calls) == 4 and len(counted) == 3
    assert slept == [0.05, 0.1, 0.2]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [f"Out of file descriptors ({name}) opening feed /tmp/items.jl: "
                        f"trying again (for up to {sum(FD_RETRY_DELAYS_S):.0f} s)"]
    assert "Opened feed /tmp/items.jl after 3 retries" in caplog.text


def test_another_error_is_not_retried():
    def call():
        raise PermissionError(errno.EACCES, "Permission denied", "items.jl")
    slept = []
    with pytest.raises(PermissionError):
        retry_when_out_of_fds(call, "feed items.jl", sleep=slept.append)
    assert slept == []


def test_gives_up_after_the_delays_with_the_last_error():
    call, calls = _failing(100)
    slept = []
    with pytest.raises(OSError) as info:
        retry_when_out_of_fds(call, "feed items.jl", delays_s=(0.01, 0.02), sleep=slept.append)
    assert out_of_fds(info.value) and len(calls) == 3 and slept == [0.01, 0.02]


def test_out_of_fds():
    assert out_of_fds(OSError(errno.EMFILE, "x")) and out_of_fds(OSError(errno.ENFILE, "x"))
    assert not out_of_fds(OSError(errno.ENOENT, "x")) and not out_of_fds(ValueError())


# -- in a real crawl ----------------------------------------------------------------------

HOG_SPIDER = '''
import os
import sys
import threading
import time

import crawlfw


def uri_params(params, spider):
    """FEED_URI_PARAMS: with hog_at=batch3, takes every free file descriptor when the
    feed resolves the URI of its 3rd batch (right after storing the 2nd, whose file
    descriptor it so takes too), before that batch's file is opened."""
    if spider.hog_at == "batch3" and params["batch_id"] == 3 and not HogSpider.hogged:
        HogSpider.hogged = True
        HogSpider.hog(spider.hog_s)
    return params


class HogSpider(crawlfw.Spider):
    """Crawls /slow/0 .. /slow/<pages-1>, one item each; with hog_at=response (the
    default), at its first response takes every free file descriptor for hog_s
    seconds."""

    name = "hog"
    hogged = False
    hog_at = "response"

    def start_requests(self):
        for n in range(int(self.pages)):
            yield crawlfw.Request(f"{self.base_url}/slow/{n}")

    def parse(self, response):
        if self.hog_at == "response" and not HogSpider.hogged:
            HogSpider.hogged = True
            self.hog(self.hog_s)
        yield {"url": response.url}

    @staticmethod
    def hog(spec):
        """Hold every free descriptor for ``spec`` seconds, or with ``until:<path>``
        until that file exists (at most 60 s; stat needs no descriptor)."""
        # glibc loads libgcc_s (a file) when a thread first exits: have one exit now
        t = threading.Thread(target=lambda: None)
        t.start()
        t.join()
        held = []
        try:
            while True:
                held.append(os.open(os.devnull, os.O_RDONLY))
        except OSError:
            pass
        print(f"HOGGING {len(held)} fds", file=sys.stderr, flush=True)

        def give_back():
            for fd in held:
                os.close(fd)
        if spec.startswith("until:"):
            path = spec[len("until:"):]

            def wait_then_give_back():
                deadline = time.monotonic() + 60
                while not os.path.exists(path) and time.monotonic() < deadline:
                    time.sleep(0.02)
                give_back()
            threading.Thread(target=wait_then_give_back, daemon=True).start()
        else:
            threading.Timer(float(spec), give_back).start()
'''

NOFILE = 256


def _limit_fds():
    resource.setrlimit(resource.RLIMIT_NOFILE, (NOFILE, NOFILE))


@pytest.fixture
def server():
    s = CountingServer(hold_s=0.05)
    yield s
    s.stop()


def _start(runtime, tmp_path, server, pages, hog_s, *args):
    (tmp_path / "hogspider.py").write_text(textwrap.dedent(HOG_SPIDER))
    log = tmp_path / "crawl.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "crawlfw.cmdline", "runspider", "hogspider.py",
             "-a", f"base_url={server.url}", "-a", f"pages={pages}", "-a", f"hog_s={hog_s}",
             "-s", "CONCURRENT_REQUESTS=2", "-s", "RETRY_ENABLED=0", *args],
            cwd=str(tmp_path), env=runtime.env(), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=err, preexec_fn=_limit_fds)
    return proc, log


@pytest.mark.slow
def test_feed_files_opened_while_out_of_fds_are_retried(tmp_path, server, runtime):
    """One feed file per item (batch_item_count 1); the 3rd is opened while every
    descriptor is held (for 1.5 s) by the spider's FEED_URI_PARAMS function: the open
    waits for them, every item is exported, the crawl exits 0."""
    pages = 12
    proc, log = _start(runtime, tmp_path, server, pages, 1.5, "-a", "hog_at=batch3",
                       "-o", "items-%(batch_id)d.jl", "-s", "FEED_EXPORT_BATCH_ITEM_COUNT=1",
                       "-s", "FEED_URI_PARAMS=hogspider.uri_params",
                       "-s", "CONTROL_ENDPOINT=False")
    assert proc.wait(timeout=120) == 0, log.read_text()[-3000:]
    text = log.read_text()
    assert "HOGGING" in text
    urls = sorted(json.loads(line)["url"] for path in tmp_path.glob("items-*.jl")
                  for line in path.read_text().splitlines())
    assert urls == sorted(f"{server.url}/slow/{n}" for n in range(pages))
    assert re.search(r"WARNING: Out of file descriptors \(EMFILE\) opening feed "
                     r"\S*items-\d+\.jl: trying again", text), text[-3000:]
    retries = re.search(r"'feedexport/emfile_retries': (\d+)", text)
    assert retries and int(retries.group(1)) >= 1, text[-3000:]
    assert "feed_failed" not in text and "_failed" not in text


@pytest.mark.slow
def test_a_control_connection_while_out_of_fds_is_served_after(tmp_path, server, runtime):
    """A client connecting while the crawl holds no free descriptor waits in the listen
    backlog and gets its answer once they are back; the endpoint lives on."""
    release = tmp_path / "release"  # the spider holds the descriptors until it exists
    proc, log = _start(runtime, tmp_path, server, 40, f"until:{release}",
                       "-s", "DOWNLOAD_DELAY=0.2")
    try:
        deadline = time.monotonic() + 60
        while "HOGGING" not in log.read_text(errors="replace"):
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.02)
        path = runtime.sockets / f"{proc.pid}.sock"
        assert path.exists()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(30)
            sock.connect(str(path))
            sock.sendall(b'{"type": "get_status"}\n')
            warning = (rf"WARNING: Control endpoint {re.escape(str(path))}: out of file "
                       r"descriptors \(EMFILE\) accepting a connection")
            wait_for(lambda: re.search(warning, log.read_text(errors="replace")),
                     "the endpoint to meet EMFILE accepting the connection", 60, alive=proc)
            release.touch()
            data = b""
            while not data.endswith(b"\n"):
                chunk = sock.recv(65536)
                assert chunk, "the endpoint closed the connection"
                data += chunk
        reply = json.loads(data)
        assert reply["type"] == "status_reported", reply
        text = log.read_text(errors="replace")
        assert re.search(rf"WARNING: Control endpoint {re.escape(str(path))}: out of file "
                         r"descriptors \(EMFILE\) accepting a connection", text), text[-3000:]
        assert proc.wait(timeout=120) == 0, log.read_text()[-3000:]
        text = log.read_text(errors="replace")
        retries = re.search(r"'control/emfile_retries': (\d+)", text)
        assert retries and int(retries.group(1)) >= 1, text[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
