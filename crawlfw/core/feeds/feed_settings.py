"""The feeds a crawl writes, from its settings: ``FEEDS`` and the ``FEED_*`` settings
(:func:`feeds_from_settings`, the options of one feed checked by ``_check_feed_options``),
the URI scheme of a feed (:func:`uri_scheme`), a feed URI filled for a spider
(:func:`resolve_uri`) and the ``-o``/``-t`` options of the
``crawl`` and ``runspider`` commands (:func:`feed_settings_from_cli`); split from
:mod:`crawlfw.core.feeds.feeds` (issue 19), whose :class:`~crawlfw.core.feeds.feeds.FeedWriter`
writes each feed.

Settings used (Scrapy 1.2 names and meanings):

``FEED_URI``
    where to write, a ``%``-template: ``%(name)s`` is the spider name, ``%(time)s`` the
    UTC time the feed was opened (``2016-10-03T12-31-05``: ISO 8601 with ``-`` for
    ``:``), ``%(worker)s`` this process's worker id in a shared crawl
    (``FRONTIER_WORKER``, default ``<hostname>-<pid>``), and ``%(attr)s`` any other
    spider attribute. Unset: no feed
    (:class:`~crawlfw.exceptions.NotConfigured`).
``FEED_URI_PARAMS``
    a function (or its import path) ``f(params, spider)`` that may add to the ``params``
    dict in place, or return a new dict to use instead.
``FEED_FORMAT``
    a key of ``FEED_EXPORTERS`` / ``FEED_EXPORTERS_BASE`` (case-insensitive).
``FEED_STORAGES`` / ``FEED_STORAGES_BASE``
    URI scheme -> storage class (path); ``''`` is for plain paths. A one-letter scheme
    is a Windows drive letter (``C:\\out\\items.json``), i.e. a plain path.
``FEED_EXPORTERS`` / ``FEED_EXPORTERS_BASE``
    format -> exporter class (path). A None value removes a base entry.
``FEED_EXPORT_FIELDS``
    the fields to export, in order (list or comma-separated string), or a dict
    ``{item field: output name}`` (Scrapy 2.4); None: all.
``FEED_EXPORT_BATCH_ITEM_COUNT``
    (Scrapy 2.3) start a new file every this many items (0, the default: one file); the
    URI must then hold ``%(batch_id)d`` (1, 2, ...) or ``%(batch_time)s`` (the UTC time
    the batch began, ``2026-11-25T16-02-36.123456+00-00``).
``FEED_EXPORT_INDENT``
    (Scrapy 2) the layout of JSON and XML feeds: 0 (the default) puts each item on a
    line of its own, N > 0 also indents, None is Scrapy 1.2's layout (the ``indent``
    feed option).
``FEED_EXPORT_ENCODING``
    the output encoding; None: UTF-8, with JSON escaped to ASCII.
``FEED_STORE_EMPTY``
    store a feed with no items. True (default, as Scrapy >= 2.11): an empty crawl writes
    an empty JSON Lines/CSV file, ``[``, an empty line and ``]`` in JSON (Scrapy 2.19's
    bytes). False (Scrapy 1.2's default): nothing is
    written for it (a local file the storage created is removed again).
``FEED_TEMPDIR``
    where FTP and S3 feeds are staged before upload.
``FEEDS`` (Scrapy >= 2.1)
    ``{uri: options}``, one feed per entry, written side by side; read from the settings
    as merged, so a spider's ``custom_settings`` may set it. Options (each defaults to
    the ``FEED_*`` setting named): ``format`` (``FEED_FORMAT``; else guessed from the
    URI's file extension), ``encoding`` (``FEED_EXPORT_ENCODING``), ``fields``
    (``FEED_EXPORT_FIELDS``), ``store_empty`` (``FEED_STORE_EMPTY``), ``overwrite``
    (False: a local file is appended to, as Scrapy 1.2 does; True: replaced),
    ``indent`` (``FEED_EXPORT_INDENT``; JSON only: indents each item), ``item_export_kwargs`` (more
    keyword arguments for the exporter), ``uri_params`` (``FEED_URI_PARAMS``), and
    Scrapy 2's ``batch_item_count`` (``FEED_EXPORT_BATCH_ITEM_COUNT``),
    ``postprocessing`` (plug-ins, :mod:`crawlfw.extensions.postprocessing`, with their
    options), ``item_filter`` (a class built with the feed's options, whose
    ``accepts(item)`` picks the items; default
    :class:`crawlfw.core.feeds.plugins.ItemFilter`) and ``item_classes``. A feed
    with batches or post-processing cannot be cut back: refused with ``JOBDIR`` or
    ``FRONTIER_URL``. Unknown options are refused, unless the feed has plug-ins or an
    item filter (which may read their own).
    ``FEED_URI``, when set, is one more feed with the ``FEED_*`` options
    (:func:`feeds_from_settings`).

:func:`feed_settings_from_cli` turns the ``-o FILE`` / ``-t FORMAT`` options of the
``crawl`` and ``runspider`` commands (also Scrapy 2's ``-o URI:FORMAT``) into
``FEED_URI`` / ``FEED_FORMAT``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from crawlfw.exceptions import NotConfigured, UsageError
from crawlfw.utils.python import without_none_values

if TYPE_CHECKING:
    from crawlfw.core._types import CrawlerLike
    from crawlfw.settings import BaseSettings

__all__ = ["FEED_OPTIONS", "feed_settings_from_cli", "feeds_from_settings", "resolve_uri",
           "uri_scheme"]

#: The format of a file extension that is no format name of ``FEED_EXPORTERS`` (a
#: project that dropped ``jl`` or ``jsonl`` from ``FEED_EXPORTERS_BASE``); an extension
#: that is one names the format, as in Scrapy 2 (``-o items.jl``: ``jl``).
_EXTENSION_FORMATS = {"jl": "jsonlines", "jsonl": "jsonlines"}


def _as_settings(settings: BaseSettings | Mapping[str, Any] | None) -> BaseSettings:
    """Return ``settings`` as a :class:`~crawlfw.settings.Settings` (a plain mapping is
    laid over the defaults)."""
    from crawlfw.settings import BaseSettings, Settings

    if isinstance(settings, BaseSettings):
        return settings
    return Settings(dict(settings or {}))


def _components(settings: BaseSettings, name: str) -> dict[str, Any]:
    """``{key: class path or class}`` merged from ``name`` over ``name + '_BASE'``,
    entries set to None dropped."""
    return dict(without_none_values(dict(settings.getwithbase(name))))


def uri_scheme(uri: str) -> str:
    """Return the storage scheme of a feed URI, lower-cased.

    Args:
        uri: a feed URI or a plain path (possibly still a ``%``-template).

    Returns:
        str: the scheme (``'ftp'``, ``'s3'``, ``'stdout'``, ``'file'``...), or ``''`` for a
        plain path, including Windows paths with a drive letter (``C:\\x``, RFC 8089
        appendix E.2).
    """
    scheme = urlparse(uri).scheme.lower()
    if len(scheme) == 1 and scheme.isalpha():
        return ""
    return scheme

#: The options of a ``FEEDS`` entry this writer understands (Scrapy 2's names).
FEED_OPTIONS = frozenset(
    {"format", "encoding", "fields", "store_empty", "overwrite", "indent",
     "item_export_kwargs", "uri_params", "batch_item_count", "postprocessing",
     "item_filter", "item_classes",
     # the options of crawlfw.extensions.postprocessing's plug-ins
     "gzip_compresslevel", "gzip_mtime", "gzip_filename", "bz2_compresslevel",
     "lzma_format", "lzma_check", "lzma_preset", "lzma_filters"}
)


def _export_fields(fields: Any, settings: BaseSettings) -> list[str] | dict[str, str] | None:
    """The ``fields_to_export`` of a feed: its ``fields`` option, else
    ``FEED_EXPORT_FIELDS``; a list of names, or a dict ``{item field: output name}``
    (Scrapy 2.4) kept as is; None (all fields) when empty."""
    if fields is None:
        fields = settings.get("FEED_EXPORT_FIELDS")
        if isinstance(fields, str) and fields.lstrip().startswith("{"):
            fields = settings.getdict("FEED_EXPORT_FIELDS")  # -s FEED_EXPORT_FIELDS='{...}'
        elif not isinstance(fields, Mapping):
            fields = settings.getlist("FEED_EXPORT_FIELDS")
    if isinstance(fields, Mapping):
        return dict(fields) or None
    if isinstance(fields, str):
        fields = [f.strip() for f in fields.split(",")]
    return list(fields) or None


def _check_feed_options(uri: str, options: Mapping[str, Any] | None,
                        exporters: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Validate one ``FEEDS`` entry's options; return them with ``format`` filled in."""
    if options is None:
        options = {}
    if not isinstance(options, Mapping):
        raise NotConfigured(f"{where} must be a dict of feed options, got {options!r}")
    options = dict(options)
    unknown = sorted(set(options) - FEED_OPTIONS)
    if unknown and not (options.get("postprocessing") or options.get("item_filter")):
        # (plug-ins and item filters may read options of their own)
        raise NotConfigured(
            f"{where} has unsupported feed option(s) {', '.join(map(repr, unknown))}; "
            f"supported: {', '.join(sorted(FEED_OPTIONS))}"
        )
    if not options.get("format"):
        ext = os.path.splitext(urlparse(uri).path if uri_scheme(uri) else uri)[1]
        ext = ext.lstrip(".").lower()
        fmt = ext if ext in exporters or _EXTENSION_FORMATS.get(ext) not in exporters \
            else _EXTENSION_FORMATS[ext]
        if fmt not in exporters:
            raise NotConfigured(
                f"{where} has no 'format' and its file extension names none; known "
                f"formats: {', '.join(sorted(exporters))}"
            )
        options["format"] = fmt
    return options


