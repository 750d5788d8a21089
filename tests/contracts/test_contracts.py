"""Spider contracts: docstring parsing, the manager's requests, the default contracts'
checks and messages, and a real ``crawlfw check``-style crawl of the quotes copy."""

import textwrap
import unittest

import pytest

from crawlfw.contracts import Contract, ContractsManager
from crawlfw.contracts.default import (
    BodyContract,
    CallbackKeywordArgumentsContract,
    CookieContract,
    MetadataContract,
    MethodContract,
    ReturnsContract,
    ScrapesContract,
    UrlContract,
)
from crawlfw.contracts.default import HeaderContract as DefaultHeaderContract
from crawlfw.exceptions import ContractFail
from crawlfw.http import FormRequest, HtmlResponse, Request
from crawlfw.item import Field, Item
from crawlfw.spiders import Spider
from crawlfw.utils.failure import Failure
from crawlfw.utils.misc import load_object
from tests.support.crawl import run_crawl

DEFAULT = [UrlContract, ReturnsContract, ScrapesContract]


class QuoteItem(Item):
    text = Field()
    author = Field()


def make_spider(doc, output=None, name="demo", raises=None):
    """A spider class whose method ``cb`` has docstring ``doc`` and returns ``output``."""

    def cb(self, response, **kwargs):
        if raises is not None:
            raise raises
        self.calls.append((response.url, kwargs))
        return output() if callable(output) else output

    cb.__doc__ = doc
    return type("DemoSpider", (Spider,), {"name": name, "cb": cb, "calls": []})


def run_method(doc, output=None, contracts=DEFAULT, raises=None):
    results = unittest.TestResult()
    spider = make_spider(doc, output, raises=raises)()
    request = ContractsManager(contracts).from_method(spider.cb, results)
    assert request is not None
    response = HtmlResponse(request.url, body=b"<html></html>", request=request)
    assert request.callback(response, **request.cb_kwargs) is None  # output only checked
    return results, spider, request


def _messages(pairs):
    return [(str(case), tb.strip().splitlines()[-1]) for case, tb in pairs]


# --- the default contracts' checks ---------------------------------------------------

ITEM = {"text": "t", "author": "a"}
REQ = Request("http://a/next")


@pytest.mark.parametrize(
    "lines, output, failures",
    [
        ("@returns items 1", [ITEM], []),
        ("@returns item", [QuoteItem(text="t")], []),
        ("@returns items 1", [], [
            ("@returns post-hook", "crawlfw.exceptions.ContractFail: Returned 0 items, expected 1..inf")]),
        ("@returns items 2 2", [ITEM, REQ], [
            ("@returns post-hook", "crawlfw.exceptions.ContractFail: Returned 1 items, expected 2")]),
        ("@returns items 0 1", [ITEM, ITEM], [
            ("@returns post-hook", "crawlfw.exceptions.ContractFail: Returned 2 items, expected 0..1")]),
        ("@returns requests 0 0", [REQ], [
            ("@returns post-hook", "crawlfw.exceptions.ContractFail: Returned 1 requests, expected 0")]),
        ("@returns request 1 1", [QuoteItem()], [
            ("@returns post-hook", "crawlfw.exceptions.ContractFail: Returned 0 request, expected 1")]),
        ("@returns requests 1 5", [REQ, FormRequest("http://a/f"), ITEM], []),
        ("@returns items 1\n@returns requests 1", [ITEM], [
            ("@returns post-hook", "crawlfw.exceptions.ContractFail: Returned 0 requests, expected 1..inf")]),
        ("@scrapes text author", [ITEM, QuoteItem(text="x", author="y"), REQ], []),
        ("@scrapes text author", [ITEM, {"text": "only"}], [
            ("@scrapes post-hook", "crawlfw.exceptions.ContractFail: 'author' field is missing")]),
        ("@scrapes author", [QuoteItem(text="declared, not set")], [
            ("@scrapes post-hook", "crawlfw.exceptions.ContractFail: 'author' field is missing")]),
        ("@scrapes anything", [REQ], []),  # no items: nothing to check
        ("@returns items 1 1\n@scrapes text", lambda: (x for x in [ITEM]), []),  # a generator
    ],
)
def test_default_contracts(lines, output, failures):
    doc = "Demo.\n\n@url http://a/page\n" + lines + "\n"
    results, spider, _ = run_method(doc, output)
    assert results.errors == []
    assert _messages(results.failures) == [
        (f"[demo] cb ({hook})", message) for hook, message in failures
    ]
    assert spider.calls == [("http://a/page", {})]
    assert results.testsRun == lines.count("@")  # one test per hook, passed or not


