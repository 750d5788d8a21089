"""Helpers for tests of crawlfw components (Scrapy 1.2's ``scrapy.utils.test``)."""

from crawlfw.crawler import Crawler

__all__ = ["get_crawler", "get_testenv"]


def get_crawler(spidercls=None, settings_dict=None):
    """Return an unstarted Crawler for ``spidercls`` (default: a plain ``Spider``).

    Args:
        spidercls: a Spider subclass, or None.
        settings_dict: settings applied at ``'project'`` priority.
    """
    from crawlfw.settings import Settings
    from crawlfw.spiders import Spider

    return Crawler(spidercls or Spider, Settings(settings_dict))


def get_testenv() -> dict:
    """A copy of ``os.environ`` with the source tree first on ``PYTHONPATH``."""
    import os
    from pathlib import Path

    env = os.environ.copy()
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env
