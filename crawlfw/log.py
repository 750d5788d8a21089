"""Deprecated: log with the standard :mod:`logging` module (Scrapy 1.2's deprecated
``scrapy.log``).

Importing this module warns (``CrawlfwDeprecationWarning``). ``msg`` and ``err`` log
through the ``crawlfw.log`` logger and warn on each call; the level constants are
``logging``'s (``SILENT`` is above ``CRITICAL``).
"""

import logging
import warnings

from crawlfw.exceptions import CrawlfwDeprecationWarning
from crawlfw.utils.failure import Failure

__all__ = ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL", "SILENT", "level_names", "msg", "err"]

logger = logging.getLogger(__name__)

warnings.warn("Module `crawlfw.log` has been deprecated, crawlfw now relies on the builtin "
              "Python library for logging. Read the logging entry in the documentation to "
              "learn more.", CrawlfwDeprecationWarning, stacklevel=2)

DEBUG = logging.DEBUG
INFO = logging.INFO
WARNING = logging.WARNING
ERROR = logging.ERROR
CRITICAL = logging.CRITICAL
SILENT = CRITICAL + 1

level_names = {
    DEBUG: "DEBUG",
    INFO: "INFO",
    WARNING: "WARNING",
    ERROR: "ERROR",
    CRITICAL: "CRITICAL",
    SILENT: "SILENT",
}


def msg(message=None, _level=logging.INFO, **kw):
    """Log ``message`` (deprecated: use a ``logging`` logger).

    Args:
        message: the message; ``%(name)s`` placeholders are filled from ``kw``.
        _level: the level, unless ``level`` is given in ``kw``.
        **kw: ``level``, ``format`` (replaces ``message``), and values for the
            placeholders.
    """
    warnings.warn("log.msg has been deprecated, create a python logger and log through it "
                  "instead", CrawlfwDeprecationWarning, stacklevel=2)
    level = kw.pop("level", _level)
    message = kw.pop("format", message)
    logger.log(level, message, *([kw] if kw else []))


def err(_stuff=None, _why=None, **kw):
    """Log an error with its traceback (deprecated: use ``logger.error``/``exception``).

    Args:
        _stuff: the exception (or ``Failure``); None: the one being handled.
        _why: the message; default the exception itself.
        **kw: ``level`` (default ERROR), ``failure``, ``why``, and values for
            ``%(name)s`` placeholders.
    """
    warnings.warn("log.err has been deprecated, create a python logger and use its error "
                  "method instead", CrawlfwDeprecationWarning, stacklevel=2)
    level = kw.pop("level", logging.ERROR)
    failure = kw.pop("failure", _stuff)
    if isinstance(failure, Failure):
        exc_info = failure.exc_info()
        value = failure.value
    elif isinstance(failure, BaseException):
        exc_info = (type(failure), failure, failure.__traceback__)
        value = failure
    else:
        exc_info = True
        value = None
    message = kw.pop("why", _why) or value
    logger.log(level, message, *([kw] if kw else []), exc_info=exc_info)