def test_contract_fail_is_an_assertion_error():
    assert issubclass(ContractFail, AssertionError)


def test_callback_exception_is_an_error():
    results, _, _ = run_method("@url http://a/\n@returns items 1", raises=KeyError("boom"))
    assert results.failures == []
    assert _messages(results.errors) == [("[demo] cb (callback)", "KeyError: 'boom'")]


def test_errback_records_download_failures():
    results = unittest.TestResult()
    spider = make_spider("@url http://a/missing\n@returns items 1")()
    request = ContractsManager(DEFAULT).from_method(spider.cb, results)
    try:
        raise ConnectionRefusedError("refused")
    except ConnectionRefusedError as exc:
        request.errback(Failure(exc, request))
    assert _messages(results.errors) == [("[demo] cb (errback)", "ConnectionRefusedError: refused")]


# --- custom contracts: hooks and request arguments ------------------------------------


class StatusContract(Contract):
    """``@status N``: the response status is N (pre_process)."""

    name = "status"

    def pre_process(self, response):
        if response.status != int(self.args[0]):
            raise ContractFail(f"status {response.status} != {self.args[0]}")


class BrokenContract(Contract):
    name = "broken"

    def pre_process(self, response):
        raise RuntimeError("bug in contract")


class HeaderContract(Contract):
    name = "header"

    def adjust_request_args(self, args):
        args["headers"] = {self.args[0]: self.args[1]}
        return args


@pytest.mark.parametrize(
    "line, failures, errors",
    [
        ("@status 200", [], []),
        ("@status 404", [("[demo] cb (@status pre-hook)", "crawlfw.exceptions.ContractFail: status 200 != 404")], []),
        ("@broken", [], [("[demo] cb (@broken pre-hook)", "RuntimeError: bug in contract")]),
    ],
)
def test_pre_process_hooks(line, failures, errors):
    results, spider, _ = run_method(f"@url http://a/\n{line}", [ITEM],
                                    contracts=DEFAULT + [StatusContract, BrokenContract])
    assert _messages(results.failures) == failures
    assert _messages(results.errors) == errors
    assert len(spider.calls) == 1  # the callback runs whatever the pre-hook said


def test_hook_order():
    order = []

    class A(Contract):
        name = "a"

        def pre_process(self, response):
            order.append("pre a")

        def post_process(self, output):
            order.append("post a")

    class B(A):
        name = "b"

        def pre_process(self, response):
            order.append("pre b")

        def post_process(self, output):
            order.append("post b")

    run_method("@url http://a/\n@a\n@b", [ITEM], contracts=DEFAULT + [A, B])
    assert order == ["pre a", "pre b", "post a", "post b"]


def test_adjust_request_args_and_later_contracts():
    results, spider, request = run_method(
        '@url http://a/x\n@header X-Test yes\n@cb_kwargs {"page": 2, "tag": "love"}\n'
        '@meta {"dont_redirect": true}',
        [ITEM],
        contracts=DEFAULT + [HeaderContract, CallbackKeywordArgumentsContract, MetadataContract],
    )
    assert request.headers.get("X-Test") == b"yes"
    assert request.meta == {"dont_redirect": True}
    assert request.dont_filter is True
    assert spider.calls == [("http://a/x", {"page": 2, "tag": "love"})]
    assert results.wasSuccessful()


def test_request_cls():
    class PostContract(Contract):
        name = "post"
        request_cls = FormRequest

        def adjust_request_args(self, args):
            args["formdata"] = {"q": self.args[0]}
            return args

    _, _, request = run_method("@url http://a/search\n@post crawl", [], contracts=DEFAULT + [PostContract])
    assert isinstance(request, FormRequest)
    assert request.method == "POST" and request.body == b"q=crawl"


# --- the manager -----------------------------------------------------------------------


class DocSpider(Spider):
    name = "docs"

    def parse(self, response):
        """Parse the index.

        @url http://a/
        @returns requests 1
        """

    def no_contracts(self, response):
        """Just a docstring mentioning someone@example.com."""

    def no_doc(self, response):
        pass

    def without_url(self, response):
        """@returns items 1"""

    def unknown(self, response):
        """
        @url http://a/u
        @nosuch 1 2
        """

    def bad_returns(self, response):
        """
        @url http://a/b
        @returns things
        """


class ChildSpider(DocSpider):
    name = "child"

    def extra(self, response):
        """@url http://a/extra"""


def test_tested_methods_from_spidercls():
    conman = ContractsManager(DEFAULT)
    assert conman.tested_methods_from_spidercls(DocSpider) == [
        "bad_returns", "parse", "unknown", "without_url"]
    assert conman.tested_methods_from_spidercls(ChildSpider) == [
        "bad_returns", "extra", "parse", "unknown", "without_url"]


