import logging
import sys
import warnings

import pytest

import crawlfw
from crawlfw.exceptions import CrawlfwDeprecationWarning
from crawlfw.settings import Settings
from crawlfw.utils import log as logmod
from crawlfw.utils.log import (
    LogCounterHandler,
    StreamLogger,
    TopLevelFormatter,
    configure_logging,
    failure_to_exc_info,
    get_handler,
    log_crawlfw_info,
    log_scrapy_info,
    logformatter_adapter,
)
from tests.extensions._crawler import get_crawler


@pytest.fixture
def restore_logging():
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    crawlfw_level = logging.getLogger("crawlfw").level
    stdout = sys.stdout
    yield
    sys.stdout = stdout
    logging.captureWarnings(False)
    for h in list(root.handlers):
        if h not in handlers:
            root.removeHandler(h)
            h.close()
    root.setLevel(level)
    logging.getLogger("crawlfw").setLevel(crawlfw_level)
    logmod._root_handler = None


def _raise_and_catch():
    try:
        raise ValueError("boom")
    except ValueError as e:
        return e, sys.exc_info()


def test_failure_to_exc_info():
    exc, info = _raise_and_catch()
    assert failure_to_exc_info(exc) == (ValueError, exc, exc.__traceback__)
    assert failure_to_exc_info(info) is info
    assert failure_to_exc_info("nope") is None
    assert failure_to_exc_info(None) is None


def _record(name, msg="m"):
    return logging.LogRecord(name, logging.INFO, __file__, 1, msg, None, None)


@pytest.mark.parametrize("name,expected", [
    ("crawlfw.core.engine", "crawlfw"),
    ("crawlfw", "crawlfw"),
    ("crawlfwother.x", "crawlfwother.x"),
    ("other.crawlfw.x", "other.crawlfw.x"),
    ("test", "test"),
])
def test_top_level_formatter(name, expected):
    f = TopLevelFormatter(["crawlfw"])
    record = _record(name)
    assert f.filter(record) is True
    assert record.name == expected


def test_get_handler_file(tmp_path):
    path = tmp_path / "out.log"
    handler = get_handler(Settings({"LOG_FILE": str(path), "LOG_LEVEL": "INFO",
                                    "LOG_FORMAT": "%(levelname)s|%(name)s|%(message)s",
                                    "LOG_ENCODING": "latin-1"}))
    try:
        assert isinstance(handler, logging.FileHandler)
        assert handler.level == logging.INFO
        for level, msg in ((logging.DEBUG, "hidden"), (logging.INFO, "caf\xe9")):
            record = _record("crawlfw.core.engine", msg)
            record.levelno, record.levelname = level, logging.getLevelName(level)
            if record.levelno >= handler.level:
                handler.handle(record)
    finally:
        handler.close()
    assert path.read_bytes() == "INFO|crawlfw.core.engine|caf\xe9\n".encode("latin-1")


def test_get_handler_stream_and_null():
    assert type(get_handler(Settings())) is logging.StreamHandler
    assert type(get_handler(Settings({"LOG_ENABLED": False}))) is logging.NullHandler


def test_get_handler_short_names():
    plain = get_handler(Settings())
    assert not any(isinstance(f, TopLevelFormatter) for f in plain.filters)
    short = get_handler(Settings({"LOG_SHORT_NAMES": True}))
    assert any(isinstance(f, TopLevelFormatter) for f in short.filters)


def test_get_handler_formatter_and_date():
    handler = get_handler(Settings({"LOG_FORMAT": "%(asctime)s %(message)s",
                                    "LOG_DATEFORMAT": "%Y"}))
    record = _record("x", "hello")
    assert handler.format(record).split(" ")[0].isdigit()
    assert handler.format(record).endswith(" hello")


def test_get_handler_bad_level():
    with pytest.raises(ValueError, match="LOG_LEVEL"):
        get_handler(Settings({"LOG_LEVEL": "LOUD"}))


def test_configure_logging_installs_one_root_handler(restore_logging):
    root = logging.getLogger()
    before = list(root.handlers)
    configure_logging({"LOG_LEVEL": "WARNING"})
    added = [h for h in root.handlers if h not in before]
    assert len(added) == 1 and added[0].level == logging.WARNING
    assert root.level == logging.NOTSET
    assert logging.getLogger("crawlfw").level == logging.DEBUG
    configure_logging(Settings({"LOG_LEVEL": "ERROR"}))
    added = [h for h in root.handlers if h not in before]
    assert len(added) == 1 and added[0].level == logging.ERROR


def test_configure_logging_without_root_handler(restore_logging):
    root = logging.getLogger()
    before = list(root.handlers)
    configure_logging(install_root_handler=False)
    assert root.handlers == before


def test_configure_logging_log_stdout(restore_logging, caplog):
    configure_logging({"LOG_STDOUT": True}, install_root_handler=False)
    assert isinstance(sys.stdout, StreamLogger)
    with caplog.at_level(logging.INFO, logger="stdout"):
        print("printed line")
    assert ("stdout", logging.INFO, "printed line") in caplog.record_tuples


def test_stream_logger_splits_lines(caplog):
    sl = StreamLogger(logging.getLogger("streamtest"), logging.WARNING)
    with caplog.at_level(logging.WARNING, logger="streamtest"):
        sl.write("one\ntwo  \n\n")
        sl.flush()
    assert caplog.messages == ["one", "two"]


