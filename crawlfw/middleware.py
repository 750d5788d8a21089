"""Base class of the component managers (Scrapy 1.2's ``scrapy.middleware``).

A manager builds its components from settings in one place: each dotted path
listed by :meth:`MiddlewareManager._get_mwlist_from_settings` is loaded and
instantiated with :func:`crawlfw.utils.misc.create_instance` (``from_crawler``
when a crawler is given and the class has it, else ``from_settings``, else the
constructor). A component raising :class:`~crawlfw.exceptions.NotConfigured`
is left out; any other exception is raised as it is, marked with the setting and the
class path at fault, which :func:`component_error` words in one line.

Subclasses (downloader and spider middleware managers, the extension manager,
the item pipeline manager) collect the hook methods of their components into
``self.methods`` (``{hook name: [bound methods]}``) by overriding
:meth:`MiddlewareManager._add_middleware`, and run them synchronously on the
caller's thread.
"""

from __future__ import annotations

import functools
import inspect
import logging
import pprint
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from crawlfw.exceptions import CrawlStartError, NotConfigured
from crawlfw.utils.misc import create_instance, load_object

__all__ = ["MiddlewareManager", "component_error", "component_method",
           "component_start_error", "managers_of"]

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from crawlfw.settings import BaseSettings
    from crawlfw.statscollectors import StatsCollector

_M = TypeVar("_M", bound="MiddlewareManager")


class MiddlewareManager:
    """Holds enabled components and calls their ``open_spider``/``close_spider``.

    Args:
        *middlewares: the component instances, in order.
        crawler: the :class:`~crawlfw.crawler.Crawler` (Scrapy 2.12's keyword), or None;
            kept as ``crawler``, its stats collector as ``stats``.

    Attributes:
        middlewares (tuple): the components.
        methods (collections.defaultdict[str, list]): hook name -> bound methods,
            in call order (``open_spider`` in component order, ``close_spider``
            reversed).
    """

    component_name = 'foo middleware'
    #: The setting (its ``_BASE`` merged in) the components come from, named by
    #: :func:`component_error` (None: the :attr:`component_name`).
    components_setting: str | None = None
    #: The crawl's stats collector (set by :meth:`from_settings` with a crawler), where
    #: a component's result of the wrong type is counted.
    stats: StatsCollector | None = None

    def __init__(self, *middlewares: Any, crawler: Any = None) -> None:
        self.crawler = crawler
        if crawler is not None:
            self.stats = getattr(crawler, 'stats', None)
            _record_manager(crawler, self)
        self.middlewares = middlewares
        self.methods: defaultdict[str, list[Callable[..., Any]]] = defaultdict(list)
        for mw in middlewares:
            self._add_middleware(mw)

    @classmethod
    def _get_mwlist_from_settings(cls, settings: BaseSettings) -> list[Any]:
        """Return the ordered list of component paths (or classes) to enable."""
        raise NotImplementedError

    @classmethod
    def from_settings(cls: type[_M], settings: BaseSettings, crawler: Any = None) -> _M:
        """Build the manager with every enabled component.

        Logs "Disabled <Class>: <reason>" (WARNING) for a component raising
        ``NotConfigured('reason')`` (silently skipped without a reason), then
        "Enabled <component_name>s:" with the list (INFO).

        Args:
            settings: the :class:`~crawlfw.settings.Settings`.
            crawler: the :class:`~crawlfw.crawler.Crawler`, or None.

        Returns:
            MiddlewareManager: an instance of ``cls``.

        Raises:
            ImportError, NameError, ValueError: a component path cannot be loaded.
            Exception: whatever a component's constructor raises (except
                NotConfigured).
            Either is marked with the manager's setting and the component's class
            path: :func:`component_error` gives the one line that names them.
        """
        mwlist = cls._get_mwlist_from_settings(settings)
        middlewares = []
        enabled = []
        for clspath in mwlist:
            try:
                mwcls = load_object(clspath)
            except Exception as e:
                _mark_component(e, cls, clspath, "load")
                raise
            try:
                mw = create_instance(mwcls, settings, crawler)
            except NotConfigured as e:
                if e.args:
                    clsname = clspath.split('.')[-1] if isinstance(clspath, str) \
                        else getattr(clspath, '__name__', repr(clspath))
                    logger.warning("Disabled %(clsname)s: %(eargs)s",
                                   {'clsname': clsname, 'eargs': e.args[0]},
                                   extra={'crawler': crawler})
                continue
            except Exception as e:
                _mark_component(e, cls, clspath, "build")
                raise
            middlewares.append(mw)
            enabled.append(clspath)

        logger.info("Enabled %(componentname)ss:\n%(enabledlist)s",
                    {'componentname': cls.component_name,
                     'enabledlist': pprint.pformat(enabled)},
                    extra={'crawler': crawler})
        manager = cls(*middlewares)
        manager.crawler = crawler
        manager.stats = getattr(crawler, 'stats', None)
        if crawler is not None:
            _record_manager(crawler, manager)
        return manager

    @classmethod
    def from_crawler(cls: type[_M], crawler: Any) -> _M:
        """Build the manager from ``crawler.settings``, passing ``crawler`` to components."""
        return cls.from_settings(crawler.settings, crawler)

    def _add_middleware(self, mw: Any) -> None:
        if hasattr(mw, 'open_spider'):
            self.methods['open_spider'].append(component_method(mw, 'open_spider'))
        if hasattr(mw, 'close_spider'):
            self.methods['close_spider'].insert(0, component_method(mw, 'close_spider'))

    def _count_invalid_output(self, method: Callable[..., Any]) -> None:
        """Count a result of the wrong type from a component's ``method`` in the stat
        ``invalid_output/<Component class>.<method name>`` (the caller raises the
        ERROR that names it)."""
        if self.stats is not None:
            self.stats.inc_value(f"invalid_output/{_method_name(method)}")

    def _process_parallel(self, methodname, obj, *args):
        """Call every ``methodname`` hook with ``(obj, *args)``; return their results."""
        return [method(obj, *args) for method in self.methods[methodname]]

    def _process_chain(self, methodname, obj, *args):
        """Pass ``obj`` through every ``methodname`` hook in turn; return the last result."""
        for method in self.methods[methodname]:
            obj = method(obj, *args)
        return obj

    def open_spider(self, spider):
        """Call each component's ``open_spider(spider)`` in order.

        Returns:
            list: the hooks' return values.

        Raises:
            Exception: the first exception a hook raises (later hooks are not called).
        """
        return self._process_parallel('open_spider', spider)

    def close_spider(self, spider):
        """Call each component's ``close_spider(spider)``, in reverse order.

        An exception raised by a hook is logged at ERROR and does not stop the
        other hooks (every component gets the chance to release its resources).

        Returns:
            list: each hook's return value, or the exception it raised.
        """
        results = []
        for method in self.methods['close_spider']:
            try:
                results.append(method(spider))
            except Exception as exc:
                logger.error("Error in %(method)s while closing the spider",
                             {'method': _method_name(method)},
                             exc_info=True, extra={'spider': spider})
                results.append(exc)
        return results