def _feed_indent(options: Mapping[str, Any], settings: BaseSettings, where: str) -> int | None:
    """A feed's ``indent``: its option, else ``FEED_EXPORT_INDENT`` (Scrapy 2's layout
    of JSON and XML feeds: None as Scrapy 1.2, 0 an item a line, N > 0 indented).

    Raises:
        NotConfigured: not a whole number nor None.
    """
    if "indent" in options:
        indent = options["indent"]
    elif settings["FEED_EXPORT_INDENT"] is None:
        return None
    else:
        try:
            return settings.getint("FEED_EXPORT_INDENT")
        except ValueError:
            raise NotConfigured(f"FEED_EXPORT_INDENT must be a whole number or None, "
                                f"got {settings['FEED_EXPORT_INDENT']!r}") from None
    if indent is not None and (isinstance(indent, bool) or not isinstance(indent, int)):
        raise NotConfigured(f"{where}: indent must be a whole number or None, got {indent!r}")
    return indent


def _uri_params(spider: Any, settings: BaseSettings, uripar: Any,
                batch_id: int) -> Mapping[str, Any]:
    """The ``%``-parameters of a feed URI: the spider's attributes, ``time``,
    ``worker``, ``batch_id``, ``batch_time``, then ``FEED_URI_PARAMS``' changes."""
    params: dict[str, Any] = {}
    for name in dir(spider):
        if name.startswith("__"):
            continue
        try:
            params[name] = getattr(spider, name)
        except Exception:  # a property that cannot be computed now: not a parameter
            continue
    now = datetime.now(timezone.utc).replace(tzinfo=None, microsecond=0)
    params["time"] = now.isoformat().replace(":", "-")
    from crawlfw.core.frontier.redis_link import worker_id

    params["worker"] = worker_id(settings)  # FRONTIER_WORKER or <host>-<pid>
    params["batch_id"] = batch_id  # Scrapy 2.3: the batch's number, from 1
    params["batch_time"] = datetime.now(timezone.utc).isoformat().replace(":", "-")
    if uripar is not None:
        returned = uripar(params, spider)
        if returned is not None:
            params = returned
    return params


