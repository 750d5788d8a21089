"""Spider contracts: test a callback from annotations in its docstring (Scrapy 1.2's
``scrapy.contracts``).

A callback's docstring lines starting with ``@`` are contracts::

    def parse(self, response):
        '''Parse a quotes page.

        @url http://quotes.toscrape.com/
        @returns items 1 10
        @returns requests 0 1
        @scrapes text author
        '''

``@name arg1 arg2 ...`` builds the contract class registered under ``name`` with the
whitespace-separated arguments. :class:`ContractsManager` turns a method's contracts
into one request (``@url`` sets its URL) whose callback runs the contracts' hooks
around the real callback and records each hook's outcome in a
``unittest.TestResult``: a failed check (:class:`crawlfw.exceptions.ContractFail`, an
``AssertionError``) is a failure, any other exception an error. An ``async def`` callback's
output is collected by coroutines the Scraper runs, so it may ``await
self.crawler.engine.download(request)``. This is what the ``crawlfw check`` command
runs::

    conman = ContractsManager(load_object(c) for c in contracts)
    spidercls.start_requests = lambda s: conman.from_spider(s, result)
"""

import inspect
import re
import sys
from functools import wraps
from inspect import getmembers
from unittest import TestCase

from crawlfw.http import Request
from crawlfw.utils.python import get_spec
from crawlfw.utils.spider import iterate_spider_output

__all__ = ["Contract", "ContractsManager"]

_CONTRACT_LINE_RE = re.compile(r"@(\w+)\s*(.*)")
_HAS_CONTRACT_RE = re.compile(r"^\s*@", re.MULTILINE)


class ContractsManager:
    """Build contract-checking requests for the callbacks of a spider.

    Args:
        contracts: an iterable of :class:`Contract` subclasses; each is registered
            under its ``name`` (a later class with the same name replaces an earlier
            one).

    Attributes:
        contracts: ``{name: Contract subclass}``.

    Raises:
        TypeError: an element is not a ``Contract`` subclass with a ``name``.
    """

    def __init__(self, contracts):
        self.contracts = {}
        for contract in contracts:
            if not (isinstance(contract, type) and issubclass(contract, Contract)
                    and isinstance(getattr(contract, "name", None), str)):
                raise TypeError(f"Not a Contract subclass with a name: {contract!r}")
            self.contracts[contract.name] = contract

    def tested_methods_from_spidercls(self, spidercls):
        """Names of the callables of ``spidercls`` (inherited ones too) whose docstring
        has a line starting with ``@``.

        Returns:
            list[str], sorted by name.
        """
        methods = []
        for key, value in getmembers(spidercls):
            if callable(value) and value.__doc__ and _HAS_CONTRACT_RE.search(value.__doc__):
                methods.append(key)
        return methods

    def extract_contracts(self, method):
        """Build the contracts of ``method``'s docstring, in docstring order.

        Args:
            method: a bound spider method.

        Returns:
            list[Contract].

        Raises:
            ValueError: a contract name is not registered (the message names the method
                and lists the known ones); a contract rejects its arguments.
        """
        contracts = []
        for line in (method.__doc__ or "").split("\n"):
            line = line.strip()
            if not line.startswith("@"):
                continue
            m = _CONTRACT_LINE_RE.match(line)
            if m is None:
                continue
            name, args = m.groups()
            try:
                contract_cls = self.contracts[name]
            except KeyError:
                raise ValueError(
                    f"Unknown contract @{name} in the docstring of {_qualname(method)} "
                    f"(known: {', '.join('@' + n for n in sorted(self.contracts)) or 'none'})"
                ) from None
            contracts.append(contract_cls(method, *re.split(r"\s+", args)))
        return contracts

    def from_spider(self, spider, results):
        """Return one request per contract-annotated method of ``spider``.

        Use it as the spider's ``start_requests``. A method whose contracts cannot be
        built is recorded as an error in ``results``; a method without ``@url`` (no
        request can be made) is left out.

        Args:
            spider: the spider instance.
            results: a ``unittest.TestResult`` the checks record into.

        Returns:
            list[Request].
        """
        requests = []
        for method in self.tested_methods_from_spidercls(type(spider)):
            bound_method = getattr(spider, method)
            try:
                request = self.from_method(bound_method, results)
            except Exception:
                case = _create_testcase(bound_method, "contract")
                results.addError(case, sys.exc_info())
                continue
            if request is not None:
                requests.append(request)
        return requests

    def from_method(self, method, results):
        """Return a request checking ``method``'s contracts, or None.

        The request gets ``callback=method`` and ``dont_filter=True`` (several methods
        may test the same URL), then each contract's ``adjust_request_args``; the
        pre-hooks run before the callback (first contract first), the post-hooks after
        it, and the final callback returns nothing (the output is only checked) and
        records exceptions as errors, as does the errback for download failures.

        Args:
            method: a bound spider method.
            results: a ``unittest.TestResult``.

        Returns:
            The ``Request`` (or the class a contract's ``request_cls`` names), or None
            when the method has no contracts or they give no URL.
        """
        contracts = self.extract_contracts(method)
        if not contracts:
            return None
        request_cls = Request
        for contract in contracts:
            if contract.request_cls is not None:
                request_cls = contract.request_cls

        args, kwargs = get_spec(request_cls.__init__)
        kwargs["dont_filter"] = True
        kwargs["callback"] = method
        for contract in contracts:
            kwargs = contract.adjust_request_args(kwargs)
        args.remove("self")
        if not set(args).issubset(set(kwargs)):
            return None
        request = request_cls(**kwargs)
        # the last pre-hook added runs first: add them in reverse so the first
        # contract's pre-hook runs first
        for contract in reversed(contracts):
            request = contract.add_pre_hook(request, results)
        for contract in contracts:
            request = contract.add_post_hook(request, results)
        self._clean_req(request, method, results)
        return request

    def _clean_req(self, request, method, results):
        """Make the callback return nothing and record errors of callback/errback."""
        cb = request.callback

        def error():
            results.addError(_create_testcase(method, "callback"), sys.exc_info())

        async def clean_async(output):
            try:
                await _collect_async(output)
            except Exception:
                error()

        @wraps(cb)
        def cb_wrapper(response, **cb_kwargs):
            try:
                output = cb(response, **cb_kwargs)
                if _is_pending(output):  # async def: the Scraper runs it (it may wait)
                    return clean_async(output)
                list(iterate_spider_output(output))
            except Exception:
                error()
            return None

        def eb_wrapper(failure):
            case = _create_testcase(method, "errback")
            results.addError(case, (failure.type, failure.value, failure.tb))

        request.callback = cb_wrapper
        request.errback = eb_wrapper