#: How many arguments crawlfw passes to each hook, ``spider`` (the last) included.
_HOOK_ARITY = {
    "open_spider": 1, "close_spider": 1, "process_item": 2, "process_request": 2,
    "process_response": 3, "process_exception": 3, "process_spider_input": 2,
    "process_spider_output": 3, "process_spider_exception": 3, "process_start_requests": 2,
}


def _takes_spider(method, name: str) -> bool:
    """Whether ``method`` can be passed the ``spider`` argument: it has a parameter
    named ``spider``, or ``*args``/``**kwargs``, or as many positional parameters as
    the hook has arguments (Scrapy 1.2 pipelines may call it ``spider`` by another
    name); True when its signature cannot be read."""
    try:
        params = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return True
    positional = 0
    for p in params:
        if p.name == "spider" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            return True
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            positional += 1
    arity = _HOOK_ARITY.get(name)
    return arity is not None and positional >= arity


def component_method(component, name: str, *, iterable_arg: str | None = None):
    """Return ``component.<name>`` adapted, once, to how crawlfw calls it (Scrapy 2.13's
    component conventions), decided by its signature when the component is loaded:

    - a method without a ``spider`` parameter (``process_item(self, item)``) is
      called without it (the ``spider=`` keyword, or the last positional argument, is
      dropped);
    - a coroutine method (``async def``) is run to completion on the calling thread's
      event loop (:func:`crawlfw.spiders._async.run_coroutine`): on the actor that runs
      the component;
    - an async generator method (``async def`` with ``yield``) is iterated as a plain
      iterator; its ``iterable_arg`` argument (``result`` of
      ``process_spider_output``, ``start`` of ``process_start``) is handed to it as an
      async iterable. When that iterable is the output of an async generator (an
      ``async def`` callback or ``start()``, or an async generator middleware before),
      that async generator is handed over as it is; when it is a plain one (a plain
      callback or middleware before), it is stepped one value at a time, as the async
      generator asks, outside the event loop (:func:`crawlfw.spiders._async.iterate_fed`).
      Either way nothing is collected: the results stream (Scrapy 2.13), and endless
      start requests stay lazy.

    A method needing none of that is returned as it is: calling it costs nothing more.

    Args:
        component: the middleware, pipeline or extension instance.
        name: the method's name.
        iterable_arg: for async generator methods, the keyword argument holding the
            iterable they consume.

    Returns:
        A callable taking the arguments crawlfw passes (``spider`` included). It
        keeps ``__self__`` (the component) and ``__name__`` for error messages.
    """
    from crawlfw.spiders._async import (
        async_source,
        iterate_async_generator,
        iterate_fed,
        run_coroutine,
    )

    method = getattr(component, name)
    drop_spider = not _takes_spider(method, name)
    is_coroutine = inspect.iscoroutinefunction(method)
    is_async_gen = inspect.isasyncgenfunction(method)
    if not (drop_spider or is_coroutine or is_async_gen):
        return method

    def call(args, kwargs):
        if drop_spider:
            if "spider" in kwargs:
                del kwargs["spider"]
            elif args:
                args = args[:-1]
        return method(*args, **kwargs)

    if is_async_gen:
        def adapted(*args, **kwargs):
            if iterable_arg is not None:
                source = async_source(kwargs.get(iterable_arg))
                if source is not None:  # an async generator's own output: no collecting
                    kwargs[iterable_arg] = source
                    return iterate_async_generator(call(args, kwargs))
                if kwargs.get(iterable_arg) is not None:
                    # a plain iterable: stepped outside the event loop, as asked for (it
                    # may itself step an async callback on this thread's loop)
                    def make(fed):
                        kwargs[iterable_arg] = fed
                        return call(args, kwargs)
                    return iterate_fed(make, kwargs[iterable_arg])
            return iterate_async_generator(call(args, kwargs))
    elif is_coroutine:
        def adapted(*args, **kwargs):
            return run_coroutine(call(args, kwargs))
    else:
        def adapted(*args, **kwargs):
            return call(args, kwargs)
    functools.update_wrapper(adapted, method)
    adapted.__self__ = component
    return adapted