def resolve_uri(urifmt: str, spider: Any, settings: BaseSettings, uripar: Any = None,
                batch_id: int = 1) -> str:
    """Fill a feed URI template (see ``FEED_URI`` above) for ``spider``.

    Args:
        urifmt: the URI template.
        spider: the spider whose attributes are parameters.
        settings: the settings (``FRONTIER_WORKER`` for ``%(worker)s``).
        uripar: the ``FEED_URI_PARAMS`` function (loaded), or None.
        batch_id: the batch's number (``%(batch_id)d``).

    Returns:
        str: the URI.

    Raises:
        NotConfigured: the template names a parameter there is not, or is not a valid
            ``%``-template.
    """
    from crawlfw.core.feeds.storage import _redact_uri

    params = _uri_params(spider, settings, uripar, batch_id)
    try:
        uri: str = urifmt % params
        return uri
    except KeyError as e:
        raise NotConfigured(
            f"FEED_URI {_redact_uri(urifmt)!r} uses %({e.args[0]})s, but spider "
            f"{getattr(spider, 'name', None)!r} has no attribute {e.args[0]!r} "
            f"and FEED_URI_PARAMS does not set it"
        ) from None
    except (TypeError, ValueError) as e:
        raise NotConfigured(
            f"FEED_URI {_redact_uri(urifmt)!r} is not a valid %-template ({e}); "
            f"write a literal % as %%"
        ) from None


def _takes_feed_options(storage_cls: Any, crawler: CrawlerLike | None) -> bool:
    """True when the factory ``create_instance`` will call accepts ``feed_options``."""
    import inspect

    if crawler is not None and hasattr(storage_cls, "from_crawler"):
        factory = storage_cls.from_crawler
    elif hasattr(storage_cls, "from_settings"):
        factory = storage_cls.from_settings
    else:
        factory = storage_cls
    try:
        return "feed_options" in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False


