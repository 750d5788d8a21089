"""Helpers for tests of crawlfw components (Scrapy 1.2's ``scrapy.utils.test``)."""

import asyncio
import os
import unittest
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

from crawlfw.crawler import Crawler
from crawlfw.exceptions import NotConfigured

_T = TypeVar("_T")

__all__ = [
    "get_crawler",
    "get_from_asyncio_queue",
    "get_testenv",
    "get_pythonpath",
    "get_reactor_settings",
    "assert_samelines",
    "assert_aws_environ",
    "skip_if_no_boto",
    "get_s3_content_and_delete",
]


def get_crawler(spidercls=None, settings_dict=None, prevent_warnings=True):
    """Return an unstarted Crawler for ``spidercls`` (default: a plain ``Spider``).

    Args:
        spidercls: a Spider subclass, or None.
        settings_dict: settings applied at ``'project'`` priority.
        prevent_warnings (bool): Scrapy 2's switch for settings that silence its
            deprecation warnings; accepted for its signature, and ignored as in Scrapy
            2.19 (crawlfw needs no such settings).
    """
    from crawlfw.settings import Settings
    from crawlfw.spiders import Spider

    # its settings applied (stats, log formatter, extensions made; frozen), as Scrapy's
    crawler = Crawler(spidercls or Spider, Settings(settings_dict))
    crawler._apply_settings()
    return crawler


def get_reactor_settings() -> dict:
    """Settings that make a crawler work in this process (Scrapy 2.19's helper for a
    project's tests, which passes them to ``CrawlerRunner``/``get_crawler``).

    Scrapy's depend on the Twisted reactor installed (or none); crawlfw has no
    reactor and needs no setting: the result is always a new empty dict.
    """
    return {}


def get_testenv() -> dict:
    """A copy of ``os.environ`` with the source tree first on ``PYTHONPATH``."""
    import os
    from pathlib import Path

    env = os.environ.copy()
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def get_pythonpath() -> str:
    """A ``PYTHONPATH`` value for subprocesses that makes them import this crawlfw: the
    directory holding the ``crawlfw`` package, then the current ``PYTHONPATH``."""
    root = str(Path(__file__).resolve().parents[2])
    current = os.environ.get("PYTHONPATH", "")
    return root + (os.pathsep + current if current else "")


def assert_samelines(testcase, text1, text2, msg=None):
    """Assert (with ``testcase.assertEqual``) that two texts have the same lines, whatever
    their line endings (``\\n``, ``\\r\\n``)."""
    testcase.assertEqual(text1.splitlines(), text2.splitlines(), msg)


def assert_aws_environ():
    """Skip the test (``unittest.SkipTest``) unless ``AWS_ACCESS_KEY_ID`` is set in the
    environment."""
    if "AWS_ACCESS_KEY_ID" not in os.environ:
        raise unittest.SkipTest("AWS keys not found")


def skip_if_no_boto():
    """Skip the test (``unittest.SkipTest``) when botocore/boto3 is not installed."""
    from crawlfw.utils.boto import is_botocore

    try:
        is_botocore()
    except NotConfigured as e:
        raise unittest.SkipTest(str(e)) from None


def get_s3_content_and_delete(bucket, path, with_key=False):
    """Read the object ``path`` of S3 ``bucket`` and delete it.

    Credentials, region and endpoint come from boto3's usual sources (the ``AWS_*``
    environment variables, including ``AWS_ENDPOINT_URL``, and config files).

    Args:
        bucket: the bucket name.
        path: the object key.
        with_key: also return the object's metadata (``head_object`` answer, a dict).

    Returns:
        bytes, or ``(bytes, dict)`` with ``with_key``.

    Raises:
        botocore.exceptions.ClientError: the object cannot be read or deleted.
    """
    import boto3

    client = boto3.session.Session().client("s3")
    key = client.head_object(Bucket=bucket, Key=path)
    content = client.get_object(Bucket=bucket, Key=path)["Body"].read()
    client.delete_object(Bucket=bucket, Key=path)
    return (content, key) if with_key else content


def get_from_asyncio_queue(value: _T) -> Awaitable[_T]:
    """An awaitable that gives ``value`` through an :class:`asyncio.Queue`: awaiting it
    suspends the coroutine once, as awaiting real I/O would (Scrapy 2's test helper
    for code that must work across a suspension).

    Call it from a coroutine or where an event loop is set for the thread (the queue
    binds to the running loop when first awaited).

    Args:
        value: any value.

    Returns:
        Awaitable: the queue's ``get()`` coroutine, which gives ``value``.
    """
    queue: asyncio.Queue[Any] = asyncio.Queue()
    getter = queue.get()
    queue.put_nowait(value)
    return getter