@pytest.mark.parametrize(
    "doc, expected",
    [
        ("@url http://a/", [("url", ("http://a/",))]),
        ("  @returns   items  1   10  ", [("returns", ("items", "1", "10"))]),
        ("text\n@url http://a/\nmore text @scrapes x\n\t@scrapes a b c",
         [("url", ("http://a/",)), ("scrapes", ("a", "b", "c"))]),
        ("@url", [("url", ("",))]),
        ("@ url http://a/\n@-x", []),
        ("", []),
    ],
)
def test_extract_contracts(doc, expected):
    spider = make_spider(doc)()
    contracts = ContractsManager(DEFAULT).extract_contracts(spider.cb)
    assert [(c.name, c.args) for c in contracts] == expected


@pytest.mark.parametrize(
    "doc, message",
    [
        ("@url http://a/\n@nosuch 1", r"Unknown contract @nosuch in the docstring of DemoSpider\.cb "
                                      r"\(known: @returns, @scrapes, @url\)"),
        ("@returns", "@returns takes 1 to 3 arguments"),
        ("@returns items 1 2 3", "@returns takes 1 to 3 arguments"),
        ("@returns things", "unknown kind 'things'"),
        ("@returns items one", "bounds must be integers"),
    ],
)
def test_extract_contracts_errors(doc, message):
    spider = make_spider(doc)()
    with pytest.raises(ValueError, match=message):
        ContractsManager(DEFAULT).extract_contracts(spider.cb)


def test_from_method_without_request():
    results = unittest.TestResult()
    conman = ContractsManager(DEFAULT)
    spider = DocSpider()
    assert conman.from_method(spider.no_contracts, results) is None
    assert conman.from_method(spider.without_url, results) is None  # no url: no request


def test_from_spider():
    results = unittest.TestResult()
    conman = ContractsManager(DEFAULT)
    requests = conman.from_spider(DocSpider(), results)
    assert [r.url for r in requests] == ["http://a/"]
    assert all(r.dont_filter for r in requests)
    errors = _messages(results.errors)
    assert [case for case, _ in errors] == ["[docs] bad_returns (contract)", "[docs] unknown (contract)"]
    assert "unknown kind 'things'" in errors[0][1]
    assert "Unknown contract @nosuch" in errors[1][1]


def test_manager_registers_by_name_per_instance():
    class Other(Contract):
        name = "url"

    first = ContractsManager(DEFAULT)
    second = ContractsManager([Other])
    assert first.contracts["url"] is UrlContract
    assert second.contracts == {"url": Other}


@pytest.mark.parametrize("bad", [object, UrlContract(make_spider("")().cb), type("C", (Contract,), {})])
def test_manager_rejects_non_contracts(bad):
    with pytest.raises(TypeError, match="Not a Contract subclass"):
        ContractsManager([bad])


def test_default_settings_name_these_classes():
    from crawlfw.settings import default_settings

    # @cb_kwargs and @meta are enabled by default, as in Scrapy 2 (issue 17); @method,
    # @body, @header and @cookie as in Scrapy 2.19 (issue 29): its SPIDER_CONTRACTS_BASE
    assert [load_object(p) for p in sorted(default_settings.SPIDER_CONTRACTS_BASE,
                                           key=default_settings.SPIDER_CONTRACTS_BASE.get)] == [
        UrlContract, CallbackKeywordArgumentsContract, MetadataContract, MethodContract,
        BodyContract, DefaultHeaderContract, CookieContract, ReturnsContract,
        ScrapesContract]


REQUEST_CONTRACTS = [UrlContract, MethodContract, BodyContract, DefaultHeaderContract,
                     CookieContract]


@pytest.mark.parametrize(
    "lines, method, body, headers, cookies",
    [
        ("", "GET", b"", {}, {}),
        ("@method POST", "POST", b"", {}, {}),
        ("@method put\n@body a=1&b=two  words", "PUT", b"a=1&b=two words", {}, {}),
        ("@body", "GET", b"", {}, {}),
        ("@header X-A 1\n@header X-B two words\n@header X-A again", "GET", b"",
         {b"X-A": [b"again"], b"X-B": [b"two words"]}, {}),
        ("@header X-Empty", "GET", b"", {b"X-Empty": [b""]}, {}),
        ("@cookie a 1\n@cookie b x y", "GET", b"", {}, {"a": "1", "b": "x y"}),
    ],
)
def test_scrapy_2_19_request_contracts(lines, method, body, headers, cookies):
    # Scrapy 2.19's contracts: request arguments, one line per header and cookie
    _, _, request = run_method("@url http://a/x\n" + lines, [],
                               contracts=REQUEST_CONTRACTS)
    assert (request.method, request.body) == (method.upper(), body)
    assert {k: v for k, v in request.headers.items() if k.startswith(b"X-")} == headers
    assert request.cookies == cookies