def test_log_counter_handler():
    crawler = get_crawler()
    handler = LogCounterHandler(crawler, level=logging.INFO)
    logger = logging.getLogger("test.logcounter")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        logger.debug("not counted: below handler level")
        logger.info("i1")
        logger.info("i2")
        logger.error("e1")
    finally:
        logger.removeHandler(handler)
    assert crawler.stats.get_value("log_count/DEBUG") is None
    assert crawler.stats.get_value("log_count/INFO") == 2
    assert crawler.stats.get_value("log_count/ERROR") == 1


def test_log_crawlfw_info(caplog):
    with caplog.at_level(logging.INFO, logger="crawlfw.utils.log"):
        log_crawlfw_info(Settings({"BOT_NAME": "mybot", "CONCURRENT_REQUESTS": 4}))
    assert caplog.messages == [
        f"crawlfw {crawlfw.__version__} started (bot: mybot)",
        "Overridden settings: {'BOT_NAME': 'mybot', 'CONCURRENT_REQUESTS': 4}",
    ]
    assert log_scrapy_info is log_crawlfw_info


@pytest.mark.parametrize("logkws,expected", [
    ({"level": logging.DEBUG, "msg": "m %(a)s", "args": {"a": 1}},
     (logging.DEBUG, "m %(a)s", {"a": 1})),
    ({"level": logging.WARNING, "msg": "plain", "args": {}},
     (logging.WARNING, "plain", {"level": logging.WARNING, "msg": "plain", "args": {}})),
    ({"level": logging.INFO, "msg": "t %s", "args": ("x",)}, (logging.INFO, "t %s", ("x",))),
])
def test_logformatter_adapter(logkws, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert logformatter_adapter(logkws) == expected


def test_logformatter_adapter_deprecated_keys():
    with pytest.warns(CrawlfwDeprecationWarning) as record:
        level, msg, args = logformatter_adapter({"format": "old %(x)s", "x": 1})
    assert level == logging.INFO and msg == "old %(x)s" and args["x"] == 1
    assert len(record) == 2  # missing keys + `format` deprecated


def test_failure_to_exc_info_accepts_a_failure():
    from crawlfw.utils.failure import Failure

    try:
        raise KeyError("k")
    except KeyError as e:
        exc = e
    assert failure_to_exc_info(Failure(exc)) == (KeyError, exc, exc.__traceback__)


class _Seen(logging.Handler):
    def __init__(self, level):
        super().__init__(level)
        self.records = []

    def emit(self, record):
        self.records.append(record)


def _isolated(name, handler_levels, child_level=logging.NOTSET, child_filter=False):
    """logger ``name``.child under ``name`` (which does not propagate to root)."""
    parent = logging.getLogger(name)
    parent.propagate = False
    parent.setLevel(logging.DEBUG)
    for h in list(parent.handlers):
        parent.removeHandler(h)
    handlers = [_Seen(level) for level in handler_levels]
    for h in handlers:
        parent.addHandler(h)
    child = logging.getLogger(name + ".child")
    child.setLevel(child_level)
    for f in list(child.filters):
        child.removeFilter(f)
    if child_filter:
        child.addFilter(lambda record: True)
    return child, handlers


@pytest.mark.parametrize(
    "handler_levels, child_level, child_filter, wanted",
    [
        ([logging.INFO], logging.NOTSET, False, False),
        ([logging.INFO, logging.WARNING], logging.NOTSET, False, False),
        ([logging.INFO, logging.DEBUG], logging.NOTSET, False, True),
        ([logging.NOTSET], logging.NOTSET, False, True),
        ([logging.DEBUG], logging.INFO, False, False),
        ([logging.INFO], logging.NOTSET, True, True),
        ([], logging.NOTSET, False, False),  # lastResort: WARNING
    ],
)
def test_debug_wanted_matches_what_logging_does(handler_levels, child_level, child_filter, wanted):
    from crawlfw.utils.log import _debug_wanted

    child, handlers = _isolated(f"dw{len(handler_levels)}{child_level}{child_filter}",
                                handler_levels, child_level, child_filter)
    assert _debug_wanted(child) is wanted
    child.debug("x")
    if handlers:
        assert any(h.records for h in handlers) == (wanted and not child_filter)


def test_debug_wanted_without_last_resort(monkeypatch):
    from crawlfw.utils.log import _debug_wanted

    child, _ = _isolated("dwlr", [])
    monkeypatch.setattr(logging, "lastResort", None)
    assert _debug_wanted(child) is True  # logging would warn "No handlers could be found"


@pytest.mark.parametrize("settings, shown", [
    ({}, True),  # the stderr handler at DEBUG
    ({"LOG_LEVEL": "ERROR"}, True),
    ({"LOG_LEVEL": "CRITICAL"}, False),  # -L CRITICAL
    ({"LOG_ENABLED": False}, False),  # --nolog
    ({"LOG_FILE": "{tmp}/crawl.log"}, False),
])
def test_shown_on_stderr(restore_logging, tmp_path, monkeypatch, settings, shown):
    # the handler writes to the sys.stderr of when it was made: pytest's capture here
    settings = {k: v.format(tmp=tmp_path) if isinstance(v, str) else v
                for k, v in settings.items()}
    configure_logging(Settings(settings))
    assert logmod.shown_on_stderr(logging.ERROR, "crawlfw.commands.crawl") is shown
    assert logmod.shown_on_stderr(logging.CRITICAL) is (shown or "LOG_LEVEL" in settings)


def test_shown_on_stderr_without_handlers(restore_logging):
    # nothing configured: logging.lastResort writes WARNING and above to stderr
    handlers = list(logging.root.handlers)
    for handler in handlers:
        logging.root.removeHandler(handler)
    try:
        assert logmod.shown_on_stderr(logging.ERROR)
        assert not logmod.shown_on_stderr(logging.INFO)
    finally:
        for handler in handlers:
            logging.root.addHandler(handler)
