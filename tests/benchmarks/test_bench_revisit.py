"""bench_revisit.py and its site (benchmarks/_revisitsite.py, issue 32): the site's
rounds, validators, conditional GET and counters (answered in-process, no server), the
report's helpers, and one smoke run at a tiny size (a real crawlfw re-run against the
real server process; Scrapy is never run here). Nothing about speed is asserted."""

import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

from _revisitsite import RevisitSite, version_of  # noqa: E402
from bench_revisit import (  # noqa: E402
    agent_delta,
    caught,
    format_summary,
    main,
    read_items,
    slope_mb_per_hour,
)


def _ask(site, path, agent="a", **fields):
    head = [f"GET {path} HTTP/1.1", "Host: x", f"User-Agent: {agent}"]
    head += [f"{k.replace('_', '-')}: {v}" for k, v in fields.items()]
    raw = site.respond(b"GET", path.encode(), "\r\n".join(head).encode())
    top, _, body = raw.partition(b"\r\n\r\n")
    lines = top.decode().split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, body


def test_rounds_change_a_seeded_share_of_pages_and_never_the_root():
    site = RevisitSite(1001, seed=3, change_fraction=0.02)
    first = site.changed_in(1)
    assert len(first) == 20 and 0 not in first and first == sorted(set(first))
    assert first == RevisitSite(1001, seed=3).changed_in(1)  # deterministic
    assert first != site.changed_in(2) and site.changed_in(0) == []
    body0 = {i: _ask(site, f"/p/{i}.html" if i else "/")[2] for i in (0, *first[:3], 1000)}
    assert site.set_round(1) == 20
    for i, before in body0.items():
        after = _ask(site, f"/p/{i}.html" if i else "/")[2]
        assert version_of(after.decode()) == (1 if i in first else 0)
        assert (after != before) == (i in first)
    # rounds add up: round 2 keeps round 1's versions where round 2 did not change a page
    site.set_round(2)
    untouched = next(i for i in first if i not in site.changed_in(2))
    assert site.content_version(untouched) == 1
    assert site.set_round(0) == 0 and site.content_version(untouched) == 0  # backwards


def test_validators_and_conditional_get():
    site = RevisitSite(100, change_fraction=0.2, validator_every=2)
    status, h, body = _ask(site, "/p/2.html")
    assert status == 200 and h["ETag"] == '"p2-v0"' and "Last-Modified" in h
    assert int(h["Content-Length"]) == len(body)
    assert _ask(site, "/p/3.html")[1].keys().isdisjoint({"ETag", "Last-Modified"})
    assert _ask(site, "/p/2.html", if_none_match='"p2-v0"')[0] == 304
    assert _ask(site, "/p/2.html", if_none_match='"x", W/"p2-v0"')[0] == 304
    assert _ask(site, "/p/2.html", if_modified_since=h["Last-Modified"])[0] == 304
    # If-None-Match decides when present; a bad date is ignored; no validators: 200
    assert _ask(site, "/p/2.html", if_none_match='"x"',
                if_modified_since="Fri, 01 Jan 2100 00:00:00 GMT")[0] == 200
    assert _ask(site, "/p/2.html", if_modified_since="soon")[0] == 200
    assert _ask(site, "/p/3.html", if_none_match="*")[0] == 200
    status, h304, body = _ask(site, "/p/2.html", if_none_match="*")
    assert status == 304 and body == b"" and h304["ETag"] == '"p2-v0"'
    # a page with validators that changes in round 1 answers 200 to its old ETag
    changed = [i for i in site.changed_in(1) if i % 2 == 0][0]
    site.set_round(1)
    status, h, _ = _ask(site, f"/p/{changed}.html", if_none_match=f'"p{changed}-v0"')
    assert status == 200 and h["ETag"] == f'"p{changed}-v1"'
    assert RevisitSite(100, validator_every=0).has_validators(0) is False