@pytest.mark.parametrize("doc, message", [
    ("@method", "@method takes one HTTP method"),
    ("@method GET POST", "@method takes one HTTP method"),
    ("@header", "@header takes a header name"),
    ("@cookie", "@cookie takes a cookie name"),
])
def test_request_contract_errors(doc, message):
    spider = make_spider("@url http://a/\n" + doc)()
    with pytest.raises(ValueError, match=message):
        ContractsManager(REQUEST_CONTRACTS).extract_contracts(spider.cb)


def test_returns_object_type_verifiers():
    # Scrapy 2.19: kinds are callables in object_type_verifiers; a subclass adds one
    assert set(ReturnsContract.object_type_verifiers) == {"request", "requests", "item",
                                                          "items"}

    class ReturnsStrings(ReturnsContract):
        object_type_verifiers = {**ReturnsContract.object_type_verifiers,
                                 "strings": lambda x: isinstance(x, str)}

    class ReturnsInts(ReturnsContract):  # Scrapy 1.2's way: a class in objects
        objects = {**ReturnsContract.objects, "ints": int}

    results, _, _ = run_method("@url http://a/\n@returns strings 2 2\n@returns items 1",
                               ["a", "b", ITEM, 3], contracts=[UrlContract, ReturnsStrings])
    assert results.wasSuccessful()
    results, _, _ = run_method("@url http://a/\n@returns ints 2", ["a", 3],
                               contracts=[UrlContract, ReturnsInts])
    assert _messages(results.failures) == [("[demo] cb (@returns post-hook)",
                                            "crawlfw.exceptions.ContractFail: "
                                            "Returned 1 ints, expected 2..inf")]


# --- a real crawl, as ``crawlfw check`` runs it ----------------------------------------


def _quotes_spider(base):
    def parse(self, response):
        for quote in response.css("div.quote"):
            yield {"text": quote.css("span.text::text").extract_first(),
                   "author": quote.css("small.author::text").extract_first()}
        next_href = response.css("li.next a::attr(href)").extract_first()
        if next_href:
            yield Request(response.urljoin(next_href))

    parse.__doc__ = textwrap.dedent(f"""\
        A quotes page.

        @url {base}/
        @returns items 10 10
        @returns requests 1 1
        @scrapes text author
        """)

    def parse_last_page(self, response):
        return parse(self, response)

    parse_last_page.__doc__ = f"@url {base}/page/10/\n@returns requests 1\n@scrapes text"

    def parse_author(self, response):
        yield {"name": response.css("h3.author-title::text").extract_first().strip()}

    parse_author.__doc__ = f"@url {base}/author/Albert-Einstein/\n@returns items 1 1\n@scrapes name born"

    def parse_missing(self, response):
        return []

    parse_missing.__doc__ = f"@url {base}/no-such-page/\n@returns items 1"

    return type("QuotesCheck", (Spider,), {
        "name": "quotes_check", "parse": parse, "parse_last_page": parse_last_page,
        "parse_author": parse_author, "parse_missing": parse_missing,
    })


def test_check_style_crawl(site_server):
    server = site_server("quotes.toscrape.com")
    spidercls = _quotes_spider(server.url)
    conman = ContractsManager(DEFAULT)
    results = unittest.TestResult()
    spidercls.start_requests = lambda s: conman.from_spider(s, results)
    assert conman.tested_methods_from_spidercls(spidercls) == [
        "parse", "parse_author", "parse_last_page", "parse_missing"]

    crawl = run_crawl(spidercls, timeout_s=60)
    assert crawl.finish_reason == "finished"
    assert crawl.items == []  # the contracts' callback returns nothing
    assert sorted(_messages(results.failures)) == [
        ("[quotes_check] parse_author (@scrapes post-hook)",
         "crawlfw.exceptions.ContractFail: 'born' field is missing"),
        ("[quotes_check] parse_last_page (@returns post-hook)",
         "crawlfw.exceptions.ContractFail: Returned 0 requests, expected 1..inf"),
    ]
    errors = _messages(results.errors)
    assert [case for case, _ in errors] == ["[quotes_check] parse_missing (errback)"]
    assert "HttpError" in errors[0][1]
    # parse: 3 post-hooks, parse_last_page and parse_author: 2 each; 2 failed
    assert results.testsRun == 7
    assert len(results.failures) == 2
