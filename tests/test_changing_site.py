"""tests/support/changing_site.py: the site that changes over time that the
continuous-crawl tests and others rely on (issue 32) - its versions, conditional GET
(RFC 9110 13.1/13.2.2), appearing, gone and redirected pages, the stamp line, and the
request log. The server runs in a thread of this process (fast tests)."""

import email.utils
import http.client
import threading

import pytest

from tests.support.changing_site import (
    LAST_MODIFIED_BASE,
    STAMP_RE,
    ChangingSite,
    version_of,
)


def _get(site, path, headers=None, method="GET"):
    port = int(site.url.rsplit(":", 1)[1])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path, headers=headers or {})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def _links(body):
    import re

    return re.findall(rb'href="([^"]+)"', body)


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_often_pages_change_every_version_and_static_pages_never(changing_site):
    site = changing_site(often=2, static=2, stamp=False)
    bodies = {}
    for v in range(3):
        for path in ("/often/0.html", "/static/0.html"):
            status, _, body = _get(site, path)
            assert status == 200
            bodies[path, v] = body
        site.advance()
    assert [version_of(bodies["/often/0.html", v]) for v in range(3)] == [0, 1, 2]
    assert len({bodies["/often/0.html", v] for v in range(3)}) == 3
    assert [version_of(bodies["/static/0.html", v]) for v in range(3)] == [0, 0, 0]
    assert len({bodies["/static/0.html", v] for v in range(3)}) == 1
    # deterministic from the seed: another site with the same seed serves the same bytes
    twin = ChangingSite(often=2, static=2, stamp=False)
    assert twin.body("/often/0.html", 1) == bodies["/often/0.html", 1]
    assert ChangingSite(often=2, static=2, stamp=False, seed=2).body("/often/0.html", 1) \
        != bodies["/often/0.html", 1]


def test_the_version_follows_a_controllable_clock_in_steps():
    clock = FakeClock()
    site = ChangingSite(step_s=5.0, clock=clock)
    assert site.version == 0  # not started: the clock does not count yet
    site.start()
    try:
        clock.now += 4.9
        assert site.version == 0
        clock.now += 0.1
        assert site.version == 1
        clock.now += 12
        assert site.version == 3
        assert site.advance(2) == 5  # the two add up
        status, _, body = _get(site, "/often/0.html")
        assert status == 200 and version_of(body) == 5
        assert site.log.snapshot()[-1].version == 5
    finally:
        site.stop()
    with pytest.raises(ValueError, match="only grows"):
        site.advance(-1)


