"""The interactive crawlfw shell (Scrapy 1.2's ``scrapy.shell``).

The shell drives a LIVE crawl: :func:`start_shell_crawler` starts a crawl whose spider
never closes on its own (a ``spider_idle`` handler raises ``DontCloseSpider``) and runs
none of the spider's start requests. :meth:`Shell.fetch` hands a request to that crawl's
engine actor (``crawler.engine.crawl(request)``, a ``crawl`` message) with a callback and
an errback that pass the outcome back to the shell's thread through a queue; so a page
fetched in the shell went through the scheduler, every downloader and spider middleware,
and the same downloader actors as a page of a real crawl.

:class:`AttachedShell` (``crawlfw shell --attach``) is the console on a crawl running in
another process, through its control endpoint (:mod:`crawlfw.control`).

Use :func:`inspect_response` inside a spider callback to open a shell on the response
being parsed (the crawl waits meanwhile; ``fetch()`` is not offered there, since the
spider thread that would run its callback is the one the shell blocks).
"""

import ast
import logging
import os
import queue
import signal
import threading
import warnings

from crawlfw import signals
from crawlfw.crawler import Crawler
from crawlfw.exceptions import CrawlfwDeprecationWarning, DontCloseSpider, IgnoreRequest
from crawlfw.http import Request, Response
from crawlfw.item import BaseItem
from crawlfw.settings import Settings
from crawlfw.spiders import Spider
from crawlfw.utils.conf import get_config
from crawlfw.utils.console import DEFAULT_PYTHON_SHELLS, start_python_console
from crawlfw.utils.datatypes import SequenceExclude
from crawlfw.utils.misc import load_object
from crawlfw.utils.response import open_in_browser

logger = logging.getLogger(__name__)

__all__ = ["Shell", "AttachedShell", "RemoteStats", "CodeError", "inspect_response",
           "start_shell_crawler"]

#: Seconds between checks, while waiting for a fetch, that the crawl is still running.
_POLL_S = 0.5


class CodeError(Exception):
    """The code given to :class:`Shell` (``crawlfw shell -c``) raised; see ``__cause__``."""


