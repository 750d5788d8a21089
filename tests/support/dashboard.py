"""Speaking to a crawlfw dashboard over HTTP as a browser would (http.client, exactly
the headers a test gives), and starting ``crawlfw dashboard`` for a test's runtime
directory (tests/support/live.py's RuntimeDir)."""

import http.client
import json
import re
import subprocess
import sys
import time
import urllib.parse

from tests.support.live import WAIT_S


class Dashboard:
    """A dashboard at ``url`` (``http://127.0.0.1:PORT/?token=TOKEN``), asked over
    http.client with exactly the headers a test gives."""

    def __init__(self, url: str):
        parts = urllib.parse.urlsplit(url)
        self.port = parts.port
        self.token = urllib.parse.parse_qs(parts.query).get("token", [None])[0]

    def request(self, method, path, headers=None, body=None, read=True):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=20)
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        if not read:
            return conn, response
        data = response.read()
        conn.close()
        return response.status, response.headers, data

    def auth(self, extra=None):
        return {"Authorization": f"Bearer {self.token}", **(extra or {})}

    def get_json(self, path):
        status, _, data = self.request("GET", path, self.auth())
        assert status == 200, data
        return json.loads(data)

    def post(self, path, headers=None):
        return self.request("POST", path, self.auth(headers))

    def events(self, path, count, kinds=("sample",), timeout_s=WAIT_S):
        """The first ``count`` events of the given kinds of the stream at ``path``:
        ``[(kind, data), ...]``."""
        conn, response = self.request("GET", path, self.auth(), read=False)
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/event-stream")
        got, kind, deadline = [], None, time.monotonic() + timeout_s
        try:
            while len(got) < count and time.monotonic() < deadline:
                line = response.fp.readline().decode()
                if not line:
                    break
                if line.startswith("event: "):
                    kind = line[7:].strip()
                elif line.startswith("data: ") and kind in kinds:
                    got.append((kind, json.loads(line[6:])))
        finally:
            conn.close()
        return got


def start_dashboard(runtime, *args) -> tuple[subprocess.Popen, Dashboard]:
    proc = subprocess.Popen([sys.executable, "-m", "crawlfw.cmdline", "dashboard", *args],
                            env=runtime.env(), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=str(runtime.path))
    url = proc.stdout.readline().strip()
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\?token=[A-Za-z0-9_-]{40,}", url), \
        (url, proc.stderr.read() if proc.poll() is not None else "")
    return proc, Dashboard(url)