class Contract:
    """Base class of contracts.

    Subclasses set ``name`` (the ``@name`` of the docstring line) and define any of:

    * ``adjust_request_args(kwargs) -> kwargs``: change the request's constructor
      arguments (``url``, ``meta``, ``cb_kwargs``...);
    * ``pre_process(response)``: check the response before the callback runs;
    * ``post_process(output)``: check the callback's output (a list of items and
      requests).

    A check fails by raising :class:`crawlfw.exceptions.ContractFail`.

    Args:
        method: the bound spider method the contract is for.
        *args: the whitespace-separated words after ``@name`` (``('',)`` when none).

    Attributes:
        args: ``args`` as a tuple.
        request_cls: the request class to build (None: ``Request``), later Scrapy's hook.
        testcase_pre, testcase_post: the ``unittest.TestCase`` objects the hooks'
            outcomes are recorded under (shown as ``[spider] method (@name pre-hook)``).
    """

    name = None
    request_cls = None

    def __init__(self, method, *args):
        self.testcase_pre = _create_testcase(method, f"@{self.name} pre-hook")
        self.testcase_post = _create_testcase(method, f"@{self.name} post-hook")
        self.args = args

    def add_pre_hook(self, request, results):
        """Wrap ``request.callback`` to run ``pre_process`` first; return ``request``."""
        if hasattr(self, "pre_process"):
            cb = request.callback

            @wraps(cb)
            def wrapper(response, **cb_kwargs):
                _run_hook(self.pre_process, response, self.testcase_pre, results)
                output = cb(response, **cb_kwargs)
                if _is_pending(output):
                    return _collect_async(output)
                return list(iterate_spider_output(output))

            request.callback = wrapper
        return request

    def add_post_hook(self, request, results):
        """Wrap ``request.callback`` to run ``post_process`` on its output; return
        ``request``."""
        if hasattr(self, "post_process"):
            cb = request.callback

            async def post_async(output):
                output = await _collect_async(output)
                _run_hook(self.post_process, output, self.testcase_post, results)
                return output

            @wraps(cb)
            def wrapper(response, **cb_kwargs):
                output = cb(response, **cb_kwargs)
                if _is_pending(output):
                    return post_async(output)
                output = list(iterate_spider_output(output))
                _run_hook(self.post_process, output, self.testcase_post, results)
                return output

            request.callback = wrapper
        return request

    def adjust_request_args(self, args):
        """Return the request's constructor keyword arguments, changed as needed.

        Args:
            args: ``{argument name: value}`` for the request class.
        """
        return args


def _is_pending(output):
    """True for what an ``async def`` callback returns (a coroutine, an async
    generator): the hooks then wrap it in a coroutine, which the Scraper runs so that
    the callback may ``await self.crawler.engine.download(request)``, as Scrapy 2.19's
    contracts do for ``async def`` callbacks."""
    return inspect.iscoroutine(output) or inspect.isasyncgen(output)


async def _collect_async(output):
    """The list of what a coroutine returns (made iterable) or an async generator
    yields."""
    if inspect.iscoroutine(output):
        output = await output
    if inspect.isasyncgen(output):
        return [x async for x in output]
    return list(iterate_spider_output(output))


def _run_hook(hook, value, testcase, results):
    """Run ``hook(value)`` and record the outcome under ``testcase``: a success, a
    failure (``AssertionError``: ``ContractFail``) or an error."""
    try:
        results.startTest(testcase)
        hook(value)
        results.stopTest(testcase)
    except AssertionError:
        results.addFailure(testcase, sys.exc_info())
    except Exception:
        results.addError(testcase, sys.exc_info())
    else:
        results.addSuccess(testcase)


def _qualname(method):
    owner = getattr(method, "__self__", None)
    if owner is not None:
        return f"{type(owner).__name__}.{method.__name__}"
    return getattr(method, "__qualname__", repr(method))


def _create_testcase(method, desc):
    spider = method.__self__.name

    class ContractTestCase(TestCase):
        spider_name = spider
        callback_name = method.__name__
        description = desc

        def __str__(_self):  # noqa: N805
            return f"[{spider}] {method.__name__} ({desc})"

    name = f"{spider}_{method.__name__}"
    setattr(ContractTestCase, name, lambda x: x)
    return ContractTestCase(name)