class Shell:
    """An interactive console bound to a crawler, with ``fetch``/``view``/``shelp``.

    Console variables: ``crawlfw`` (the module), ``crawler``, ``spider``, ``settings``,
    ``request``, ``response``, ``item`` (a new ``DEFAULT_ITEM_CLASS``), ``sel``
    (deprecated, the response's selector), and the shortcuts ``fetch(url_or_request)``
    (only when the shell runs on the main thread against a running crawl), ``view(response)``
    and ``shelp()``.

    Args:
        crawler: a :class:`~crawlfw.crawler.Crawler`; for ``fetch`` it must be crawling
            (see :func:`start_shell_crawler`).
        update_vars: called with the variables dict after each update, to add your own.
        code: with code, :meth:`start` runs it instead of opening a console and prints
            the value of its last line when that is an expression.
        loop: Scrapy 2.13's event loop of the crawl, which its ``fetch`` schedules on;
            accepted and kept (``_loop``), not needed: ``fetch`` messages the crawl's
            engine from any thread.
    """

    relevant_classes = (Crawler, Spider, Request, Response, BaseItem, Settings)

    def __init__(self, crawler, update_vars=None, code=None, loop=None):
        self._loop = loop
        self.crawler = crawler
        self.update_vars = update_vars or (lambda x: None)
        self.item_class = load_object(crawler.settings["DEFAULT_ITEM_CLASS"])
        self.spider = None
        # fetch() waits for the engine: not possible from the spider runner's thread
        # (inspect_response), whose callback would deliver the response.
        self.inthread = threading.current_thread() is threading.main_thread()
        self.code = code
        self.vars = {}

    @property
    def fetch_available(self) -> bool:
        """Whether ``fetch()`` can be used here (Scrapy 2.13's name of
        :attr:`inthread`): the shell runs on the main thread, not on the spider
        runner's (``inspect_response``), whose callback would deliver the response."""
        return self.inthread

    def start(self, url=None, request=None, response=None, spider=None, redirect=True):
        """Fill the variables (fetching ``url`` or ``request`` first) and run the console,
        or the ``code`` given to the constructor.

        Args:
            url: a URL (str) to fetch first.
            request: a Request to fetch first.
            response: a Response to show (``inspect_response``), with its request.
            spider: the spider for the variables (default: the crawler's).
            redirect: follow 3xx redirects when fetching ``url``.

        Raises:
            CodeError: ``code`` raised (the exception is its ``__cause__``).
            Exception: what fetching ``url``/``request`` raised (download errors).
        """
        if threading.current_thread() is threading.main_thread():
            # Ctrl-C interrupts a command or a fetch() wait, never the crawl.
            signal.signal(signal.SIGINT, signal.default_int_handler)
        if url:
            self.fetch(url, spider, redirect=redirect)
        elif request:
            self.fetch(request, spider)
        elif response:
            request = response.request
            self.populate_vars(response, request, spider)
        else:
            self.populate_vars(spider=spider)
        if self.code:
            try:
                result = self.run_code(self.code)
            except Exception as e:
                raise CodeError(f"-c code raised {type(e).__name__}: {e}") from e
            if result is not _NOTHING:
                print(result)
            return
        banner = self.vars.pop("banner", "")
        start_python_console(self.vars, shells=self._shells(), banner=banner)

    def run_code(self, code):
        """Run ``code`` (statements separated by newlines or ``;``) with the shell's
        variables as globals.

        Returns:
            The value of the last statement when it is an expression, else a marker
            that :meth:`start` does not print.
        """
        tree = ast.parse(code, "<shell -c>", "exec")
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, "<shell -c>", "exec"), self.vars)
        if last is None:
            return _NOTHING
        return eval(compile(ast.Expression(last.value), "<shell -c>", "eval"), self.vars)

    @staticmethod
    def _shells():
        """Console names to try: ``CRAWLFW_PYTHON_SHELL`` (comma-separated), else the
        ``shell`` option of the ``[settings]`` section of crawlfw.cfg, else every known
        console; ``python`` always comes last."""
        env = os.environ.get("CRAWLFW_PYTHON_SHELL")
        if env:
            return [s.strip().lower() for s in env.split(",")] + ["python"]
        cfg = get_config()
        if cfg.has_option("settings", "shell"):
            return [cfg.get("settings", "shell").strip().lower(), "python"]
        return list(DEFAULT_PYTHON_SHELLS) + ["python"]

    # --- fetching through the live engine ----------------------------------------------

    def fetch(self, request_or_url, spider=None, redirect=True, timeout_s=None, **kwargs):
        """Download a URL or Request through the running crawl and update the variables.

        Args:
            request_or_url: a Request (sent as is) or a URL/path (str; ``file://`` is
                guessed for paths), fetched with ``dont_filter=True``.
            spider: ignored (the crawl's spider is used), kept for Scrapy compatibility.
            redirect: for a URL, follow 3xx redirects (else a 3xx is the response).
            timeout_s: seconds to wait at most (default: until the request completes,
                fails or the crawl stops).
            **kwargs: ``Request`` arguments for a URL (``method``, ``headers``...).

        Raises:
            RuntimeError: no running crawl to fetch with, or the crawl stopped.
            TimeoutError: ``timeout_s`` passed without an outcome.
            Exception: the download error (``DNSLookupError``, ``ConnectionRefusedError``,
                ...); an ``IgnoreRequest`` leaves ``response`` None instead.
        """
        if isinstance(request_or_url, Request):
            request = request_or_url
        else:
            from w3lib.url import any_to_uri

            url = any_to_uri(request_or_url)
            request = Request(url, dont_filter=True, **kwargs)
            if redirect:
                request.meta["handle_httpstatus_list"] = SequenceExclude(range(300, 400))
            else:
                request.meta["handle_httpstatus_all"] = True
        response = None
        try:
            response = self._fetch_via_engine(request, timeout_s)
        except IgnoreRequest:
            pass
        self.populate_vars(response, request, spider)

    def _fetch_via_engine(self, request, timeout_s):
        crawler = self.crawler
        if crawler.engine is None or not crawler.crawling:
            raise RuntimeError("fetch() needs a running crawl (see start_shell_crawler)")
        outcome = queue.SimpleQueue()
        original = (request.callback, request.errback)

        def callback(response):
            request.callback, request.errback = original
            outcome.put((response, None))

        def errback(failure):
            request.callback, request.errback = original
            outcome.put((None, failure.value))

        request.callback, request.errback = callback, errback
        crawler.engine.crawl(request, self.spider)
        waited_s = 0.0
        while True:
            try:
                response, error = outcome.get(timeout=_POLL_S)
                break
            except queue.Empty:
                waited_s += _POLL_S
                if not crawler.crawling:
                    raise RuntimeError(
                        f"the crawl stopped ({crawler.finish_reason}) before {request} "
                        "was downloaded") from None
                if timeout_s is not None and waited_s >= timeout_s:
                    raise TimeoutError(f"no response for {request} within {timeout_s} s") \
                        from None
        if error is not None:
            raise error
        return response

    # --- variables ------------------------------------------------------------------

    def populate_vars(self, response=None, request=None, spider=None):
        """Set the console variables (see the class docstring) and the help banner."""
        import crawlfw

        spider = spider or self.spider or self.crawler.spider
        self.spider = spider
        self.vars["crawlfw"] = crawlfw
        self.vars["crawler"] = self.crawler
        self.vars["item"] = self.item_class()
        self.vars["settings"] = self.crawler.settings
        self.vars["spider"] = spider
        self.vars["request"] = request
        self.vars["response"] = response
        self.vars["sel"] = _SelectorProxy(response)
        if self.inthread:
            self.vars["fetch"] = self.fetch
        self.vars["view"] = open_in_browser
        self.vars["shelp"] = self.print_help
        self.update_vars(self.vars)
        if not self.code:
            self.vars["banner"] = self.get_help()

    def print_help(self):
        """Print the banner: the variables and the shortcuts."""
        print(self.get_help())

    def get_help(self) -> str:
        """Return the banner text (each line starts with ``[s]``)."""
        b = ["Available crawlfw objects:",
             "  crawlfw    crawlfw module (contains crawlfw.Request, crawlfw.Selector, etc)"]
        for k, v in sorted(self.vars.items()):
            if self._is_relevant(v):
                b.append(f"  {k:<10} {v}")
        b.append("Useful shortcuts:")
        if self.inthread:
            b.append("  fetch(url[, redirect=True]) Fetch URL and update local objects "
                     "(by default, redirects are followed)")
            b.append("  fetch(req)                  Fetch a crawlfw.Request and update local "
                     "objects ")
        b.append("  shelp()           Shell help (print this help)")
        b.append("  view(response)    View response in a browser")
        return "\n".join(f"[s] {line}" for line in b)

    def _is_relevant(self, value) -> bool:
        return isinstance(value, self.relevant_classes)


