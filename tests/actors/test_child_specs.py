"""The Supervisor's table of child specs (OTP's ``child_spec``): one entry per kind of
child, walked in order by ``Supervisor._start_tree``; its start functions are plain
named functions of the crawl's tree (no lambda, no closure over a start's locals)."""

import inspect

from crawlfw.actors import _tree, supervisor
from crawlfw.actors.supervisor import CHILD_SPECS
from crawlfw.core.control._supervision import PERMANENT, TEMPORARY


def test_one_entry_per_kind_of_child_in_start_order():
    assert [spec.id for spec in CHILD_SPECS] == [
        "scheduler", "engine", "downloader", "pipeline", "custom", "exporter", "spider_runner"]
    # user code that may refuse the start (open_spider, ACTORS constructors) runs before
    # the feeds are opened, just before the Exporters start
    assert supervisor.FEEDS_OPEN_BEFORE == "exporter"


def test_restart_policies_and_shutdown_timeouts():
    table = {spec.id: (spec.restart, spec.shutdown_timeout_s) for spec in CHILD_SPECS}
    assert table == {
        # they hold what a restart would lose or repeat: their death closes the crawl
        "engine": (TEMPORARY, 60.0), "scheduler": (TEMPORARY, 60.0),
        "spider_runner": (TEMPORARY, 60.0),
        "downloader": (PERMANENT, 60.0), "custom": (PERMANENT, 60.0),
        # items on their way to the feeds: as long as it takes
        "pipeline": (PERMANENT, None), "exporter": (PERMANENT, None),
    }


def test_start_functions_are_named_module_functions_of_the_tree():
    for spec in CHILD_SPECS:
        for fn in (spec.start, spec.children):
            if fn is None:
                continue
            assert fn.__name__ != "<lambda>", spec.id
            assert fn.__qualname__ == fn.__name__, (spec.id, fn.__qualname__)  # not nested
            assert fn.__closure__ is None, spec.id
            assert getattr(_tree, fn.__name__) is fn, spec.id  # beside CHILD_SPECS
        assert list(inspect.signature(spec.start).parameters) == ["tree", "key"], spec.id


def test_shutdown_timeouts_come_from_the_table():
    assert supervisor._timeout_of("pipeline") is None
    assert supervisor._timeout_of("downloader") == 60.0
    assert supervisor._timeout_of("custom") == supervisor.STOP_TIMEOUT_S