@pytest.mark.parametrize("kwargs, message", [
    ({"gone_status": 200}, "gone_status"),
    ({"redirect_status": 200}, "redirect_status"),
    ({"validator_cycle": ("both", "sometimes")}, "validator_cycle"),
    ({"step_s": 0}, "step_s"),
])
def test_bad_arguments_name_what_is_at_fault(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ChangingSite(**kwargs)


def test_validators_by_kind_and_they_move_with_the_content(changing_site):
    site = changing_site(often=4, static=4)
    kinds = [site.validators(f"/often/{i}.html") for i in range(4)]
    assert kinds == ["both", "none", "etag", "last-modified"]
    _, h0, _ = _get(site, "/often/0.html")
    _, s0, _ = _get(site, "/static/0.html")
    assert h0["ETag"] == '"often-0-v0"'
    assert h0["Last-Modified"] == email.utils.formatdate(LAST_MODIFIED_BASE, usegmt=True)
    _, h1, _ = _get(site, "/often/1.html")
    assert "ETag" not in h1 and "Last-Modified" not in h1
    _, h2, _ = _get(site, "/often/2.html")
    assert "ETag" in h2 and "Last-Modified" not in h2
    _, h3, _ = _get(site, "/often/3.html")
    assert "ETag" not in h3 and "Last-Modified" in h3
    site.advance()
    _, h0b, _ = _get(site, "/often/0.html")
    _, s0b, _ = _get(site, "/static/0.html")
    assert h0b["ETag"] == '"often-0-v1"'
    assert email.utils.parsedate_to_datetime(h0b["Last-Modified"]) > \
        email.utils.parsedate_to_datetime(h0["Last-Modified"])
    assert (s0b["ETag"], s0b["Last-Modified"]) == (s0["ETag"], s0["Last-Modified"])


def test_conditional_get_answers_304_only_when_unchanged(changing_site):
    site = changing_site(often=4, static=4)
    _, h, _ = _get(site, "/static/0.html")
    etag, modified = h["ETag"], h["Last-Modified"]
    status, h304, body = _get(site, "/static/0.html", {"If-None-Match": etag})
    assert (status, body) == (304, b"")
    assert h304["ETag"] == etag and "Content-Length" not in h304
    assert _get(site, "/static/0.html", {"If-Modified-Since": modified})[0] == 304
    # the often page: unchanged within a version, changed after advance()
    _, h, _ = _get(site, "/often/0.html")
    assert _get(site, "/often/0.html", {"If-None-Match": h["ETag"]})[0] == 304
    assert _get(site, "/often/0.html", {"If-Modified-Since": h["Last-Modified"]})[0] == 304
    site.advance()
    status, h2, body = _get(site, "/often/0.html", {"If-None-Match": h["ETag"]})
    assert status == 200 and version_of(body) == 1 and h2["ETag"] != h["ETag"]
    assert _get(site, "/often/0.html", {"If-Modified-Since": h["Last-Modified"]})[0] == 200
    # HEAD is conditional too
    assert _get(site, "/often/0.html", {"If-None-Match": h2["ETag"]}, method="HEAD")[0] == 304


@pytest.mark.parametrize("headers, status", [
    # RFC 9110 13.1.2: a list, weak comparison, '*'
    ({"If-None-Match": '"x", "static-0-v0"'}, 304),
    ({"If-None-Match": 'W/"static-0-v0"'}, 304),
    ({"If-None-Match": "*"}, 304),
    ({"If-None-Match": '"static-0-v9"'}, 200),
    # 13.1.3: If-Modified-Since is ignored when If-None-Match is present
    ({"If-None-Match": '"nope"', "If-Modified-Since": "Fri, 01 Jan 2100 00:00:00 GMT"}, 200),
    ({"If-None-Match": '"static-0-v0"',
      "If-Modified-Since": "Fri, 01 Jan 1971 00:00:00 GMT"}, 304),
    # a later date: not modified since; an earlier one: modified; an invalid one: ignored
    ({"If-Modified-Since": "Fri, 01 Jan 2100 00:00:00 GMT"}, 304),
    ({"If-Modified-Since": "Fri, 01 Jan 1971 00:00:00 GMT"}, 200),
    ({"If-Modified-Since": "yesterday"}, 200),
])
def test_rfc_9110_precedence(changing_site, headers, status):
    site = changing_site(static=1)  # /static/0.html has both validators
    assert _get(site, "/static/0.html", headers)[0] == status


def test_pages_without_validators_answer_200_to_a_date_and_carry_a_stamp(changing_site):
    site = changing_site(often=2, static=2)
    a = _get(site, "/static/1.html", {"If-None-Match": "*",
                                      "If-Modified-Since": "Fri, 01 Jan 2100 00:00:00 GMT"})
    b = _get(site, "/static/1.html")
    # '*' matches any current representation, even one without an ETag (RFC 9110 13.1.2)
    assert a[0] == 304
    a = _get(site, "/static/1.html", {"If-Modified-Since": "Fri, 01 Jan 2100 00:00:00 GMT"})
    assert a[0] == b[0] == 200
    assert a[2] != b[2]  # the stamp differs on every request...
    assert STAMP_RE.sub(b"", a[2]) == STAMP_RE.sub(b"", b[2])  # ...and only it
    assert b'<p class="stamp">' in a[2]
    # pages with validators have no stamp; stamp=False takes it away everywhere
    assert b'class="stamp"' not in _get(site, "/static/0.html")[2]
    plain = changing_site(often=2, static=2, stamp=False)
    assert _get(plain, "/static/1.html")[2] == _get(plain, "/static/1.html")[2]


def test_a_page_appears_one_goes_away_and_one_redirects(changing_site):
    site = changing_site(often=1, static=1, appear_at=1, gone_at=2, gone_status=404,
                         redirect_at=3, redirect_status=308)
    index = {}
    for v in range(4):
        status, h, body = _get(site, "/")
        assert status == 200
        index[v] = (h["ETag"], set(_links(body)), version_of(body))
        site.advance()
    # /new.html: 404 then a page, linked from the index from version 1
    site2 = changing_site(appear_at=1)
    assert _get(site2, "/new.html")[0] == 404
    site2.advance()
    assert _get(site2, "/new.html")[0] == 200
    assert b"/new.html" not in index[0][1] and b"/new.html" in index[1][1]
    assert b"/gone.html" in index[1][1] and b"/gone.html" not in index[2][1]
    assert b"/moved.html" in index[2][1] and b"/moved-new.html" in index[3][1]
    assert b"/moved.html" not in index[3][1]
    # the index changes exactly when its links do
    assert [index[v][2] for v in range(4)] == [0, 1, 2, 3]
    assert set(site.paths(3)) == {"/", "/often/0.html", "/static/0.html", "/new.html",
                                  "/moved-new.html"}
    # now (version 4): gone answers 404, moved redirects with an absolute Location
    assert _get(site, "/gone.html")[0] == 404
    status, h, _ = _get(site, "/moved.html")
    assert status == 308 and h["Location"] == f"{site.url}/moved-new.html"
    status, _, body = _get(site, "/moved-new.html")
    assert status == 200 and version_of(body) == 3
    assert _get(site, "/nothing.html")[0] == 404
    assert _get(site, "/often/01.html")[0] == 404
    assert ChangingSite(gone_status=410).answer("GET", "/gone.html", {})[0] == 200
    gone = ChangingSite(gone_status=410, gone_at=0)
    assert gone.answer("GET", "/gone.html", {})[0] == 410


def test_the_expected_answers_agree_with_what_is_served(changing_site):
    """paths() / content_version() / changed() are what a test asserts against: they must
    say what the server does."""
    site = changing_site(often=3, static=3, appear_at=1, gone_at=1, redirect_at=1)
    for _ in range(3):
        for path in site.paths():
            status, _, body = _get(site, path)
            assert status == 200, path
            assert version_of(body) == site.content_version(path), path
        site.advance()
    assert site.changed("/often/0.html", 0, 1) and not site.changed("/static/0.html", 0, 5)
    assert site.changed("/", 0, 1) and not site.changed("/", 1, 2)
    assert site.changed("/gone.html", 0, 1)


def test_the_request_log_counts_requests_304s_and_headers(changing_site):
    site = changing_site(often=1, static=1)
    _, h, _ = _get(site, "/static/0.html", {"User-Agent": "t/1"})
    _get(site, "/static/0.html", {"If-None-Match": h["ETag"]})
    _get(site, "/often/0.html", method="HEAD")
    _get(site, "/absent")
    log = site.log
    assert log.requests("/static/0.html") == 2 and log.not_modified("/static/0.html") == 1
    assert log.statuses("/static/0.html") == [200, 304]
    assert log.headers("/static/0.html")[1]["If-None-Match"] == h["ETag"]
    assert log.snapshot("/static/0.html")[0].header("user-agent") == "t/1"
    assert log.counts() == {"/static/0.html": 2, "/often/0.html": 1, "/absent": 1}
    assert log.requests() == 4 and log.not_modified() == 1
    assert [x.method for x in log.snapshot("/often/0.html")] == ["HEAD"]
    # bytes: only the one 200 GET to a page and the 404's body
    size = len(site.body("/static/0.html", 0))
    assert log.bytes_sent() == size + len(b"<html><body>not found</body></html>")
    log.clear()
    assert log.requests() == 0


def test_the_log_is_safe_under_concurrent_requests(changing_site):
    site = changing_site(often=4, static=4)
    errors = []

    def worker(n):
        try:
            for k in range(25):
                _get(site, f"/often/{(n + k) % 4}.html")
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors
    assert site.log.requests() == 200
    assert sum(site.log.counts().values()) == 200
    # the stamp counter of /often/1.html (no validators) counted every answer once
    served = site.log.requests("/often/1.html")
    assert served == 50
    assert f'<p class="stamp">served {served + 1}</p>'.encode() in _get(site, "/often/1.html")[2]