class _Nothing:
    def __repr__(self):
        return "<nothing>"


_NOTHING = _Nothing()


class _SelectorProxy:
    """``sel`` in the shell: the response's selector, with a deprecation warning."""

    def __init__(self, response):
        self._proxiedresponse = response

    def __getattr__(self, name):
        warnings.warn("\"sel\" shortcut is deprecated. Use \"response.xpath()\", "
                      "\"response.css()\" or \"response.selector\" instead",
                      category=CrawlfwDeprecationWarning, stacklevel=2)
        return getattr(self._proxiedresponse.selector, name)


def inspect_response(response, spider):
    """Open a shell on ``response`` from inside a spider callback (blocks the callback).

    Args:
        response: the Response being parsed.
        spider: the running spider (``spider.crawler`` is used).
    """
    Shell(spider.crawler).start(response=response, spider=spider)


class _ShellCrawler(Crawler):
    """A Crawler whose spider runs no start requests (the shell sends its own)."""

    def _create_spider(self, *args, **kwargs):
        spider = super()._create_spider(*args, **kwargs)
        spider.start_requests = lambda: iter(())
        return spider


def _keep_spider_open(spider):
    raise DontCloseSpider


def start_shell_crawler(runner, spidercls, *args, **kwargs):
    """Start a crawl of ``spidercls`` that stays open until it is stopped.

    The spider's start requests are not run; a ``spider_idle`` handler raises
    ``DontCloseSpider``, so the engine stays up (idle, at ~0 % CPU) and answers
    ``crawler.engine.crawl(request)`` until ``crawler.stop()``. Duplicate requests are
    not filtered (``DUPEFILTER_CLASS`` is ``BaseDupeFilter`` at ``'command'`` priority).

    Args:
        runner: a :class:`~crawlfw.crawler.CrawlerRunner` (or CrawlerProcess).
        spidercls: the Spider class.
        *args, **kwargs: spider arguments.

    Returns:
        The crawling :class:`~crawlfw.crawler.Crawler`.

    Raises:
        Exception: what starting the crawl raised (the spider's constructor...).
    """
    settings = runner.settings.copy()
    # every fetch() is downloaded, even a URL fetched before (Scrapy's shell command
    # does the same at 'command' priority; -s DUPEFILTER_CLASS=... still wins)
    settings.set("DUPEFILTER_CLASS", "crawlfw.dupefilters.BaseDupeFilter", priority="command")
    crawler = _ShellCrawler(spidercls, settings)
    crawler.signals.connect(_keep_spider_open, signals.spider_idle, weak=False)
    runner.crawl(crawler, *args, **kwargs)
    return crawler