def managers_of(crawler: Any) -> dict[str, MiddlewareManager]:
    """The component managers built for ``crawler``, by ``component_name``
    (``'downloader middleware'``, ``'spider middleware'``, ``'item pipeline'``,
    ``'extension'``): the last one built of each. The crawl's actors build theirs before
    ``spider_opened``; ``Crawler.get_downloader_middleware()`` and its siblings read them.

    Returns:
        dict: empty when none was built (or ``crawler`` keeps no attributes).
    """
    managers = getattr(crawler, "_component_managers", None)
    return managers if isinstance(managers, dict) else {}


def _record_manager(crawler: Any, manager: MiddlewareManager) -> None:
    managers = getattr(crawler, "_component_managers", None)
    if not isinstance(managers, dict):
        managers = {}
        try:
            crawler._component_managers = managers
        except AttributeError:  # a crawler-like object that keeps no attributes
            return
    managers[manager.component_name] = manager


def _method_name(method):
    owner = getattr(method, '__self__', None)
    name = getattr(method, '__name__', repr(method))
    if owner is None:
        return name
    return f"{type(owner).__name__}.{name}"


def _component_path(clspath: Any) -> str:
    """A component's dotted path as its setting gives it (a class given as such:
    ``module.QualName``)."""
    if isinstance(clspath, str):
        return clspath
    module = getattr(clspath, "__module__", None)
    name = getattr(clspath, "__qualname__", None)
    return f"{module}.{name}" if module and name else repr(clspath)


def _mark_component(exc: BaseException, manager: type[MiddlewareManager], clspath: Any,
                    verb: str) -> None:
    """Note on ``exc`` the component whose loading (``verb`` ``'load'``) or building
    (``'build'``) raised it, unless a component nearer the error (one built by this
    one's ``from_crawler``) is noted already."""
    if getattr(exc, "_crawlfw_component", None) is not None:
        return
    setting = manager.components_setting or f"{manager.component_name}s"
    try:
        exc._crawlfw_component = (setting, _component_path(clspath), verb)  # type: ignore[attr-defined]
    except (AttributeError, TypeError):  # an exception class with __slots__
        pass


def component_error(exc: BaseException) -> str | None:
    """The one line naming the component whose loading or building raised ``exc``
    (an exception :meth:`MiddlewareManager.from_settings` let through), or None when
    ``exc`` did not come from one.

    Args:
        exc: the exception.

    Returns:
        str | None: ``"<SETTING>: cannot build '<class path>': <ExcType>: <message>"``
        (``cannot load`` when it could not be imported), e.g. ``"ITEM_PIPELINES:
        cannot build 'myproject.pipelines.Db': ConnectionError: refused"``.
    """
    where = getattr(exc, "_crawlfw_component", None)
    if where is None:
        return None
    setting, path, verb = where
    message = str(exc)
    return f"{setting}: cannot {verb} {path!r}: {type(exc).__name__}" + (
        f": {message}" if message else "")


def component_start_error(exc: BaseException) -> CrawlStartError | None:
    """The :class:`~crawlfw.exceptions.CrawlStartError` that refuses a crawl's start in
    one line because a component could not be loaded or built (:func:`component_error`),
    its traceback logged at DEBUG (in a ``LOG_FILE`` at that level; a bug to find in the
    component); None when ``exc`` did not come from a component.
    """
    line = component_error(exc)
    if line is None:
        return None
    logger.debug("%(line)s", {"line": line}, exc_info=(type(exc), exc, exc.__traceback__))
    return CrawlStartError(line)
