"""RetryMiddleware: which errors and statuses are retried, limits, meta, stats, logs;
and a real server answering 503 before 200."""

import logging

import pytest

from crawlfw.downloadermiddlewares.retry import RetryMiddleware
from crawlfw.exceptions import (
    ConnectError,
    ConnectionLostError,
    ConnectionRefusedError,
    DNSLookupError,
    DownloadCancelled,
    DownloadTimeoutError,
    IgnoreRequest,
    NotConfigured,
    ResponseFailed,
    TLSError,
)
from crawlfw.http import Request, Response
from tests.downloadermiddlewares._support import (
    ScriptedServer,
    close_crawler,
    fetch,
    get_crawler,
    open_spider,
)


@pytest.fixture
def setup():
    made = []

    def start(settings=None):
        crawler = get_crawler(settings)
        spider = open_spider(crawler)
        made.append((crawler, spider))
        return crawler, spider, RetryMiddleware.from_crawler(crawler)

    yield start
    for crawler, spider in made:
        close_crawler(crawler, spider)


@pytest.mark.parametrize(
    "exception, retried",
    [
        (DownloadTimeoutError("t"), True),
        (TimeoutError(), True),
        (DNSLookupError("d"), True),
        (ConnectionRefusedError("r"), True),
        (ConnectError("c"), True),
        (ConnectionLostError("l"), True),
        (ResponseFailed("f"), True),
        (OSError("io"), True),
        (TLSError("tls"), False),  # Scrapy 1.2 did not retry TLS errors
        (DownloadCancelled("maxsize"), False),
        (IgnoreRequest(), False),
        (ValueError(), False),
    ],
)
def test_exceptions(setup, exception, retried):
    crawler, spider, mw = setup()
    request = Request("http://example.com/", priority=5)
    result = mw.process_exception(request, exception, spider)
    if retried:
        assert isinstance(result, Request) and result is not request
        assert result.url == request.url
        assert result.dont_filter is True
        assert result.priority == 4  # RETRY_PRIORITY_ADJUST = -1
        assert result.meta["retry_times"] == 1
        reason = f"{type(exception).__module__}.{type(exception).__name__}"
        assert crawler.stats.get_value(f"retry/reason_count/{reason}") == 1
    else:
        assert result is None


@pytest.mark.parametrize(
    "status, retried",
    [(500, True), (502, True), (503, True), (504, True), (408, True), (404, False), (200, False)],
)
def test_statuses(setup, status, retried):
    crawler, spider, mw = setup()
    request = Request("http://example.com/")
    response = Response("http://example.com/", status=status)
    result = mw.process_response(request, response, spider)
    if retried:
        assert isinstance(result, Request)
        assert crawler.stats.get_value("retry/count") == 1
    else:
        assert result is response


def test_reason_for_status_is_the_status_line(setup):
    crawler, spider, mw = setup()
    mw.process_response(Request("http://e.com/"), Response("http://e.com/", status=503), spider)
    assert crawler.stats.get_value("retry/reason_count/503 Service Unavailable") == 1


def test_gives_up_after_retry_times(setup, caplog):
    crawler, spider, mw = setup({"RETRY_TIMES": 2})
    request = Request("http://example.com/")
    response = Response("http://example.com/", status=503)
    caplog.set_level(logging.DEBUG, logger="crawlfw.downloadermiddlewares.retry")
    first = mw.process_response(request, response, spider)
    second = mw.process_response(first, response, spider)
    assert second.meta["retry_times"] == 2
    assert mw.process_response(second, response, spider) is response
    assert crawler.stats.get_value("retry/max_reached") == 1
    assert crawler.stats.get_value("retry/count") == 2
    records = [(r.levelname, r.getMessage()) for r in caplog.records if r.name.endswith(".retry")]
    # Scrapy 2.19's lines and levels (the give-up line is an ERROR since Scrapy 2.5)
    assert records[0] == (
        "DEBUG", "Retrying <GET http://example.com/> (failed 1 times): 503 Service Unavailable"
    )
    assert records[-1] == (
        "ERROR",
        "Gave up retrying <GET http://example.com/> (failed 3 times): 503 Service Unavailable"
    )


