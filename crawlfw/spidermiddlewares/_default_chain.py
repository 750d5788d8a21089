"""The default spider middlewares' ``process_spider_output`` in one pass.

With ``SPIDER_MIDDLEWARES_BASE`` and nothing else on the output side, every request a
callback yields went through four generators, one per middleware (Depth, UrlLength,
Referer, Offsite, in that order: ``process_spider_output`` runs from the spider side),
each resumed for every element. :func:`default_chain_plan` recognises that case (the
very classes, their own methods, any of them disabled, in the default order) and
:func:`default_chain_output` then does what the four do, element by element, in one
generator: the same requests kept, in the same order, with the same ``meta['depth']``,
priority, ``Referer`` header, log lines and stats, and lazily (an element is
processed when the consumer asks for it, as through the chain).

Each step below is the middleware's own rule, written again; a change to one of
``depth.py``, ``urllength.py``, ``referer.py`` (its legacy path) or ``offsite.py``
must be made here too. ``tests/spidermiddlewares/test_default_chain.py`` runs both
paths on a table of callbacks and settings and compares everything they produce.
"""

from __future__ import annotations

from crawlfw.http import Headers, Request
from crawlfw.spidermiddlewares.depth import DepthMiddleware
from crawlfw.spidermiddlewares.depth import logger as depth_logger
from crawlfw.spidermiddlewares.offsite import OffsiteMiddleware
from crawlfw.spidermiddlewares.referer import LegacyPolicy, RefererMiddleware, _policy_class
from crawlfw.spidermiddlewares.urllength import UrlLengthMiddleware
from crawlfw.spidermiddlewares.urllength import logger as urllength_logger

__all__ = ["default_chain_plan", "default_chain_output"]

_dict_contains = dict.__contains__
_dict_setitem = dict.__setitem__

# process_spider_output order of the defaults (descending SPIDER_MIDDLEWARES_BASE numbers)
_ORDER = (DepthMiddleware, UrlLengthMiddleware, RefererMiddleware, OffsiteMiddleware)


def default_chain_plan(methods) -> tuple | None:
    """Whether ``methods`` (a manager's ``process_spider_output`` hooks, in call order)
    are the default middlewares' own, in their default order.

    Args:
        methods: the bound methods (or adapted callables) the manager calls.

    Returns:
        ``(depth, urllength, referer, offsite)``, each the middleware instance or None
        when it is not enabled; None when any hook is something else (another class, a
        subclass, a method replaced or adapted, another order): then the chain runs.
    """
    found = [None, None, None, None]
    last = -1
    for method in methods:
        owner = getattr(method, "__self__", None)
        func = getattr(method, "__func__", None)
        cls = owner.__class__
        try:
            index = _ORDER.index(cls)
        except ValueError:
            return None
        if index <= last or func is not cls.process_spider_output:
            return None
        if owner.__dict__.get("process_spider_output") is not None:
            return None
        found[index] = owner
        last = index
    return tuple(found)


def default_chain_output(plan: tuple, response, result, spider):
    """Run ``result`` through the middlewares of ``plan`` (from
    :func:`default_chain_plan`) as their ``process_spider_output`` chain would.

    Args:
        plan: ``(depth, urllength, referer, offsite)`` instances or None.
        response: the response whose callback produced ``result``.
        result: the callback's iterable output.
        spider: the spider.

    Returns:
        An iterator over the kept elements, or None when this response needs the chain
        itself (a ``REFERRER_POLICY`` other than the legacy one: the caller runs it).
    """
    depth_mw, urllength_mw, referer_mw, offsite_mw = plan
    if referer_mw is not None and (
        referer_mw.default_policy is not LegacyPolicy or response is None
    ):
        return None
    if depth_mw is not None:
        # DepthMiddleware.process_spider_output, before its generator: at call time
        if "depth" not in response.meta:
            response.meta["depth"] = 0
            if depth_mw.stats is not None and depth_mw.verbose_stats:
                depth_mw.stats.inc_value("request_depth_count/0", spider=spider)
    return _output(depth_mw, urllength_mw, referer_mw, offsite_mw, response,
                   iter(result or ()), spider)


