"""MultiDriver: real transfers against real servers on 127.0.0.1 (HTTP, HTTPS, FTP, file)."""

from __future__ import annotations

import gzip
import hashlib
import http.server
import ipaddress
import json
import logging
import os
import shutil
import socket
import ssl
import subprocess
import threading
import time

import pytest

from crawlfw.core.transport.curl import SUPPORTED_SCHEMES, MultiDriver, Result
from crawlfw.exceptions import (
    ConnectError,
    ConnectionLostError,
    ConnectionRefusedError,
    DNSLookupError,
    DownloadCancelled,
    DownloadError,
    DownloadTimeoutError,
    NotSupported,
    ResponseFailed,
    ResponseHeadersTooLarge,
    TLSError,
)
from crawlfw.http import Headers, HtmlResponse, Request, Response, TextResponse

# -- a misbehaving-on-demand HTTP/1.1 server ----------------------------------------------


def pattern(n: int) -> bytes:
    """``n`` deterministic binary bytes (every byte value, NULs included)."""
    block = bytes(range(256))
    return (block * (n // 256 + 1))[:n]


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002
        pass

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status, body=b"", headers=(), content_type="text/plain"):
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _dispatch(self):
        self.server.requests_seen += 1
        body = self._body()
        path = self.path
        if path.startswith("http://"):  # absolute-form: we are being used as a proxy
            path = "/echo"
        parts = path.split("?")[0].split("/")
        route = parts[1]
        arg = parts[2] if len(parts) > 2 else ""
        if route == "echo":
            payload = {
                "method": self.command,
                "request_line": self.requestline,
                "headers": list(self.headers.items()),
                "body": body.hex(),
            }
            self._send(200, json.dumps(payload).encode(), content_type="application/json")
        elif route == "status":
            self._send(int(arg), f"status {arg}".encode())
        elif route == "html":
            self._send(200, b"<html><body><p>hi</p></body></html>", content_type="text/html")
        elif route == "bytes":
            self._send(200, pattern(int(arg)), content_type="application/octet-stream")
        elif route == "empty":
            self._send(200, b"")
        elif route == "cookies":
            self._send(200, b"ok", headers=[("Set-Cookie", "a=1"), ("set-cookie", "b=2")])
        elif route == "redirect":
            self._send(302, b"moved", headers=[("Location", "/html")])
        elif route == "gzip":
            self._send(
                200,
                gzip.compress(b"<html>zipped</html>"),
                headers=[("Content-Encoding", "gzip")],
                content_type="text/html",
            )
        elif route == "head-only":  # announces a body it never sends
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
        elif route == "continue":  # an interim 100 block before the real response
            self.send_response_only(100)
            self.send_header("X-Interim", "yes")
            self.end_headers()
            self._send(201, b"created", headers=[("X-Final", "yes")])
        elif route == "stall":
            self.server.release.wait(30)
            self._send(200, b"late")
        elif route == "truncated":  # promises 100 bytes, sends 10, hangs up
            self.send_response(200)
            self.send_header("Content-Length", "100")
            self.end_headers()
            self.wfile.write(b"x" * 10)
            self.wfile.flush()
            self.close_connection = True
        elif route == "chunked":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            data = pattern(int(arg))
            for i in range(0, len(data), 4096):
                chunk = data[i : i + 4096]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.write(b"0\r\n\r\n")
        elif route == "nothing":  # closes without a byte of response
            self.close_connection = True
        elif route == "bigheader":  # one 1 MiB header
            self._send(200, b"ok", headers=[("X-Big", "a" * (1 << 20))])
        elif route == "manyheaders":  # 10,000 headers
            self._send(200, b"ok", headers=[(f"X-H{i}", "v") for i in range(10_000)])
        elif route == "largeheaders":  # 10 headers of 50 KB: 500 KB in all
            self._send(200, b"ok", headers=[(f"X-H{i}", "v" * 50_000) for i in range(10)])
        else:
            self._send(404, b"no route")

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_HEAD = _dispatch


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, ssl_context=None):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.connections = 0
        self.requests_seen = 0
        self.release = threading.Event()
        self.ssl_context = ssl_context

    def get_request(self):
        sock, addr = super().get_request()
        self.connections += 1
        if self.ssl_context is not None:
            sock = self.ssl_context.wrap_socket(sock, server_side=True)
        return sock, addr

    def handle_error(self, request, client_address):
        pass  # clients hanging up on purpose are expected here


def _start(server):
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server


def _stop(server):
    server.release.set()
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def server():
    srv = _start(_Server())
    srv.url = f"http://127.0.0.1:{srv.server_address[1]}"
    yield srv
    _stop(srv)


@pytest.fixture
def driver():
    d = MultiDriver()
    yield d
    d.close()


def fetch(driver, *requests, timeout_s=10.0, **kw) -> list[Result]:
    """Run ``requests`` to completion; results in request order."""
    for request in requests:
        driver.add(request, timeout_s=timeout_s, **kw)
    results = []
    while driver.active:
        results.extend(driver.perform(5.0))
    by_id = {id(r.request): r for r in results}
    assert len(by_id) == len(results) == len(requests)
    return [by_id[id(r)] for r in requests]


