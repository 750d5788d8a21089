"""``crawlfw check [-l] [-v] [spider ...]``: run the spider contracts (``@url``,
``@returns``, ``@scrapes``... in callback docstrings) of a project's spiders.

Each spider with contracts is crawled with one request per tested callback (built by
:class:`crawlfw.contracts.ContractsManager`). Each failed contract is reported on
standard error in the format of Scrapy's documentation, a line ``[FAILED]
<spider>:<callback>`` and a line ``>>> <reason>`` (``[ERROR]`` when the callback or the
download raised; ``-v`` adds the traceback); then "Ran N contracts in Xs" and OK or
FAILED (failures=n, errors=n). Exit status 1 when a contract fails or errs.
"""

import builtins
import sys
import threading
import time
from collections import defaultdict
from unittest import TextTestResult as _TextTestResult
from unittest import TextTestRunner

import argh

from crawlfw.commands import ScrapyCommand, command, fail, get_spider_loader, load_spider
from crawlfw.commands._command import delegate
from crawlfw.spiders import Spider
from crawlfw.utils.conf import build_component_list
from crawlfw.utils.misc import load_object


class TextTestResult(_TextTestResult):
    """A unittest result that callbacks of several crawls may update at once (each
    crawl's spider runner is its own thread), with Scrapy's contract summary."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._lock = threading.RLock()
        self._exceptions = {}  # test case -> the exception of its failure or error

    def _locked(name):  # noqa: N805 - builds methods below
        def method(self, *args, **kwargs):
            with self._lock:
                return getattr(_TextTestResult, name)(self, *args, **kwargs)

        method.__name__ = name
        return method

    startTest = _locked("startTest")  # noqa: N815 - unittest's names
    stopTest = _locked("stopTest")  # noqa: N815
    addSuccess = _locked("addSuccess")  # noqa: N815
    _addFailure = _locked("addFailure")
    _addError = _locked("addError")
    del _locked

    def addFailure(self, test, err):  # noqa: N802 - unittest's names
        self._exceptions[test] = err[1]
        self._addFailure(test, err)

    def addError(self, test, err):  # noqa: N802
        self._exceptions[test] = err[1]
        self._addError(test, err)

    def printErrors(self):  # noqa: N802
        """Write each failure as ``[FAILED] <spider>:<callback>`` and ``>>> <reason>``
        (``[ERROR]`` for errors), with the traceback too when verbose."""
        if self.dots or self.showAll:
            self.stream.writeln()
        for flavour, items in (("FAILED", self.failures), ("ERROR", self.errors)):
            for test, formatted in items:
                spider = getattr(test, "spider_name", None)
                callback = getattr(test, "callback_name", None)
                where = f"{spider}:{callback}" if spider else str(test)
                self.stream.writeln(f"[{flavour}] {where}")
                self.stream.writeln(f">>> {self._reason(test, formatted)}")
                if self.showAll:
                    self.stream.writeln(f"{test} failed:\n{formatted}")
                self.stream.writeln()
        self.stream.flush()

    def _reason(self, test, formatted) -> str:
        from crawlfw.exceptions import ContractFail

        exc = self._exceptions.get(test)
        if isinstance(exc, ContractFail):
            return str(exc)
        if exc is not None:
            return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return formatted.strip().splitlines()[-1]

    def printSummary(self, start, stop):  # noqa: N802
        """Write "Ran N contract(s) in X.XXXs" and "OK" or "FAILED (failures=n, errors=n)"."""
        write = self.stream.write
        writeln = self.stream.writeln
        run = self.testsRun
        plural = "s" if run != 1 else ""
        writeln(self.separator2)
        writeln(f"Ran {run} contract{plural} in {stop - start:.3f}s")
        writeln()
        infos = []
        if not self.wasSuccessful():
            write("FAILED")
            failed, errored = map(len, (self.failures, self.errors))
            if failed:
                infos.append(f"failures={failed}")
            if errored:
                infos.append(f"errors={errored}")
        else:
            write("OK")
        if infos:
            writeln(" ({})".format(", ".join(infos)))
        else:
            write("\n")


def _contract_requests(conman, spider, result):
    """The contract requests of every tested callback of ``spider``."""
    if hasattr(conman, "from_spider"):
        requests = conman.from_spider(spider, result)
    else:
        requests = [conman.from_method(getattr(spider, name), result)
                    for name in conman.tested_methods_from_spidercls(type(spider))]
    return [r for r in requests if r is not None]


@argh.arg("spiders", nargs="*", metavar="spider", help="spiders to check (default: all)")
@argh.arg("-l", "--list", help="only list contracts, without checking them")
@argh.arg("-v", "--verbose", help="print contract tests for all spiders")
@command(requires_project=True, default_settings={"LOG_ENABLED": False},
         help="Check spider contracts")
def check(*spiders, settings=None, list=False, verbose=False):  # noqa: A002
    """Run (or with ``-l`` list) the contracts of ``spiders`` (default: every spider).

    Exit status 1 when a contract failed or errored, or a spider does not exist.
    """
    run_check(settings, spiders, list_only=list, verbose=verbose)


def run_check(settings, spiders, *, list_only=False, verbose=False, process=None) -> None:
    """Run (or with ``list_only`` list) the contracts of ``spiders`` (names; empty: all).

    Args:
        settings: the :class:`~crawlfw.settings.Settings`.
        spiders: spider names (sequence of str).
        list_only: print the contracts instead of checking them.
        verbose: list spiders without contracts too / a verbose unittest report.
        process: the :class:`~crawlfw.crawler.CrawlerProcess` to crawl with (default: a
            new one for ``settings``).

    Raises:
        SystemExit: 1 when a contract failed or errored, or a spider does not exist.
    """
    try:
        from crawlfw.contracts import ContractsManager
    except ImportError as e:
        fail(f"Spider contracts are not available: {e}")
    contracts = build_component_list(settings.getwithbase("SPIDER_CONTRACTS"))
    conman = ContractsManager(load_object(c) for c in contracts)
    runner = TextTestRunner(verbosity=2 if verbose else 1)
    result = TextTestResult(runner.stream, runner.descriptions, runner.verbosity)

    from crawlfw.crawler import CrawlerProcess

    if process is None and not list_only:
        process = CrawlerProcess(settings)
    loader = process.spider_loader if process is not None else get_spider_loader(settings)
    contract_reqs = defaultdict(builtins.list)
    try:
        for spidername in spiders or sorted(loader.list()):
            spidercls = load_spider(loader, spidername)
            tested_methods = conman.tested_methods_from_spidercls(spidercls)
            if list_only:
                contract_reqs[spidercls.name].extend(tested_methods)
            elif tested_methods:
                spidercls.start_requests = (
                    lambda s: _contract_requests(conman, s, result)
                )
                # the default start() iterates them: a spider's own start() must not win
                spidercls.start = Spider.start
                process.crawl(spidercls)
    except BaseException:
        if process is not None:
            process.shutdown()
        raise

    if list_only:
        for spider, methods in sorted(contract_reqs.items()):
            if not methods and not verbose:
                continue
            print(spider)
            for method in sorted(methods):
                print(f"  * {method}")
        return
    start = time.time()
    process.start()
    stop = time.time()
    result.printErrors()
    result.printSummary(start, stop)
    if not result.wasSuccessful():
        sys.exit(1)


class Command(ScrapyCommand):
    """``crawlfw check [options] <spider>`` (Scrapy 1.2's check command)."""

    requires_project = True
    default_settings = {"LOG_ENABLED": False}

    def syntax(self):
        return "[options] <spider>"

    def short_desc(self):
        return "Check spider contracts"

    def add_options(self, parser):
        ScrapyCommand.add_options(self, parser)
        parser.add_option("-l", "--list", dest="list", action="store_true",
                          help="only list contracts, without checking them")
        parser.add_option("-v", "--verbose", dest="verbose", default=False,
                          action="store_true", help="print contract tests for all spiders")

    def run(self, args, opts):
        delegate(self, run_check, self.settings, args, list_only=opts.list,
                 verbose=opts.verbose, process=self.crawler_process)