def feeds_from_settings(settings: BaseSettings | Mapping[str, Any] | None,
                        ) -> list[tuple[str | None, dict[str, Any] | None]]:
    """Return the feeds to write: ``[(uri, options | None), ...]``.

    The ``FEEDS`` entries in their order (keys made ``str``: a ``pathlib.Path`` works),
    then ``FEED_URI`` as ``(None, None)`` (the writer reads it with the ``FEED_*``
    settings) when it is set and is not a ``FEEDS`` key already.

    Args:
        settings: a :class:`~crawlfw.settings.Settings` (or a plain dict of overrides).

    Returns:
        list of ``(uri, options)``; ``uri`` None stands for ``FEED_URI``.

    Raises:
        NotConfigured: ``FEEDS`` is not a dict (nor a JSON object string).
    """
    settings = _as_settings(settings)
    try:
        feeds = settings.getdict("FEEDS")  # also a JSON object string (-s FEEDS=...)
    except ValueError as e:
        raise NotConfigured(str(e)) from None
    result: list[tuple[str | None, dict[str, Any] | None]] = [
        (str(uri), options) for uri, options in feeds.items()]
    feed_uri = settings.get("FEED_URI")
    if feed_uri and str(feed_uri) not in {uri for uri, _ in result}:
        result.append((None, None))
    return result


def _split_cli_format(output: str, valid: Iterable[str]) -> tuple[str, str | None]:
    """Split Scrapy 2's ``-o URI:FORMAT`` (``-o -:jl``, ``-o out.txt:jsonlines``) into
    ``(URI, FORMAT)``; ``(output, None)`` when what follows the last ``:`` is not a
    format of ``valid`` (``C:\\x.json``, ``ftp://u:p@host/x.jl``, ``stdout:``)."""
    uri, sep, fmt = output.rpartition(":")
    if sep and uri and fmt in valid:
        return uri, fmt
    return output, None


def feed_settings_from_cli(output: str | None, output_format: str | None = None,
                           settings: BaseSettings | Mapping[str, Any] | None = None,
                           ) -> dict[str, str]:
    """Turn ``-o FILE`` / ``-t FORMAT`` command-line options into feed settings, as the
    ``crawl`` and ``runspider`` commands of Scrapy 1.2 do.

    Without ``-t`` the format is the file extension (``.json`` -> ``json``, ``.csv``,
    ``.xml``, ``.pickle``, ``.marshal``, ``.jl`` -> ``jl``, ``.jsonl`` -> ``jsonl``, as
    Scrapy 2 names them; case-insensitive). ``-o -`` writes to the standard output (``stdout:``) and needs
    ``-t``. As in Scrapy 2, the format may instead follow the URI after a colon:
    ``-o -:jl`` (standard output, JSON Lines), ``-o out.txt:jsonlines``; it wins over
    ``-t``.

    Args:
        output (str | None): the ``-o`` value; None or ``''`` returns ``{}``.
        output_format (str | None): the ``-t`` value.
        settings: the :class:`~crawlfw.settings.Settings` whose ``FEED_EXPORTERS`` (+
            ``_BASE``) give the valid formats; None uses the defaults.

    Returns:
        dict: ``{'FEED_URI': str, 'FEED_FORMAT': str}``, to set at ``'cmdline'``
        priority; ``{}`` when ``output`` is empty.

    Raises:
        UsageError: the format is not a known one (the message names it and lists the
            valid ones), or cannot be guessed for ``-o -``.
    """
    if not output:
        return {}
    settings = _as_settings(settings)
    valid = sorted(_components(settings, "FEED_EXPORTERS"))
    output, suffix_format = _split_cli_format(output, valid)
    if suffix_format:
        output_format = suffix_format
    uri = "stdout:" if output == "-" else output
    if output_format:
        fmt = output_format.lower()
    elif output == "-":
        raise UsageError(
            "Cannot tell the output format of '-o -' (standard output) from a file "
            f"extension: set one with the '-t' switch from the supported list {tuple(valid)}"
        )
    else:
        ext = os.path.splitext(output)[1].lstrip(".").lower()
        fmt = ext if ext in valid or _EXTENSION_FORMATS.get(ext) not in valid \
            else _EXTENSION_FORMATS[ext]
    if fmt not in valid:
        raise UsageError(
            f"Unrecognized output format '{fmt}', set one using the '-t' switch or as a "
            f"file extension from the supported list {tuple(valid)}"
        )
    return {"FEED_URI": uri, "FEED_FORMAT": fmt}