def fetch_one(driver, request, **kw) -> Result:
    return fetch(driver, request, **kw)[0]


def echo(result: Result) -> dict:
    assert result.error is None, result.error
    return json.loads(result.response.body)


# -- statuses, headers, bodies ----------------------------------------------------------


@pytest.mark.parametrize("status", [200, 201, 404, 500, 503])
def test_status_is_returned_as_a_response(driver, server, status):
    result = fetch_one(driver, Request(f"{server.url}/status/{status}"))
    assert result.error is None and result.ok
    assert result.response.status == status
    assert result.response.body == f"status {status}".encode()
    assert result.response.url == f"{server.url}/status/{status}"


def test_response_fields_class_and_timing(driver, server):
    request = Request(f"{server.url}/html")
    result = fetch_one(driver, request)
    response = result.response
    assert isinstance(response, HtmlResponse)
    assert response.body == b"<html><body><p>hi</p></body></html>"
    assert response.request is request
    assert response.headers[b"content-type"] == b"text/html"
    assert result.bytes_received == len(response.body)
    assert result.remote_ip == "127.0.0.1"
    assert 0 <= result.download_latency_s <= result.total_time_s
    assert request.meta["download_latency"] == result.download_latency_s


def test_response_ip_address_and_protocol(driver, server):
    # Scrapy 2's Response.ip_address (CURLINFO_PRIMARY_IP) and protocol (the status line's)
    response = fetch_one(driver, Request(f"{server.url}/html")).response
    assert response.ip_address == ipaddress.IPv4Address("127.0.0.1")
    assert response.protocol == "HTTP/1.1"
    assert response.certificate is None  # not TLS


def test_response_protocol_of_an_http_10_answer(driver, server, monkeypatch):
    monkeypatch.setattr(_Handler, "protocol_version", "HTTP/1.0")
    response = fetch_one(driver, Request(f"{server.url}/html")).response
    assert response.status == 200
    assert response.protocol == "HTTP/1.0"


def test_multi_valued_and_case_insensitive_headers(driver, server):
    response = fetch_one(driver, Request(f"{server.url}/cookies")).response
    assert response.headers.getlist("Set-Cookie") == [b"a=1", b"b=2"]
    assert response.headers.getlist("SET-COOKIE") == [b"a=1", b"b=2"]
    assert response.headers.get("content-length") == b"2"


@pytest.mark.parametrize("size", [0, 256, 16 * 1024 + 1, 5 * 1024 * 1024])
def test_binary_bodies_of_any_size(driver, server, size):
    result = fetch_one(driver, Request(f"{server.url}/bytes/{size}"))
    if size:  # (an empty octet-stream body sniffs as text, as in Scrapy)
        assert type(result.response) is Response
    assert result.response.body == pattern(size)
    assert result.bytes_received == size


def test_chunked_body_is_reassembled(driver, server):
    result = fetch_one(driver, Request(f"{server.url}/chunked/100000"))
    assert result.response.body == pattern(100000)
    assert b"Transfer-Encoding" in result.response.headers


def test_empty_body(driver, server):
    result = fetch_one(driver, Request(f"{server.url}/empty"))
    assert result.response.status == 200
    assert result.response.body == b""
    assert isinstance(result.response, TextResponse)


def test_interim_100_block_is_ignored(driver, server):
    response = fetch_one(driver, Request(f"{server.url}/continue")).response
    assert response.status == 201
    assert response.headers.get("X-Final") == b"yes"
    assert "X-Interim" not in response.headers
    assert response.body == b"created"


def test_redirect_is_not_followed(driver, server):
    response = fetch_one(driver, Request(f"{server.url}/redirect")).response
    assert response.status == 302
    assert response.headers["Location"] == b"/html"
    assert response.body == b"moved"
    assert server.url + "/redirect" == response.url


def test_content_encoding_is_not_decoded(driver, server):
    response = fetch_one(driver, Request(f"{server.url}/gzip")).response
    assert response.headers["Content-Encoding"] == b"gzip"
    assert gzip.decompress(response.body) == b"<html>zipped</html>"


# -- what is sent -------------------------------------------------------------------------


def test_only_the_request_headers_are_sent(driver, server):
    got = echo(fetch_one(driver, Request(f"{server.url}/echo")))
    assert [name for name, _ in got["headers"]] == ["Host"]
    assert got["request_line"] == "GET /echo HTTP/1.1"


