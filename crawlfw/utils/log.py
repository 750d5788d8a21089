"""Logging setup and helpers (Scrapy 1.2's ``scrapy.utils.log``, without Twisted).

crawlfw logs through the standard :mod:`logging` module, under the ``crawlfw``
logger hierarchy. :func:`configure_logging` installs one root handler built from
the ``LOG_*`` settings; calling it again replaces that handler rather than adding
a second one.
"""

import logging
import sys
import warnings
from logging.config import dictConfig
from typing import Any

import crawlfw
from crawlfw.exceptions import CrawlfwDeprecationWarning
from crawlfw.settings import Settings, overridden_settings
from crawlfw.utils._logadapter import SpiderLoggerAdapter

__all__ = [
    "configure_logging",
    "get_handler",
    "TopLevelFormatter",
    "LogCounterHandler",
    "StreamLogger",
    "log_crawlfw_info",
    "log_scrapy_info",
    "logformatter_adapter",
    "failure_to_exc_info",
    "get_scrapy_root_handler",
    "install_scrapy_root_handler",
    "log_reactor_info",
    "SpiderLoggerAdapter",
    "DEFAULT_LOGGING",
    "shown_on_stderr",
]

logger = logging.getLogger(__name__)


def failure_to_exc_info(failure: Any) -> tuple[Any, Any, Any] | None:
    """Return the ``exc_info`` triple of an error, for ``logger.log(..., exc_info=...)``.

    Args:
        failure: an exception instance, a :class:`crawlfw.utils.failure.Failure` (what
            errbacks receive), or an ``(type, value, traceback)`` tuple.

    Returns:
        tuple | None: ``(type, value, traceback)``, or None for anything else.
    """
    if isinstance(failure, BaseException):
        return (type(failure), failure, failure.__traceback__)
    value = getattr(failure, "value", None)
    if isinstance(value, BaseException):  # a Failure
        return (type(value), value, getattr(failure, "tb", value.__traceback__))
    if isinstance(failure, tuple) and len(failure) == 3:
        return failure
    return None


class TopLevelFormatter(logging.Filter):
    """Shorten logger names to their top-level package (``crawlfw.core.engine`` -> ``crawlfw``).

    Installed on the root handler (a filter on a logger would not apply to its
    children) when ``LOG_SHORT_NAMES`` is true.

    Args:
        loggers (list[str] | None): top-level logger names to shorten.
    """

    def __init__(self, loggers=None):
        super().__init__()
        self.loggers = loggers or []

    def filter(self, record):
        if any(record.name.startswith(name + '.') for name in self.loggers):
            record.name = record.name.split('.', 1)[0]
        return True


DEFAULT_LOGGING = {
    'version': 1,
    'disable_existing_loggers': False,
    'loggers': {
        'crawlfw': {
            'level': 'DEBUG',
        },
        # Actor start/stop lines are runtime internals (Scrapy likewise quiets twisted).
        'pykka': {
            'level': 'INFO',
        },
    },
}

# the root handler installed by the last configure_logging() call
_root_handler = None


def configure_logging(settings=None, install_root_handler=True):
    """Set up logging for crawlfw.

    * routes :mod:`warnings` through logging (unless ``-W`` options were given);
    * sets the ``crawlfw`` logger to DEBUG (handlers filter by ``LOG_LEVEL``);
    * with ``LOG_STDOUT``, replaces ``sys.stdout`` by a :class:`StreamLogger`
      (``print`` output is logged at INFO under the ``stdout`` logger);
    * with ``install_root_handler``, sets the root logger to NOTSET and installs a
      handler built by :func:`get_handler`, replacing the one a previous call
      installed.

    Args:
        settings: a :class:`~crawlfw.settings.Settings`, a dict of settings, or None
            (the defaults).
        install_root_handler (bool): whether to install the root handler.
    """
    if not sys.warnoptions:
        logging.captureWarnings(True)

    dictConfig(DEFAULT_LOGGING)

    if isinstance(settings, dict) or settings is None:
        settings = Settings(settings)

    if settings.getbool('LOG_STDOUT'):
        sys.stdout = StreamLogger(logging.getLogger('stdout'))

    if install_root_handler:
        install_scrapy_root_handler(settings)


