"""``crawlfw resume [CRAWL] [--json]``: resume a running crawl (``resume_crawl`` message)."""

from crawlfw.commands import command
from crawlfw.commands._control import crawl_arg, json_arg, print_json, send, target


@crawl_arg
@json_arg
@command(help="Resume a paused crawl")
def resume(crawl=None, *, settings=None, json=False):
    """Resume a crawl paused with ``crawlfw pause``. Exit status 1 when no crawl or
    several match."""
    endpoint, found = target(crawl)
    reply = send(endpoint, {"type": "resume_crawl", "crawl_id": found["crawl_id"]})
    if json:
        print_json({"pid": endpoint["pid"], **reply})
    else:
        print(f"Resumed {found['crawl_id']} (pid {endpoint['pid']})")