def test_request_headers_are_sent_verbatim(driver, server):
    headers = [
        ("X-Custom", ["one", "two"]),
        ("Cookie", "a=b; c=d"),
        ("User-Agent", "crawlfw-test/1"),
        ("Accept", "text/html"),
        ("X-Empty", ""),
    ]
    got = echo(fetch_one(driver, Request(f"{server.url}/echo", headers=headers)))
    received = [(name.lower(), value) for name, value in got["headers"]]
    assert ("x-custom", "one") in received and ("x-custom", "two") in received
    assert ("cookie", "a=b; c=d") in received
    assert ("user-agent", "crawlfw-test/1") in received
    assert ("accept", "text/html") in received
    assert ("x-empty", "") in received
    assert sorted({n for n, _ in received}) == sorted(
        {"host", "x-custom", "cookie", "user-agent", "accept", "x-empty"}
    )


def test_host_header_override(driver, server):
    got = echo(fetch_one(driver, Request(f"{server.url}/echo", headers={"Host": "example.com"})))
    assert ["Host", "example.com"] in got["headers"]


def test_default_user_agent_applies_only_without_one(server):
    with MultiDriver(user_agent="crawlfw-default") as d:
        plain, custom = fetch(
            d,
            Request(f"{server.url}/echo"),
            Request(f"{server.url}/echo", headers={"User-Agent": "mine"}),
        )
    assert ["User-Agent", "crawlfw-default"] in echo(plain)["headers"]
    assert ["User-Agent", "mine"] in echo(custom)["headers"]
    assert ["User-Agent", "crawlfw-default"] not in echo(custom)["headers"]


def test_head_does_not_wait_for_the_announced_body(driver, server):
    result = fetch_one(driver, Request(f"{server.url}/head-only", method="HEAD"), timeout_s=10)
    assert result.error is None
    assert result.response.status == 200
    assert result.response.body == b""
    assert result.response.headers["Content-Length"] == b"1000"


def test_post_with_binary_body(driver, server):
    body = pattern(3000)
    got = echo(fetch_one(driver, Request(f"{server.url}/echo", method="POST", body=body)))
    assert got["method"] == "POST"
    assert bytes.fromhex(got["body"]) == body
    names = {name.lower() for name, _ in got["headers"]}
    assert names == {"host", "content-length"}  # no Content-Type, Accept, Expect


def test_post_with_empty_body_sends_content_length_zero(driver, server):
    got = echo(fetch_one(driver, Request(f"{server.url}/echo", method="POST")))
    assert got["method"] == "POST"
    assert ["Content-Length", "0"] in got["headers"]
    assert got["body"] == ""


def test_large_post_gets_no_expect_header(driver, server):
    body = pattern(2 * 1024 * 1024)  # curl adds Expect: 100-continue above 1 MiB
    got = echo(
        fetch_one(
            driver,
            Request(
                f"{server.url}/echo",
                method="POST",
                body=body,
                headers={"Content-Type": "application/octet-stream"},
            ),
        )
    )
    assert bytes.fromhex(got["body"]) == body
    names = {name.lower() for name, _ in got["headers"]}
    assert "expect" not in names
    assert ["Content-Type", "application/octet-stream"] in got["headers"]


@pytest.mark.parametrize(
    "method, body",
    [
        ("PUT", b"put-body"),
        ("PATCH", b"patch-body"),
        ("DELETE", b""),
        ("OPTIONS", b""),
        ("GET", b"get-with-body"),
    ],
)
def test_other_methods(driver, server, method, body):
    got = echo(fetch_one(driver, Request(f"{server.url}/echo", method=method, body=body)))
    assert got["method"] == method
    assert bytes.fromhex(got["body"]) == body
    lengths = [value for name, value in got["headers"] if name.lower() == "content-length"]
    assert lengths == ([str(len(body))] if body else [])


def test_reused_handles_forget_the_previous_method(driver, server):
    sequence = ["HEAD", "GET", "POST", "GET", "PUT", "GET", "HEAD", "GET"]
    for method in sequence:  # one at a time, so each transfer reuses the same handle
        result = fetch_one(driver, Request(f"{server.url}/echo", method=method, body=b""))
        if method == "HEAD":
            assert result.response.body == b""
        else:
            got = echo(result)
            assert got["method"] == method
            expect_cl = ["0"] if method == "POST" else []
            assert [v for n, v in got["headers"] if n.lower() == "content-length"] == expect_cl


def test_proxy_environment_variables_are_ignored(driver, server, monkeypatch):
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:1")
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:1")
    assert fetch_one(driver, Request(f"{server.url}/html")).response.status == 200


def test_http_proxy_gets_absolute_form_and_proxy_authorization(driver, server):
    request = Request(
        "http://origin.invalid/some/path?q=1",
        headers={"Proxy-Authorization": "Basic dXNlcjpwYXNz"},
    )
    result = fetch_one(driver, request, proxy=server.url)
    got = echo(result)
    assert got["request_line"] == "GET http://origin.invalid/some/path?q=1 HTTP/1.1"
    assert ["Proxy-Authorization", "Basic dXNlcjpwYXNz"] in got["headers"]
    assert result.response.url == "http://origin.invalid/some/path?q=1"
    # the next transfer on the same (reset) handle goes direct again
    assert echo(fetch_one(driver, Request(f"{server.url}/echo")))["request_line"].startswith(
        "GET /echo"
    )