def install_scrapy_root_handler(settings):
    """Install the root log handler built from ``settings`` (:func:`get_handler`),
    replacing (and closing) the one a previous call or :func:`configure_logging`
    installed, and set the root logger to NOTSET (Scrapy 2's name).

    Args:
        settings: a :class:`~crawlfw.settings.Settings` (or a dict of settings).

    Raises:
        ValueError: ``LOG_LEVEL`` is not a logging level name or number.
    """
    global _root_handler
    if not isinstance(settings, Settings):
        settings = Settings(settings)
    handler = get_handler(settings)
    if _root_handler is not None:
        if _root_handler in logging.root.handlers:
            logging.root.removeHandler(_root_handler)
        _root_handler.close()
    logging.root.setLevel(logging.NOTSET)
    _root_handler = handler
    logging.root.addHandler(_root_handler)


def get_scrapy_root_handler():
    """The root log handler :func:`configure_logging` or
    :func:`install_scrapy_root_handler` installed last, or None when none was.

    Returns:
        logging.Handler | None
    """
    return _root_handler


def get_handler(settings):
    """Build the root log handler from settings.

    ``LOG_FILE`` set: a :class:`logging.FileHandler` appending to it (replacing it
    when ``LOG_FILE_APPEND`` is False) with ``LOG_ENCODING``; else ``LOG_ENABLED``: a stderr :class:`logging.StreamHandler`;
    else a :class:`logging.NullHandler`. Formatted with ``LOG_FORMAT`` and
    ``LOG_DATEFORMAT``, filtered at ``LOG_LEVEL``, names shortened when
    ``LOG_SHORT_NAMES``.

    Args:
        settings: a :class:`~crawlfw.settings.Settings`.

    Returns:
        logging.Handler

    Raises:
        ValueError: ``LOG_LEVEL`` is not a logging level name or number.
    """
    filename = settings.get('LOG_FILE')
    if filename:
        mode = 'a' if settings.getbool('LOG_FILE_APPEND', True) else 'w'
        handler = logging.FileHandler(filename, mode=mode, encoding=settings.get('LOG_ENCODING'))
    elif settings.getbool('LOG_ENABLED'):
        handler = logging.StreamHandler()
    else:
        handler = logging.NullHandler()

    formatter = logging.Formatter(
        fmt=settings.get('LOG_FORMAT'),
        datefmt=settings.get('LOG_DATEFORMAT'),
    )
    handler.setFormatter(formatter)
    level = settings.get('LOG_LEVEL')
    try:
        handler.setLevel(level)
    except (ValueError, TypeError):
        raise ValueError(f"Invalid LOG_LEVEL setting: {level!r}") from None
    if settings.getbool('LOG_SHORT_NAMES'):
        handler.addFilter(TopLevelFormatter(['crawlfw']))
    return handler


def _is_stderr(stream) -> bool:
    if stream is None:
        return False
    if stream is sys.stderr or stream is sys.__stderr__:
        return True
    try:
        return stream.fileno() == 2
    except (AttributeError, OSError, ValueError):
        return False


def shown_on_stderr(level: int = logging.ERROR, name: str = "crawlfw") -> bool:
    """True when a record of ``level`` logged under ``name`` reaches standard error.

    That is: the logger is enabled for ``level`` and, following propagation, a
    :class:`logging.StreamHandler` writing to standard error (not a
    :class:`logging.FileHandler`) accepts ``level``; or no handler is found at all and
    :data:`logging.lastResort` (standard error) accepts it. False with ``--nolog`` or
    ``LOG_ENABLED = False`` (a ``NullHandler``), ``LOG_FILE`` (a ``FileHandler``) or
    ``-L CRITICAL`` for an ERROR: the commands then print their one-line reason for
    failing on standard error themselves.

    Args:
        level: a logging level (int), ERROR by default.
        name: the logger's name.
    """
    logger_ = logging.getLogger(name)
    if not logger_.isEnabledFor(level):
        return False
    found = False
    c: logging.Logger | None = logger_
    while c is not None:
        for h in c.handlers:
            found = True
            if (level >= h.level and isinstance(h, logging.StreamHandler)
                    and not isinstance(h, logging.FileHandler) and _is_stderr(h.stream)):
                return True
        if not c.propagate:
            break
        c = c.parent
    if found:
        return False
    last = logging.lastResort
    return last is not None and level >= last.level


#: Scrapy's private name for :func:`get_handler`.
_get_handler = get_handler


def log_crawlfw_info(settings):
    """Log "crawlfw <version> started (bot: <BOT_NAME>)" and the overridden settings (INFO)."""
    logger.info("crawlfw %(version)s started (bot: %(bot)s)",
                {'version': crawlfw.__version__, 'bot': settings['BOT_NAME']})
    d = {name: _hide_password(value) for name, value in overridden_settings(settings)}
    logger.info("Overridden settings: %(settings)r", {'settings': d})