@pytest.mark.parametrize("settings, meta, level", [
    ({}, {}, logging.ERROR),
    ({"RETRY_GIVE_UP_LOG_LEVEL": "DEBUG"}, {}, logging.DEBUG),  # Scrapy 1.2's level
    ({"RETRY_GIVE_UP_LOG_LEVEL": logging.WARNING}, {}, logging.WARNING),
    ({}, {"give_up_log_level": "info"}, logging.INFO),
    ({"RETRY_GIVE_UP_LOG_LEVEL": "DEBUG"}, {"give_up_log_level": logging.CRITICAL},
     logging.CRITICAL),
])
def test_give_up_log_level(setup, caplog, settings, meta, level):
    crawler, spider, mw = setup({"RETRY_TIMES": 0, **settings})
    request = Request("http://example.com/", meta=meta)
    caplog.set_level(logging.DEBUG, logger="crawlfw.downloadermiddlewares.retry")
    assert mw.process_exception(request, DNSLookupError("no such host"), spider) is None
    [record] = [r for r in caplog.records if r.name.endswith(".retry")]
    assert record.levelno == level
    assert record.getMessage().startswith("Gave up retrying <GET http://example.com/> "
                                          "(failed 1 times): ")


def test_a_bad_give_up_log_level_is_named(setup):
    with pytest.raises(ValueError, match="RETRY_GIVE_UP_LOG_LEVEL: 'LOUD'"):
        setup({"RETRY_GIVE_UP_LOG_LEVEL": "LOUD"})


@pytest.mark.parametrize(
    "meta, expected_retries",
    [({"dont_retry": True}, 0), ({"max_retry_times": 5}, 5), ({"max_retry_times": 0}, 0)],
)
def test_meta(setup, meta, expected_retries):
    crawler, spider, mw = setup({"RETRY_TIMES": 2})
    request = Request("http://example.com/", meta=meta)
    retries = 0
    while True:
        result = mw.process_exception(request, DNSLookupError("x"), spider)
        if result is None:
            break
        retries += 1
        request = result
    assert retries == expected_retries


def test_settings(setup):
    crawler, spider, mw = setup({"RETRY_HTTP_CODES": [404], "RETRY_PRIORITY_ADJUST": 3})
    result = mw.process_response(
        Request("http://e.com/"), Response("http://e.com/", status=404), spider
    )
    assert result.priority == 3
    assert (
        mw.process_response(
            Request("http://e.com/"), Response("http://e.com/", status=503), spider
        ).status
        == 503
    )


def test_disabled():
    crawler = get_crawler({"RETRY_ENABLED": False})
    try:
        with pytest.raises(NotConfigured):
            RetryMiddleware.from_crawler(crawler)
    finally:
        close_crawler(crawler)


def test_real_server_503_then_200(setup):
    crawler, spider, mw = setup({"RETRY_TIMES": 3})
    answers = [
        (503, [], b"busy"),
        (503, [], b"busy"),
        (200, [("Content-Type", "text/plain")], b"ok"),
    ]
    with ScriptedServer({"/page": answers}) as server:
        request = Request(server.url + "/page")
        attempts = 0
        while True:
            attempts += 1
            result = mw.process_response(request, fetch(request), spider)
            if isinstance(result, Response):
                break
            request = result
    assert (attempts, result.status, result.body) == (3, 200, b"ok")
    assert request.meta["retry_times"] == 2
    assert len(server.received) == 3


# Scrapy 2.19's get_retry_request, RETRY_EXCEPTIONS, RETRY_GIVE_UP_LOG_LEVEL (issue 29)