class _ConnectProxy:
    """A minimal HTTP CONNECT proxy (RFC 9110 section 9.3.6) recording each CONNECT head."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.heads: list[bytes] = []
        self._acceptor = threading.Thread(target=self._accept, daemon=True)
        self._acceptor.start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._tunnel, args=(client,), daemon=True).start()

    def _tunnel(self, client):
        head = b""
        while b"\r\n\r\n" not in head:
            data = client.recv(4096)
            if not data:
                client.close()
                return
            head += data
        self.heads.append(head)
        host, port = head.split(b" ")[1].decode().rsplit(":", 1)
        upstream = socket.create_connection((host, int(port)))
        client.sendall(b"HTTP/1.1 200 Connection established\r\nX-Proxy: yes\r\n\r\n")

        def pipe(src, dst):
            try:
                while data := src.recv(65536):
                    dst.sendall(data)
            except OSError:
                pass
            finally:
                for s in (src, dst):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass

        threading.Thread(target=pipe, args=(upstream, client), daemon=True).start()
        pipe(client, upstream)

    def close(self):
        # shutdown wakes the accept() blocked in the thread (close alone does not, on Linux)
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        self._acceptor.join(5)


@pytest.mark.slow
def test_https_proxy_sends_proxy_authorization_on_connect_only(tls_server):
    proxy = _ConnectProxy()
    try:
        with MultiDriver() as d:
            request = Request(
                f"{tls_server.url}/echo",
                headers={"Proxy-Authorization": "Basic dXNlcjpwYXNz", "X-Origin": "1"},
            )
            result = fetch_one(d, request, proxy=proxy.url)
        got = echo(result)
        (head,) = proxy.heads
        assert head.startswith(b"CONNECT 127.0.0.1:")
        assert b"\r\nProxy-Authorization: Basic dXNlcjpwYXNz\r\n" in head
        assert b"X-Origin" not in head
        names = {name.lower() for name, _ in got["headers"]}
        assert "proxy-authorization" not in names and "x-origin" in names
        assert "X-Proxy" not in result.response.headers  # the CONNECT reply block is skipped
        assert result.response.headers["Content-Type"] == b"application/json"
    finally:
        proxy.close()


def test_sockets_above_fd_1024(driver, server):
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 1200:
        if hard != resource.RLIM_INFINITY and hard < 1200:
            pytest.skip(f"RLIMIT_NOFILE hard limit {hard} is below 1200")
        resource.setrlimit(resource.RLIMIT_NOFILE, (1200, hard))
    base = os.open(os.devnull, os.O_RDONLY)
    fillers = [base]
    try:
        while fillers[-1] < 1100:  # the next sockets get numbers above 1100
            fillers.append(os.dup(base))
        results = fetch(driver, *[Request(f"{server.url}/bytes/{n}") for n in (10, 20, 30)])
        assert [r.response.body for r in results] == [pattern(10), pattern(20), pattern(30)]
    finally:
        for fd in fillers:
            os.close(fd)
        if soft < 1200:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_bindaddress(driver, server):
    got = echo(fetch_one(driver, Request(f"{server.url}/echo"), bindaddress=("127.0.0.1", 0)))
    assert got["method"] == "GET"


# -- failures -------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nobody listens once closed


def test_connection_refused_while_another_transfer_succeeds(driver, server):
    refused_url = f"http://127.0.0.1:{_free_port()}/"
    bad, good = fetch(driver, Request(refused_url), Request(f"{server.url}/html"))
    assert isinstance(bad.error, ConnectionRefusedError)
    assert isinstance(bad.error, ConnectError) and isinstance(bad.error, DownloadError)
    assert bad.response is None and not bad.ok
    assert bad.error.url == refused_url and bad.error.curl_code == 7
    assert str(bad.error).startswith(f"Connection refused: {refused_url} (curl 7: ")
    assert "download_latency" not in bad.request.meta
    assert good.response.status == 200


def test_timeout(driver, server):
    result = fetch_one(driver, Request(f"{server.url}/stall"), timeout_s=0.3)
    assert isinstance(result.error, DownloadTimeoutError)
    assert isinstance(result.error, TimeoutError)
    assert result.error.curl_code == 28


def test_dns_failure_without_network():
    # A 64-octet label is not a valid DNS name (RFC 1035 section 2.3.4): glibc's
    # resolver rejects it without sending a query (checked with strace), so curl
    # reports CURLE_COULDNT_RESOLVE_HOST and nothing leaves the machine.
    host = "a" * 64 + ".invalid"
    try:
        socket.getaddrinfo(host.encode(), 80)
    except socket.gaierror:
        pass
    else:  # pragma: no cover - a resolver that answers for it
        pytest.skip(f"the system resolver resolves {host}")
    with MultiDriver() as d:
        result = fetch_one(d, Request(f"http://{host}/"))
    assert isinstance(result.error, DNSLookupError)
    assert result.error.curl_code == 6
    assert host in str(result.error)


def test_truncated_body(driver, server):
    result = fetch_one(driver, Request(f"{server.url}/truncated"))
    assert isinstance(result.error, (ResponseFailed, ConnectionLostError))
    assert result.error.curl_code == 18
    assert result.bytes_received == 10


def test_connection_closed_without_response(driver, server):
    result = fetch_one(driver, Request(f"{server.url}/nothing"))
    assert isinstance(result.error, ConnectionLostError)
    assert result.error.curl_code == 52


@pytest.mark.parametrize("route, detail", [
    ("bigheader", "curl 100: a response header is larger than libcurl accepts (100 KiB for "
                  "one header, 300 KiB for all of them)"),
    ("manyheaders", "curl 100: Too many response headers"),
    ("largeheaders", "curl 56: Too large response headers"),
])
def test_too_large_response_headers_are_named(driver, server, route, detail):
    result = fetch_one(driver, Request(f"{server.url}/{route}"))
    assert type(result.error) is ResponseHeadersTooLarge  # a ResponseFailed never retried
    assert str(result.error).startswith(
        f"Response headers too large: {server.url}/{route} ({detail}")
    assert "unknown error" not in str(result.error)


def test_maxsize_with_content_length_cancels(driver, server, caplog):
    # At DEBUG: the ERROR line is the download error's ("Error downloading ..."), once.
    with caplog.at_level(logging.DEBUG, logger="crawlfw.core.transport.curl_transfer"):
        result = fetch_one(driver, Request(f"{server.url}/bytes/100000"), maxsize_bytes=1000)
    assert isinstance(result.error, DownloadCancelled)
    assert "expected response size (100000)" in str(result.error)
    assert "max size (1000)" in str(result.error)
    assert any("max size (1000)" in r.getMessage() for r in caplog.records)


def test_maxsize_without_content_length_cancels(driver, server):
    result = fetch_one(driver, Request(f"{server.url}/chunked/200000"), maxsize_bytes=50000)
    assert isinstance(result.error, DownloadCancelled)
    assert "max size (50000)" in str(result.error)
    assert result.bytes_received <= 50000 + 64 * 1024


def test_body_within_maxsize_is_kept(driver, server):
    result = fetch_one(driver, Request(f"{server.url}/bytes/1000"), maxsize_bytes=1000)
    assert result.response.body == pattern(1000)


@pytest.mark.parametrize("route", ["bytes", "chunked"])
def test_warnsize_logs_one_warning(driver, server, caplog, route):
    request = Request(f"{server.url}/{route}/300000")
    with caplog.at_level(logging.WARNING, logger="crawlfw.core.transport.curl_transfer"):
        result = fetch_one(driver, request, warnsize_bytes=1000)
    assert result.response.body == pattern(300000)
    warnings = [r.getMessage() for r in caplog.records if "warn size (1000)" in r.getMessage()]
    assert len(warnings) == 1
    if route == "chunked":
        assert warnings[0].startswith("Received (")
    else:
        assert warnings[0].startswith("Expected response size (300000)")


@pytest.mark.slow
def test_tls_error_when_verifying_self_signed(tls_server):
    with MultiDriver(verify_tls=True) as d:
        result = fetch_one(d, Request(f"{tls_server.url}/html"))
    assert isinstance(result.error, TLSError)
    assert result.error.curl_code == 60


@pytest.mark.slow
def test_https_without_verification(tls_server):
    with MultiDriver() as d:
        result = fetch_one(d, Request(f"{tls_server.url}/html"))
    assert result.response.status == 200
    assert result.response.body == b"<html><body><p>hi</p></body></html>"


@pytest.mark.slow
def test_https_response_certificate(tls_server):
    # Scrapy 2's Response.certificate: the server's, on every response of a connection
    # (curl reports the chain only on the transfer that made it)
    with MultiDriver() as d:
        first = fetch_one(d, Request(f"{tls_server.url}/html")).response
        second = fetch_one(d, Request(f"{tls_server.url}/html")).response
    assert d._certificates  # one connection, reused
    for response in (first, second):
        cert = response.certificate
        assert cert is not None
        assert cert.getSubject().commonName == b"127.0.0.1"
        assert cert.getIssuer().commonName == b"127.0.0.1"
        assert cert.dumpPEM() == tls_server.cert.read_bytes()
        assert response.protocol == "HTTP/1.1"
        assert str(response.ip_address) == "127.0.0.1"
    assert second.certificate is first.certificate
    der = ssl.PEM_cert_to_DER_cert(tls_server.cert.read_text())
    digest = hashlib.md5(der).hexdigest().upper()
    assert first.certificate.digest() == ":".join(
        digest[i:i + 2] for i in range(0, 32, 2)).encode()
    assert repr(first.certificate) == "<Certificate Subject=b'127.0.0.1' Issuer=b'127.0.0.1'>"


# -- driving ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_many_concurrent_transfers_each_returned_once(driver, server):
    requests = [Request(f"{server.url}/bytes/{1000 + i}") for i in range(50)]
    for request in requests:
        driver.add(request, timeout_s=30)
    assert driver.active == 50
    seen = []
    while driver.active:
        seen.extend(driver.perform(5.0))
    assert sorted(id(r.request) for r in seen) == sorted(id(r) for r in requests)
    for result in seen:
        size = int(result.request.url.rsplit("/", 1)[1])
        assert result.response.body == pattern(size)
    assert driver.perform(0) == []


def test_connections_are_reused(driver):
    srv = _start(_Server())
    try:
        url = f"http://127.0.0.1:{srv.server_address[1]}/html"
        for _ in range(20):
            assert fetch_one(driver, Request(url)).response.status == 200
        assert srv.requests_seen == 20
        assert srv.connections == 1
    finally:
        _stop(srv)


def test_wake_fd_ends_perform_without_results(driver, server):
    request = Request(f"{server.url}/stall")
    driver.add(request, timeout_s=60)
    r, w = os.pipe()
    try:
        os.write(w, b"x")
        assert driver.perform(30, wake_fd=r) == []  # would block 30 s without the wake
        assert driver.active == 1
        assert os.read(r, 10) == b"x"  # not drained by the driver
        assert driver.abort_all() == [request]
        assert driver.active == 0
        os.write(w, b"y")
        assert driver.perform(30, wake_fd=r) == []  # no transfers: waits on the fd only
    finally:
        driver.perform(0)  # unregister before closing the pipe
        os.close(r)
        os.close(w)


def test_idle_perform_waits_wait_s():
    with MultiDriver() as d:
        start = time.monotonic()
        assert d.perform(0.05) == []
        assert time.monotonic() - start >= 0.045
        assert d.perform(0) == []


def test_a_previous_wake_fd_is_unregistered(driver):
    r, w = os.pipe()
    try:
        os.write(w, b"x")
        assert driver.perform(30, wake_fd=r) == []
        start = time.monotonic()
        assert driver.perform(0.05) == []  # the still-readable old fd must not wake it
        assert time.monotonic() - start >= 0.045
    finally:
        os.close(r)
        os.close(w)


def test_abort_all_returns_requests_in_order_and_driver_stays_usable(driver, server):
    requests = [Request(f"{server.url}/stall?{i}") for i in range(3)]
    for request in requests:
        driver.add(request, timeout_s=60)
    driver.perform(0)
    assert driver.abort_all() == requests
    assert driver.active == 0
    assert driver.perform(0) == []
    assert fetch_one(driver, Request(f"{server.url}/html")).response.status == 200


def test_close_is_idempotent_and_final(server):
    d = MultiDriver()
    d.add(Request(f"{server.url}/stall"), timeout_s=60)
    d.close()
    d.close()
    with pytest.raises(RuntimeError, match="close"):
        d.add(Request(f"{server.url}/html"), timeout_s=1)
    with pytest.raises(RuntimeError, match="close"):
        d.perform(0)


# -- other schemes -------------------------------------------------------------------------


def test_file_url(driver, tmp_path):
    page = tmp_path / "page.html"
    page.write_bytes(b"<html>local</html>")
    result = fetch_one(driver, Request(page.as_uri()))
    assert isinstance(result.response, HtmlResponse)
    assert result.response.status == 200
    assert result.response.body == b"<html>local</html>"
    assert not result.response.headers


def test_missing_file(driver, tmp_path):
    result = fetch_one(driver, Request((tmp_path / "missing.txt").as_uri()))
    assert isinstance(result.error, DownloadError)
    assert result.error.curl_code == 37


@pytest.mark.slow
def test_ftp(driver, ftp_server):
    ok, missing = fetch(
        driver,
        Request(f"{ftp_server}/data.bin", meta={"ftp_user": "user", "ftp_password": "pw"}),
        Request(f"{ftp_server}/nope.txt", meta={"ftp_user": "user", "ftp_password": "pw"}),
    )
    assert ok.response.status == 200
    assert ok.response.body == pattern(5000)
    assert ok.response.headers["Size"] == b"5000"
    assert missing.response.status == 404


# -- caller mistakes -------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["gopher://example.com/", "s3://bucket/key", "data:,hello"])
def test_unsupported_scheme(driver, url):
    with pytest.raises(NotSupported, match="Unsupported URL scheme"):
        driver.add(Request(url), timeout_s=1)
    assert driver.active == 0


def test_supported_schemes():
    assert SUPPORTED_SCHEMES == {"http", "https", "ftp", "file"}


@pytest.mark.parametrize("headers", [
    {"X-Bad": "a\r\nX-Injected: 1"}, {"X-Bad": "a\nX-Injected: 1"},
    {"X-Bad": "a\rX-Injected: 1"}, {"X-Bad": "\n"}, {"X-Bad\r\nX-Injected": "1"},
])
def test_header_injection_is_refused(driver, server, headers):
    request = Request(f"{server.url}/echo", headers=headers)
    with pytest.raises(ValueError, match="CR or LF"):
        driver.add(request, timeout_s=1)
    assert driver.active == 0
    assert echo(fetch_one(driver, Request(f"{server.url}/echo")))["method"] == "GET"


@pytest.mark.parametrize(
    "kw", [{"timeout_s": -1}, {"timeout_s": 1, "maxsize_bytes": -1}, {"timeout_s": float("nan")}]
)
def test_bad_arguments(driver, server, kw):
    with pytest.raises(ValueError):
        driver.add(Request(f"{server.url}/html"), **kw)


@pytest.mark.parametrize("wait_s", [-1, float("nan")])
def test_bad_wait(driver, wait_s):
    with pytest.raises(ValueError, match="wait_s"):
        driver.perform(wait_s)


# -- TLS and FTP servers -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory):
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("the openssl command is needed to make a test certificate")
    tmp = tmp_path_factory.mktemp("tls")
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2"]
        + ["-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    srv = _Server(ssl_context=context)
    srv.cert, srv.key = cert, key
    _start(srv)
    srv.url = f"https://127.0.0.1:{srv.server_address[1]}"
    yield srv
    _stop(srv)


@pytest.fixture(scope="module")
def ftp_server(tmp_path_factory):
    pyftpdlib = pytest.importorskip("pyftpdlib")
    del pyftpdlib
    from pyftpdlib.authorizers import DummyAuthorizer
    from pyftpdlib.handlers import FTPHandler
    from pyftpdlib.servers import ThreadedFTPServer

    root = tmp_path_factory.mktemp("ftp")
    (root / "data.bin").write_bytes(pattern(5000))
    authorizer = DummyAuthorizer()
    authorizer.add_user("user", "pw", str(root), perm="elr")
    handler = type("Handler", (FTPHandler,), {"authorizer": authorizer})
    logging.getLogger("pyftpdlib").setLevel(logging.WARNING)
    srv = ThreadedFTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=srv.serve_forever, kwargs={"timeout": 0.5}, daemon=True)
    thread.start()
    yield f"ftp://127.0.0.1:{srv.address[1]}"
    srv.close_all()


# -- header helpers (pure) -------------------------------------------------------------------


@pytest.mark.parametrize(
    "lines, pairs",
    [
        (
            [b"HTTP/1.1 200 OK\r\n", b"Content-Type: text/html\r\n", b"X-A:  1 \r\n", b"\r\n"],
            [(b"Content-Type", b"text/html"), (b"X-A", b"1")],
        ),
        (  # interim and proxy blocks before the final one are dropped
            [b"HTTP/1.1 200 Connection established\r\n", b"Via: p\r\n", b"\r\n"]
            + [b"HTTP/1.1 100 Continue\r\n", b"\r\n"]
            + [b"HTTP/1.1 404 Not Found\r\n", b"X-Final: 1\r\n", b"\r\n"],
            [(b"X-Final", b"1")],
        ),
        (  # obsolete line folding is joined; lines without a colon are skipped
            [b"HTTP/1.1 200 OK\r\n", b"X-Long: a\r\n", b"\t b\r\n", b"garbage\r\n", b"\r\n"],
            [(b"X-Long", b"a b")],
        ),
        (  # trailers after the blank line are not headers
            [b"HTTP/1.1 200 OK\r\n", b"A: 1\r\n", b"\r\n", b"Trailer-X: 2\r\n", b"\r\n"],
            [(b"A", b"1")],
        ),
        ([b"HTTP/1.1 200 OK\n", b"A:1\n", b"\n"], [(b"A", b"1")]),  # bare LF
        ([b"HTTP/1.1 200 OK\r\n", b"Empty:\r\n", b"\r\n"], [(b"Empty", b"")]),
        ([], []),
    ],
)
def test_parse_header_lines(lines, pairs):
    from crawlfw.core.transport.curl_transfer import _content_length, _parse_header_lines

    assert _parse_header_lines(lines) == pairs
    assert _content_length(lines) == -1


_HEADER_LINE_PIECES = [
    b"HTTP/1.1 200 OK\r\n", b"HTTP/1.1 100 Continue\r\n", b"HTTP/1.0 301 Moved: here\n",
    b"HTTP/2 404\r\n", b"\r\n", b"\n", b"", b"Server: nginx\r\n", b"server:  Other \r\n",
    b"SET-COOKIE: a=1\r\n", b"set-cookie: b=2; Path=/\r\n", b"Set-Cookie:\r\n",
    b"Content-Type: text/html; charset=\xe9\r\n", b"X-Bom: \xef\xbb\xbfv\r\n",
    b"x-odd: \x0bv\x0c\r\n", b"X-Nul: a\x00b\r\n", b"X-Cr: a\rb\r\n", b" folded \r\n",
    b"\tfolded: too\n", b"garbage\r\n", b"HTTP/2: not a field\r\n", b" : x\r\n",
    b"\xc3\xa9t\xc3\xa9: utf-8 name\r\n", b"A:b:c\r\n", b"Trailer: t\r\n", b"k:v",
    b"X-Space \x0c: v\r\n",
]


def _header_cases():
    import random

    rnd = random.Random(20)
    cases = [[b"HTTP/1.1 200 OK\r\n", b"Server: nginx/1.22.1\r\n",
              b"Content-Type: text/html\r\n", b"Content-Length: 9000\r\n", b"\r\n"]]
    for _ in range(3000):
        cases.append([rnd.choice(_HEADER_LINE_PIECES) for _ in range(rnd.randint(0, 9))])
    return cases


def test_headers_from_lines_is_the_general_parse():
    # the one-pass parse of the downloader equals _parse_header_lines + from_raw_pairs
    from crawlfw.core.transport.curl_transfer import _headers_from_lines, _parse_header_lines

    for lines in _header_cases():
        ours = _headers_from_lines(lines)
        general = Headers.from_raw_pairs(_parse_header_lines(lines))
        assert type(ours) is Headers and ours.encoding == general.encoding == "utf-8"
        assert list(dict.items(ours)) == list(dict.items(general)), lines


@pytest.mark.parametrize(
    "lines, length",
    [
        ([b"HTTP/1.1 200 OK\r\n", b"content-LENGTH: 42\r\n", b"\r\n"], 42),
        ([b"HTTP/1.1 200 OK\r\n", b"Content-Length: x\r\n", b"\r\n"], -1),
        (
            [
                b"HTTP/1.1 100 Continue\r\n",
                b"Content-Length: 5\r\n",
                b"\r\n",
                b"HTTP/1.1 200 OK\r\n",
            ],
            -1,
        ),
    ],
)
def test_content_length(lines, length):
    from crawlfw.core.transport.curl_transfer import _content_length

    assert _content_length(lines) == length


# -- settings mapped to curl options (DOWNLOADER_CLIENT_TLS_METHOD, DOWNLOAD_HANDLERS,
# DNSCACHE_ENABLED) ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def tls12_server(tls_server, tmp_path_factory):
    """A second TLS server on the same certificate that speaks TLS 1.2 only."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = context.maximum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(tls_server.cert, tls_server.key)
    srv = _Server(ssl_context=context)
    _start(srv)
    srv.url = f"https://127.0.0.1:{srv.server_address[1]}"
    yield srv
    _stop(srv)


