"""Shared by the commands that talk to running crawls (``ps``, ``status``, ``pause``,
``resume``, ``stop``, ``schedule``, ``shell --attach``): find the crawl, send one message
to its process's control endpoint (:mod:`crawlfw.control`), print the answer.

CRAWL is a crawl id, a spider name or a pid; it may be left out when exactly one crawl of
this user runs. No such crawl, an ambiguous one, or an error reply: one line on standard
error and exit status 1.
"""

import json
import sys

import argh

from crawlfw.commands import fail
from crawlfw.core.control.protocol import ControlClient, ControlError, discover, find_crawl

__all__ = ["crawl_arg", "json_arg", "target", "send", "print_json", "human_bytes",
           "human_duration"]

crawl_arg = argh.arg("crawl", nargs="?", metavar="CRAWL",
                     help="crawl id, spider name or pid (default: the only running crawl)")
json_arg = argh.arg("--json", help="print the answer as JSON (for scripts)")


def target(crawl: str | None) -> tuple[dict, dict]:
    """``(endpoint, crawl status)`` of the crawl named ``crawl``; exit 1 when there is
    none or the name is ambiguous."""
    try:
        return find_crawl(discover(), crawl or None)
    except ControlError as e:
        fail(str(e))


def send(endpoint: dict, message: dict) -> dict:
    """Send ``message`` to ``endpoint`` (a :func:`target` result); the reply, or exit 1
    with the error."""
    try:
        return ControlClient(endpoint["socket"]).ask(message)
    except (ControlError, OSError) as e:
        fail(f"pid {endpoint['pid']}: {e}")


def print_json(value) -> None:
    """Print ``value`` as indented JSON on standard output."""
    json.dump(value, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")


def human_bytes(n: int) -> str:
    """``123.4 MiB``-style size of ``n`` bytes."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"


def human_duration(seconds: float) -> str:
    """``1h02m03s``-style duration of ``seconds``."""
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m{secs:02d}s"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"