#: Seconds an attached shell's fetch() waits (the endpoint gives up after 180 s).
_FETCH_TIMEOUT_S = 200.0


class RemoteStats:
    """``stats`` in an attached shell: the live stats of a crawl in another process.

    ``get_value(key, default=None)`` and ``get_stats()`` ask the crawl each time; the
    repr shows the current stats.

    Args:
        client: a :class:`crawlfw.core.control.protocol.ControlClient` of the crawl's process.
        crawl_id: the crawl.
    """

    def __init__(self, client, crawl_id):
        self._client = client
        self._crawl_id = crawl_id

    def get_stats(self) -> dict:
        """The crawl's stats now (values as JSON: dates are ISO 8601 strings).

        Raises:
            crawlfw.core.control.protocol.ControlError: the crawl is gone.
        """
        return _crawl_of(self._client, self._crawl_id)["stats"]

    def get_value(self, key, default=None):
        """One stat of the crawl now, or ``default``."""
        return self.get_stats().get(key, default)

    def __repr__(self):
        import pprint

        try:
            return pprint.pformat(self.get_stats())
        except Exception as e:
            return f"<stats of {self._crawl_id}: {type(e).__name__}: {e}>"


def _crawl_of(client, crawl_id) -> dict:
    from crawlfw.core.control.protocol import ControlError

    reply = client.ask({"type": "get_status"})
    for crawl in reply.get("crawls", []):
        if crawl["crawl_id"] == crawl_id:
            return crawl
    raise ControlError(f"crawl {crawl_id} is no longer running")