@pytest.mark.slow
@pytest.mark.parametrize("tls_method, ok", [
    ("TLS", True), ("TLSv1.2", True), ("TLSv1.3", False),
])
def test_tls_method_sets_the_protocol_version(tls12_server, tls_method, ok):
    with MultiDriver(tls_method=tls_method) as d:
        result = fetch_one(d, Request(f"{tls12_server.url}/html"))
    if ok:
        assert result.response.status == 200
    else:
        assert isinstance(result.error, TLSError), result


def test_unknown_tls_method_names_the_setting():
    with pytest.raises(ValueError, match="DOWNLOADER_CLIENT_TLS_METHOD must be one of TLS, "):
        MultiDriver(tls_method="SSLv2")


def test_disabled_scheme_is_not_supported(server):
    with MultiDriver(schemes={"https"}) as d:
        with pytest.raises(NotSupported, match=r"'http' \(disabled in DOWNLOAD_HANDLERS\)"):
            d.add(Request(f"{server.url}/html"), timeout_s=10)


def test_driver_options_from_settings():
    from crawlfw.core.transport.curl_options import driver_options
    from crawlfw.settings import Settings

    options = driver_options(Settings())
    # the connection cache is sized from CONCURRENT_REQUESTS (16), among the downloaders
    assert options == {"maxconnects": 16, "dns_cache_timeout_s": 60, "dns_timeout_s": 60.0,
                       "tls_method": "TLS", "schemes": frozenset(SUPPORTED_SCHEMES | {"s3"})}
    assert driver_options(Settings({"CONCURRENT_REQUESTS": 100, "DOWNLOADER_ACTORS": 3}))[
        "maxconnects"] == 34
    options = driver_options(Settings({
        "DNSCACHE_ENABLED": False, "DOWNLOADER_CLIENT_TLS_METHOD": "TLSv1.2",
        "DOWNLOAD_HANDLERS": {"ftp": None, "file": None}, "CURL_MAXCONNECTS": 7}))
    assert options["dns_cache_timeout_s"] == 0
    assert options["tls_method"] == "TLSv1.2" and options["maxconnects"] == 7
    assert options["schemes"] == {"http", "https", "s3"}
    with pytest.raises(ValueError, match="DOWNLOADER_CLIENT_TLS_METHOD"):
        driver_options(Settings({"DOWNLOADER_CLIENT_TLS_METHOD": "TLSv9"}))
    assert driver_options(Settings({"DNS_TIMEOUT": 2.5}))["dns_timeout_s"] == 2.5
    with pytest.raises(ValueError, match="DNS_TIMEOUT must be a number of seconds >= 0"):
        driver_options(Settings({"DNS_TIMEOUT": -1}))