def _output(depth_mw, urllength_mw, referer_mw, offsite_mw, response, result, spider):
    # Set-up, in the order the chain's generators start on the first next(): Offsite's
    # (the outermost), then Referer's and Depth's.
    offsite = None
    if offsite_mw is not None:
        if offsite_mw._regex_spider is not spider:
            offsite_mw.spider_opened(spider)
        if not offsite_mw._allows_all:
            offsite = offsite_mw
    if referer_mw is not None:
        url = response.url
        url_bytes = {}  # encoding -> url encoded as Headers stores it
        header_checked = False
        header_cls = None
    if depth_mw is not None:
        maxdepth, prio = depth_mw.maxdepth, depth_mw.prio
        stats, verbose = depth_mw.stats, depth_mw.verbose_stats
        depth = response.meta["depth"] + 1
        last_max = None
    if urllength_mw is not None:
        maxlength, ul_stats = urllength_mw.maxlength, urllength_mw.stats
    for r in result:
        rclass = r.__class__
        if rclass is Request or isinstance(r, Request):
            # Request's own meta and url properties, read without calling them
            plain = rclass is Request
            if depth_mw is not None:  # DepthMiddleware._output
                if plain:
                    meta = r._meta
                    if meta is None:
                        meta = r._meta = {}
                else:
                    meta = r.meta
                meta["depth"] = depth
                if prio:
                    r.priority -= depth * prio
                if maxdepth and depth > maxdepth:
                    depth_logger.debug(
                        "Ignoring link (depth > %(maxdepth)d): %(requrl)s ",
                        {"maxdepth": maxdepth, "requrl": r.url},
                        extra={"spider": spider},
                    )
                    continue
                if stats is not None:
                    if verbose:
                        stats.inc_value(f"request_depth_count/{depth}", spider=spider)
                    if depth != last_max:
                        stats.max_value("request_depth_max", depth, spider=spider)
                        last_max = depth
            if urllength_mw is not None and len(  # UrlLengthMiddleware
                r._url if plain else r.url
            ) > maxlength:
                urllength_logger.debug(
                    "Ignoring link (url length > %(maxlength)d): %(url)s ",
                    {"maxlength": maxlength, "url": r.url},
                    extra={"spider": spider},
                )
                if ul_stats is not None:
                    ul_stats.inc_value("urllength/request_ignored_count", spider=spider)
                continue
            if referer_mw is not None:  # RefererMiddleware._legacy_output
                if plain:
                    meta = r._meta
                    if meta is None:
                        meta = r._meta = {}
                else:
                    meta = r.meta
                meta_value = meta.get("referrer_policy")
                cls = _policy_class(meta_value) if meta_value else None
                if cls is None:
                    if not header_checked:
                        header = response.headers.get(b"Referrer-Policy")
                        header_cls = _policy_class(header, False) if header else None
                        header_checked = True
                    cls = header_cls
                headers = r.headers
                if cls is not None and cls is not LegacyPolicy:
                    if b"Referer" not in headers:
                        referrer = cls().referrer(url, r.url)
                        if referrer is not None:
                            headers[b"Referer"] = referrer
                elif headers.__class__ is Headers:
                    value = url_bytes.get(headers.encoding)
                    if value is None:
                        value = url_bytes[headers.encoding] = url.encode(headers.encoding)
                    if not _dict_contains(headers, b"Referer"):  # Headers.setdefault_bytes
                        _dict_setitem(headers, b"Referer", [value])
                elif b"Referer" not in headers:
                    headers[b"Referer"] = url
            if offsite is not None and not (  # OffsiteMiddleware.process_spider_output
                r.dont_filter or offsite.should_follow(r, spider)
                or r.meta.get("allow_offsite")
            ):
                offsite.report_filtered(r, spider)
                continue
        yield r