class AttachedShell:
    """A console on a crawl running in another process (``crawlfw shell --attach``).

    Everything goes through the crawl process's control endpoint
    (:mod:`crawlfw.control`): ``fetch(url)`` downloads through that crawl's engine
    (its scheduler, middlewares and downloaders) and sets ``request``/``response``;
    ``status()``, ``pause()``, ``resume()``, ``stop()``,
    ``schedule(url, callback=None, priority=0, dont_filter=False)`` and ``stats`` steer
    and show it; ``view(response)`` and ``shelp()`` as in the plain shell.

    Args:
        endpoint: the endpoint's ``status_reported`` reply with ``socket`` (see
            :func:`crawlfw.core.control.protocol.discover`).
        crawl: the crawl's status dict (``crawl_id``, ``spider``).
        code: with code, :meth:`start` runs it instead of opening a console.
    """

    def __init__(self, endpoint, crawl, code=None):
        from crawlfw.core.control.protocol import ControlClient

        self.client = ControlClient(endpoint["socket"])
        self.pid = endpoint["pid"]
        self.crawl_id = crawl["crawl_id"]
        self.spider_name = crawl["spider"]
        self.code = code
        self.vars = {}

    def _send(self, message, timeout_s=None) -> dict:
        return self.client.ask({**message, "crawl_id": self.crawl_id}, timeout_s=timeout_s)

    def status(self) -> dict:
        """The crawl's status dict now (see ``crawlfw status --json``)."""
        return _crawl_of(self.client, self.crawl_id)

    def pause(self) -> None:
        """Pause the crawl (no new download starts)."""
        self._send({"type": "pause_crawl"})
        print(f"paused {self.crawl_id}")

    def resume(self) -> None:
        """Resume the crawl."""
        self._send({"type": "resume_crawl"})
        print(f"resumed {self.crawl_id}")

    def stop(self) -> None:
        """Close the crawl gracefully (``finish_reason`` ``shutdown``)."""
        self._send({"type": "stop_crawl", "reason": "shutdown"})
        print(f"stopping {self.crawl_id}")

    def schedule(self, url, callback=None, priority=0, dont_filter=False) -> None:
        """Add ``url`` to the crawl, parsed by the spider method named ``callback``.

        Raises:
            crawlfw.core.control.protocol.ControlError: bad URL, or no such spider method.
        """
        self._send({"type": "schedule_request", "url": str(url), "callback": callback,
                    "priority": int(priority), "dont_filter": bool(dont_filter)})
        print(f"scheduled {url}")

    def fetch(self, request_or_url, redirect=True, **kwargs):
        """Download a URL or Request through the crawl's engine; set ``request`` and
        ``response``.

        Raises:
            crawlfw.core.control.protocol.ControlError: the download failed (the message names
                the error) or the crawl is gone.
        """
        import base64

        from w3lib.url import any_to_uri

        from crawlfw.http import Headers
        from crawlfw.responsetypes import responsetypes

        if isinstance(request_or_url, Request):
            request = request_or_url
        else:
            request = Request(any_to_uri(request_or_url), dont_filter=True, **kwargs)
        headers = {k.decode("latin-1"): [v.decode("latin-1") for v in vs]
                   for k, vs in request.headers.items()}
        reply = self._send({"type": "download_request", "url": request.url,
                            "method": request.method, "headers": headers,
                            "body": request.body.decode("utf-8", "replace"),
                            "redirect": bool(redirect)}, timeout_s=_FETCH_TIMEOUT_S)
        body = base64.b64decode(reply["body_base64"])
        response_headers = Headers(reply["headers"])
        cls = responsetypes.from_args(headers=response_headers, url=reply["url"], body=body)
        response = cls(url=reply["url"], status=reply["status"], headers=response_headers,
                       body=body, request=request)
        self.vars["request"] = request
        self.vars["response"] = response
        return None

    def populate_vars(self) -> dict:
        """Fill the console variables and return them."""
        import crawlfw

        self.vars.update({
            "crawlfw": crawlfw, "crawl_id": self.crawl_id, "pid": self.pid,
            "request": None, "response": None, "stats": RemoteStats(self.client, self.crawl_id),
            "fetch": self.fetch, "status": self.status, "pause": self.pause,
            "resume": self.resume, "stop": self.stop, "schedule": self.schedule,
            "view": open_in_browser, "shelp": self.print_help,
        })
        return self.vars

    def get_help(self) -> str:
        """The banner text (each line starts with ``[s]``)."""
        lines = [
            f"Attached to crawl {self.crawl_id} (spider {self.spider_name}, pid {self.pid})",
            "Available objects:",
            "  crawlfw    crawlfw module",
            "  stats      the crawl's live stats (stats.get_value(key))",
            "  request, response   set by fetch()",
            "Useful shortcuts:",
            "  fetch(url[, redirect=True])  Fetch URL through the crawl's engine",
            "  status()                     The crawl's live figures",
            "  pause() / resume()           Pause / resume the crawl",
            "  schedule(url, callback=None, priority=0, dont_filter=False)",
            "                               Add a request to the crawl",
            "  stop()                       Close the crawl gracefully",
            "  shelp()                      Shell help (print this help)",
            "  view(response)               View response in a browser",
        ]
        return "\n".join(f"[s] {line}" for line in lines)

    def print_help(self):
        """Print the banner."""
        print(self.get_help())

    def start(self, url=None):
        """Fetch ``url`` first when given, then run the console (or the code).

        Raises:
            CodeError: the code raised (the exception is its ``__cause__``).
        """
        self.populate_vars()
        if url:
            self.fetch(url)
        if self.code:
            runner = Shell.__new__(Shell)
            runner.vars = self.vars
            try:
                result = runner.run_code(self.code)
            except Exception as e:
                raise CodeError(f"-c code raised {type(e).__name__}: {e}") from e
            if result is not _NOTHING:
                print(result)
            return
        start_python_console(self.vars, shells=Shell._shells(), banner=self.get_help())
