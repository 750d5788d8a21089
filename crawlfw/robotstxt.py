"""robots.txt parsers behind one interface (Scrapy 2's ``scrapy.robotstxt``).

The ``ROBOTSTXT_PARSER`` setting names the :class:`RobotParser` subclass that
:class:`~crawlfw.downloadermiddlewares.robotstxt.RobotsTxtMiddleware` builds for each
host's robots.txt (``from_crawler(crawler, body)``), then asks ``allowed(url,
user_agent)``:

- :class:`ProtegoRobotParser` (the default): protego, RFC 9309 with wildcards (``*``,
  ``$``), ``Crawl-delay``, ``Request-rate``, sitemaps;
- :class:`PythonRobotParser`: the standard library's :class:`urllib.robotparser.RobotFileParser`
  (no wildcards);
- :class:`RerpRobotParser`: the ``robotexclusionrulesparser`` package, when installed
  (``pip install robotexclusionrulesparser``); without it building one raises
  ``ImportError`` naming the package, and a crawl whose ``ROBOTSTXT_OBEY`` is on fails
  to start with that message.

Scrapy's ``ReppyRobotParser`` (the unmaintained ``reppy``) was removed before Scrapy
2.19 and has no counterpart here.
"""

from __future__ import annotations

import logging
import sys
from abc import ABCMeta, abstractmethod

from crawlfw.utils.python import to_unicode

__all__ = [
    "RobotParser",
    "ProtegoRobotParser",
    "PythonRobotParser",
    "RerpRobotParser",
    "decode_robotstxt",
]

logger = logging.getLogger(__name__)


def decode_robotstxt(robotstxt_body: bytes, spider, to_native_str_type: bool = False) -> str:
    """Decode a robots.txt body (RFC 9309 §2.3: UTF-8).

    Args:
        robotstxt_body: the body.
        spider: the spider, for the log record (may be None).
        to_native_str_type: decode strictly (invalid UTF-8 then makes it empty);
            False: drop undecodable bytes and a UTF-8 BOM.

    Returns:
        str: the text; ``""`` when it could not be decoded (a WARNING is logged: the
        file is treated as empty, which allows everything).
    """
    try:
        if to_native_str_type:
            return to_unicode(robotstxt_body)
        return robotstxt_body.decode("utf-8-sig", errors="ignore")
    except UnicodeDecodeError:
        logger.warning(
            "Failure while parsing robots.txt. File either contains garbage or is in an "
            "encoding other than UTF-8, treating it as an empty file.",
            exc_info=sys.exc_info(), extra={"spider": spider})
        return ""


class RobotParser(metaclass=ABCMeta):
    """The interface of a robots.txt parser (subclass it for ``ROBOTSTXT_PARSER``)."""

    @classmethod
    @abstractmethod
    def from_crawler(cls, crawler, robotstxt_body: bytes):
        """Parse a robots.txt body and return a new parser.

        Args:
            crawler: the Crawler (its ``spider`` for log records; may be None).
            robotstxt_body: the file's bytes.
        """

    @abstractmethod
    def allowed(self, url: str | bytes, user_agent: str | bytes) -> bool:
        """Whether ``user_agent`` may fetch ``url`` (an absolute URL)."""

    def crawl_delay(self, user_agent: str | bytes) -> float | None:
        """The ``Crawl-delay`` for ``user_agent`` in seconds, or None when the file does
        not set one or the parser does not read it (Scrapy 2.18)."""
        return None


class _SpiderParser(RobotParser):
    @classmethod
    def from_crawler(cls, crawler, robotstxt_body):
        return cls(robotstxt_body, None if not crawler else crawler.spider)


class ProtegoRobotParser(_SpiderParser):
    """robots.txt parsed by protego (``ROBOTSTXT_PARSER``'s default).

    Args:
        robotstxt_body (bytes): the file.
        spider: the spider, for log records (may be None).
    """

    def __init__(self, robotstxt_body: bytes, spider):
        from protego import Protego

        self.spider = spider
        self.rp = Protego.parse(decode_robotstxt(robotstxt_body, spider))

    def allowed(self, url, user_agent):
        return self.rp.can_fetch(to_unicode(url), to_unicode(user_agent))

    def crawl_delay(self, user_agent):
        delay = self.rp.crawl_delay(to_unicode(user_agent))
        return None if delay is None else float(delay)


class PythonRobotParser(_SpiderParser):
    """robots.txt parsed by :class:`urllib.robotparser.RobotFileParser` (no wildcards).

    Args:
        robotstxt_body (bytes): the file (strict UTF-8: anything else is an empty file).
        spider: the spider, for log records (may be None).
    """

    def __init__(self, robotstxt_body: bytes, spider):
        from urllib.robotparser import RobotFileParser  # (urllib.request: on first use)

        self.spider = spider
        self.rp = RobotFileParser()
        self.rp.parse(decode_robotstxt(robotstxt_body, spider, to_native_str_type=True)
                      .splitlines())

    def allowed(self, url, user_agent):
        return self.rp.can_fetch(to_unicode(user_agent), to_unicode(url))

    def crawl_delay(self, user_agent):
        delay = self.rp.crawl_delay(to_unicode(user_agent))
        return None if delay is None else float(delay)


class RerpRobotParser(_SpiderParser):
    """robots.txt parsed by the ``robotexclusionrulesparser`` package.

    Args:
        robotstxt_body (bytes): the file.
        spider: the spider, for log records (may be None).

    Raises:
        ImportError: ``robotexclusionrulesparser`` is not installed (the message says
            how to install it, or to use ProtegoRobotParser).
    """

    def __init__(self, robotstxt_body: bytes, spider):
        try:
            from robotexclusionrulesparser import (  # type: ignore[import-not-found]
                RobotExclusionRulesParser,
            )
        except ImportError as e:
            raise ImportError(
                "ROBOTSTXT_PARSER crawlfw.robotstxt.RerpRobotParser needs the "
                "robotexclusionrulesparser package (pip install "
                "robotexclusionrulesparser); crawlfw.robotstxt.ProtegoRobotParser, "
                "the default, needs nothing more") from e
        self.spider = spider
        self.rp = RobotExclusionRulesParser()
        self.rp.parse(decode_robotstxt(robotstxt_body, spider))

    def allowed(self, url, user_agent):
        return bool(self.rp.is_allowed(to_unicode(user_agent), to_unicode(url)))

    def crawl_delay(self, user_agent):
        delay = self.rp.get_crawl_delay(to_unicode(user_agent))
        return None if delay is None else float(delay)