def test_get_retry_request_from_a_callback(setup, caplog):
    from crawlfw.downloadermiddlewares.retry import get_retry_request

    crawler, spider, _ = setup({"RETRY_TIMES": 1, "RETRY_PRIORITY_ADJUST": -3})
    caplog.set_level(logging.DEBUG, logger="crawlfw.downloadermiddlewares.retry")
    request = Request("http://example.com/", priority=5)
    retry = get_retry_request(request, spider=spider, reason="empty")
    assert retry.meta["retry_times"] == 1 and retry.dont_filter and retry.priority == 2
    assert request.meta.get("retry_times") is None  # a copy
    assert get_retry_request(retry, spider=spider, reason=ValueError("x")) is None
    assert crawler.stats.get_value("retry/count") == 1
    assert crawler.stats.get_value("retry/reason_count/empty") == 1
    assert crawler.stats.get_value("retry/max_reached") == 1
    records = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert records == [
        ("DEBUG", "Retrying <GET http://example.com/> (failed 1 times): empty"),
        ("ERROR", "Gave up retrying <GET http://example.com/> (failed 2 times): x"),
    ]


def test_get_retry_request_arguments(setup, caplog):
    from crawlfw.downloadermiddlewares.retry import get_retry_request

    crawler, spider, _ = setup()
    custom = logging.getLogger("my.retries")
    caplog.set_level(logging.DEBUG, logger="my.retries")
    request = Request("http://example.com/", meta={"max_retry_times": 0})
    assert get_retry_request(request, spider=spider, give_up_log_level="WARNING",
                             logger=custom, stats_base_key="mine") is None
    assert [(r.name, r.levelname) for r in caplog.records] == [("my.retries", "WARNING")]
    assert crawler.stats.get_value("mine/max_reached") == 1
    retry = get_retry_request(request, spider=spider, max_retry_times=1, priority_adjust=7,
                              reason=ConnectError)
    assert retry.priority == 7
    assert crawler.stats.get_value("retry/reason_count/crawlfw.exceptions.ConnectError") == 1
    with pytest.raises(ValueError, match="Invalid give-up log level, give_up_log_level: 'LOUD'"):
        get_retry_request(request, spider=spider, give_up_log_level="LOUD")


def test_give_up_level_setting_and_meta(setup, caplog):
    crawler, spider, mw = setup({"RETRY_TIMES": 0, "RETRY_GIVE_UP_LOG_LEVEL": "INFO"})
    caplog.set_level(logging.DEBUG, logger="crawlfw.downloadermiddlewares.retry")
    mw.process_exception(Request("http://e.com/a"), DNSLookupError("x"), spider)
    mw.process_exception(Request("http://e.com/b", meta={"give_up_log_level": logging.DEBUG}),
                         DNSLookupError("x"))  # Scrapy 2: spider optional
    assert [r.levelname for r in caplog.records] == ["INFO", "DEBUG"]


@pytest.mark.parametrize("exceptions, retried, not_retried", [
    (["crawlfw.exceptions.DNSLookupError"], [DNSLookupError], [ConnectError]),
    # a Scrapy project's list: Scrapy's and Twisted's names are the crawlfw classes
    (["scrapy.exceptions.CannotResolveHostError",
      "twisted.internet.error.ConnectionLost", "scrapy.exceptions.DownloadTimeoutError"],
     [DNSLookupError, ConnectionLostError, DownloadTimeoutError], [ResponseFailed]),
    ([TLSError], [TLSError], [DNSLookupError]),
])
def test_retry_exceptions_setting(setup, exceptions, retried, not_retried):
    crawler, spider, mw = setup({"RETRY_EXCEPTIONS": exceptions})
    for cls in retried:
        assert isinstance(mw.process_exception(Request("http://e.com/"), cls("x"), spider),
                          Request), cls
    for cls in not_retried:
        assert mw.process_exception(Request("http://e.com/"), cls("x"), spider) is None, cls


def test_a_bad_retry_exceptions_entry_names_itself():
    from crawlfw.settings import Settings

    with pytest.raises(ValueError, match=r"RETRY_EXCEPTIONS: cannot load 'nosuch\.Error'"):
        RetryMiddleware(Settings({"RETRY_EXCEPTIONS": ["nosuch.Error"]}))
    with pytest.raises(ValueError, match="is not an exception class"):
        RetryMiddleware(Settings({"RETRY_EXCEPTIONS": ["crawlfw.http.Request"]}))