def _hide_password(value):
    """``value`` with the password of a URL in it replaced by ``***``
    (``redis://:secret@host`` -> ``redis://:***@host``); other values unchanged."""
    if not isinstance(value, str) or "@" not in value or "://" not in value:
        return value
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(value)
        if parts.password is None:
            return value
    except ValueError:
        return value
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


#: Scrapy's name for :func:`log_crawlfw_info`.
log_scrapy_info = log_crawlfw_info


def log_reactor_info():
    """Log at DEBUG what runs the crawl's coroutines, as Scrapy logs its reactor.

    crawlfw has no Twisted reactor (it runs on Pykka actors and pycurl); what stands for
    Scrapy's asyncio reactor here is an asyncio event loop per thread that runs
    coroutines. Logs ``Using reactor: none (crawlfw runs on Pykka actors and pycurl,
    without Twisted)`` and ``Using asyncio event loop: <module>.<class>`` (the class of
    the loop the event-loop policy makes, or of the running one).
    """
    import asyncio

    logger.debug("Using reactor: none (crawlfw runs on Pykka actors and pycurl, "
                 "without Twisted)")
    try:
        loop_cls = type(asyncio.get_running_loop())
    except RuntimeError:
        loop = asyncio.new_event_loop()
        loop_cls = type(loop)
        loop.close()
    logger.debug("Using asyncio event loop: %s.%s", loop_cls.__module__, loop_cls.__name__)


class StreamLogger:
    """A write-only file-like object that logs each written line.

    Args:
        logger (logging.Logger): where lines go.
        log_level (int): their level.
    """

    def __init__(self, logger, log_level=logging.INFO):
        self.logger = logger
        self.log_level = log_level
        self.linebuf = ''

    def write(self, buf):
        for line in buf.rstrip().splitlines():
            self.logger.log(self.log_level, line.rstrip())

    def flush(self):
        for h in self.logger.handlers:
            h.flush()


class LogCounterHandler(logging.Handler):
    """Counts log records per level into the crawler's stats (``log_count/<LEVEL>``).

    Args:
        crawler: the crawler whose ``stats`` receive the counts.
        *args, **kwargs: passed to :class:`logging.Handler` (e.g. ``level``).
    """

    def __init__(self, crawler, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.crawler = crawler

    def emit(self, record):
        self.crawler.stats.inc_value(f'log_count/{record.levelname}')


def _debug_wanted(logger) -> bool:
    """True if a DEBUG record logged on ``logger`` could have any effect.

    That is: the logger is enabled for DEBUG and either it has filters, or a handler
    reached through propagation accepts DEBUG (level NOTSET or DEBUG), or no handler
    is found at all and ``logging.lastResort`` would take it. Otherwise
    ``logger.debug(...)`` builds a record that every handler then drops (crawlfw's
    loggers are at DEBUG and handlers filter by ``LOG_LEVEL``, as in Scrapy), so hot
    paths skip building it.
    """
    if not logger.isEnabledFor(logging.DEBUG):
        return False
    if logger.filters:
        return True
    found = False
    c = logger
    while c is not None:
        for h in c.handlers:
            found = True
            if h.level <= logging.DEBUG:
                return True
        if not c.propagate:
            break
        c = c.parent
    if found:
        return False
    last = logging.lastResort
    return last is None or last.level <= logging.DEBUG


def logformatter_adapter(logkws: Any) -> tuple[Any, Any, Any]:
    """Turn a :class:`~crawlfw.logformatter.LogFormatter` result into ``logger.log`` arguments.

    Args:
        logkws (dict): ``{'level': int, 'msg': str, 'args': dict | tuple}``
            (the deprecated ``format`` key is accepted instead of ``msg``).

    Returns:
        tuple: ``(level, message, args)``.
    """
    if not {'level', 'msg', 'args'} <= set(logkws):
        warnings.warn('Missing keys in LogFormatter method', CrawlfwDeprecationWarning,
                      stacklevel=2)
    if 'format' in logkws:
        warnings.warn('`format` key in LogFormatter methods has been deprecated, '
                      'use `msg` instead', CrawlfwDeprecationWarning, stacklevel=2)

    level = logkws.get('level', logging.INFO)
    message = logkws.get('format', logkws.get('msg'))
    # an empty args dict does not work in logger.log calls: use logkws itself then
    args = logkws if not logkws.get('args') else logkws['args']
    return (level, message, args)