def test_counters_per_user_agent_and_control_paths():
    site = RevisitSite(50)
    _ask(site, "/", agent="one")
    _ask(site, "/p/2.html", agent="one")
    _ask(site, "/p/2.html", agent="one", if_none_match='"p2-v0"')
    _ask(site, "/nothing", agent="two")
    status, _, body = _ask(site, "/__bench/stats")
    stats = json.loads(body)
    one, two = stats["agents"]["one"], stats["agents"]["two"]
    assert (one["requests"], one["not_modified"], one["statuses"]) == (3, 1, {"200": 2,
                                                                              "304": 1})
    assert one["visits"] == {"0": 48, "1": 1, "2": 1}
    assert one["body_bytes"] == len(site.body(0)) + len(site.body(2))
    assert one["bytes"] > one["body_bytes"]
    assert two["statuses"] == {"404": 1} and "__bench" not in json.dumps(stats["agents"])
    assert json.loads(_ask(site, "/__bench/round/2")[2]) == {"round": 2, "changed": 1}
    assert json.loads(_ask(site, "/__bench/nope")[2])["error"].startswith("unknown")
    assert agent_delta(stats, None, "one")["pages_seen"] == 2
    later = site.stats()
    assert agent_delta(later, stats, "one")["requests"] == 0


def test_report_helpers(tmp_path):
    site = RevisitSite(20)
    feed = tmp_path / "f.jl"
    feed.write_text("\n".join(json.dumps(x) for x in [
        {"url": "http://h/p/3.html", "v": 1, "t": 10.0},
        {"url": "http://h/p/4.html", "v": 0, "t": 11.0},
        {"url": "http://h/", "v": 0, "t": 12.0},
        {"url": "http://h/elsewhere", "v": 1, "t": 13.0}]) + "\n")
    items = read_items(feed, site)
    assert items == [(3, 1, 10.0), (4, 0, 11.0), (0, 0, 12.0)]
    assert caught(items, [3, 4], 1) == 1
    assert caught(items, [3, 4], 1, before=9.0) == 0
    assert slope_mb_per_hour([(0, 0), (1800, 1_000_000), (3600, 2_000_000)]) == \
        pytest.approx(2.0)
    assert slope_mb_per_hour([(0, 5)]) is None


@pytest.mark.slow
def test_smoke_run_reruns_only(tmp_path, capsys):
    """A real, tiny run: the server process, crawlfw re-running the crawl in 2 rounds, in
    both default mixes (half the pages with validators, then every page)."""
    status = main(["--pages", "40", "--rounds", "2", "--no-scrapy", "--modes", "none",
                   "--change", "0.1", "--keep", str(tmp_path), "--json"])
    out = capsys.readouterr().out
    result = json.loads(out.strip().splitlines()[-1])
    assert status == 0, out
    assert [m["validator_every"] for m in result["mixes"]] == [2, 1]
    assert "half the pages with validators (1 in 2)" in out
    assert "every page with validators (1 in 1)" in out
    for mix in result["mixes"]:
        runs = mix["reruns"]
        assert [(r["name"], r["round"]) for r in runs] == [("crawlfw", 1), ("crawlfw", 2)]
        for r in runs:
            assert r["requests"] == 40 and r["complete"] and r["caught"] == r["changed"] == 4
            assert r["not_modified"] == 0 and r["bytes"] > r["body_bytes"] > 40 * 5000


def test_the_summary_names_each_mix_and_its_ratios():
    def mix(every, b, cpu):
        window = {"changed": 400, "caught": 400}
        return {"validator_every": every, "result": {
            "continuous": [{"mode": "fixed", "windows": [window]}],
            "ratios": {"fixed/scrapy": {"bytes": {"median": b}, "cpu_s": {"median": cpu}}}}}

    text = format_summary([mix(2, 0.512, 0.06), mix(1, 0.028, 0.05)])
    assert ("half the pages with validators, fixed intervals, vs scrapy: bytes 0.512, CPU "
            "0.060; changed pages caught in their round 400/400") in text
    assert "every page with validators, fixed intervals, vs scrapy: bytes 0.028" in text
    with pytest.raises(SystemExit):
        main(["--validator-every", "two"])
