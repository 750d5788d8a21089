"""Job directory helper (Scrapy 1.2's ``scrapy.utils.job``)."""

import os
from collections.abc import Mapping
from typing import Any

__all__ = ["job_dir"]


def job_dir(settings: Mapping[str, Any]) -> str | None:
    """Return the ``JOBDIR`` setting, creating the directory if it does not exist.

    The job directory holds the state of a paused crawl (scheduler queues, seen
    request fingerprints, ``spider.state``) so that it can be resumed.

    Args:
        settings: a :class:`~crawlfw.settings.Settings` (or any mapping).

    Returns:
        str | None: the directory path, or None (or ``''``) when ``JOBDIR`` is unset.

    Raises:
        OSError: the directory cannot be created.
    """
    path = settings['JOBDIR']
    if path and not os.path.exists(path):
        os.makedirs(path, exist_ok=True)
    return path
