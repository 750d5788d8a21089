"""docs/continuous-crawling.md stays true to the code (issue 32): every ``REVISIT_*``
setting is in its table with the default crawlfw has, every ``revisit/*`` stat the
crawl sets is in its stats table, the adaptive rule's factors are the code's, and every
Python example compiles."""

import ast
import math
import re
from pathlib import Path

import pytest

from crawlfw.core.frontier import revisit
from crawlfw.settings import default_settings

REPO = Path(__file__).resolve().parents[1]
DOC = (REPO / "docs" / "continuous-crawling.md").read_text()


def _table_rows():
    return {m.group(1): m.group(2) for m in
            re.finditer(r"^\| `([A-Za-z_/]+)` \| ([^|]*) \|", DOC, re.M)}


@pytest.mark.parametrize("name", sorted(n for n in dir(default_settings)
                                        if n.startswith("REVISIT_")))
def test_every_revisit_setting_is_in_the_table_with_its_default(name):
    rows = _table_rows()
    assert name in rows, f"{name} is missing from docs/continuous-crawling.md's table"
    assert rows[name].strip() == f"`{getattr(default_settings, name)!r}`"


def test_every_revisit_stat_the_crawl_sets_is_in_the_stats_table():
    sources = "".join((REPO / "crawlfw" / "actors" / f).read_text()
                      for f in ("scheduler.py", "_revisits.py", "spider_runner.py"))
    literal = set(re.findall(r'"(revisit/[a-z_]+)"', sources))
    assert 'f"revisit/{outcome}"' in sources  # the outcomes, counted by name
    stats = literal | {f"revisit/{outcome}" for outcome in revisit.OUTCOMES}
    assert len(stats) >= 12
    rows = _table_rows()
    assert sorted(s for s in stats if s not in rows) == []


def test_the_adaptive_rule_is_the_codes():
    assert revisit.adapt_interval(100.0, True, 1, 1000) == pytest.approx(
        100 * (1 - revisit.ADAPTIVE_DEC_RATE))
    assert f"multiplied by **{1 - revisit.ADAPTIVE_DEC_RATE:g}**" in DOC
    assert f"by **{1 + revisit.ADAPTIVE_INC_RATE:g}**" in DOC
    # the worked figures: days to the cap and to the floor with the defaults
    day, cap, floor = (default_settings.REVISIT_INTERVAL, default_settings.REVISIT_INTERVAL_MAX,
                       default_settings.REVISIT_INTERVAL_MIN)
    n_up, interval = 0, day
    while interval < cap:
        interval, n_up = revisit.adapt_interval(interval, False, floor, cap), n_up + 1
    n_down, interval = 0, day
    while interval > floor:
        interval, n_down = revisit.adapt_interval(interval, True, floor, cap), n_down + 1
    assert f"cap in {n_up} unchanged visits" in DOC
    assert f"floor in {n_down}" in DOC
    # a steady change rate: the interval holds when p * ln(0.8) + (1 - p) * ln(1.4) = 0
    grow = math.log(1 + revisit.ADAPTIVE_INC_RATE)
    p = grow / (grow - math.log(1 - revisit.ADAPTIVE_DEC_RATE))
    assert f"about {round(p * 100, -1):.0f} % of visits find a change" in DOC
    assert f"roughly {p:.1f} of its change period (~{round(24 * p)} hours" in DOC


def test_every_python_example_compiles():
    blocks = re.findall(r"```python\n(.*?)```", DOC, re.S)
    assert len(blocks) >= 4
    for block in blocks:
        # a block may be a method shown alone (indented): wrap it in a class
        source = block if not block.startswith(" ") else "class _Shown:\n" + block
        ast.parse(source)
