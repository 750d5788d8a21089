"""``crawlfw bench``: the link server, and a short benchmark run."""

import os
import re
import signal
import socket
import subprocess
import sys
import urllib.request
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.commands.conftest import crawlfw_env

pytestmark = pytest.mark.slow


def test_bench_server_serves_random_links_and_exits_with_its_parent(tmp_path):
    proc = subprocess.Popen([sys.executable, "-u", "-m", "crawlfw.commands.bench"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env=crawlfw_env(), cwd=tmp_path)
    try:
        line = proc.stdout.readline()
        url = re.fullmatch(r"Bench server at (http://127\.0\.0\.1:\d+)\n", line).group(1)
        with urllib.request.urlopen(f"{url}/follow?total=10&show=5&n=3", timeout=10) as resp:
            body = resp.read().decode()
        links = re.findall(r"<a href='([^']+)'>follow (\d+)</a>", body)
        assert len(links) == 5
        for href, n in links:
            query = parse_qs(urlsplit(href).query)
            assert urlsplit(href).path == "/follow"
            assert query["total"] == ["10"] and query["show"] == ["5"]
            assert query["n"] == [n] and 1 <= int(n) <= 10
    finally:
        proc.stdin.close()  # what the bench command's death does
        assert proc.wait(timeout=10) == 0
        proc.stdout.close()


def test_short_benchmark_prints_stats(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "crawlfw.cmdline", "bench", "-s", "CLOSESPIDER_TIMEOUT=1",
         "-s", "LOGSTATS_INTERVAL=0.2"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=crawlfw_env(), cwd=tmp_path, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the command and its bench server
        proc.communicate()
        raise
    assert proc.returncode == 0, stderr
    assert "'finish_reason': 'closespider_timeout'" in stderr
    assert re.search(r"Crawled [1-9]\d* pages \(at \d+ pages/min\)", stderr)
    assert "Dumping crawlfw stats" in stderr
    assert "'downloader/response_status_count/200': " in stderr
    # the server subprocess is gone with the command
    url = re.search(r"Bench server at http://127\.0\.0\.1:(\d+)", stderr)
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", int(url.group(1))), timeout=5).close()
