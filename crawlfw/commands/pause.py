"""``crawlfw pause [CRAWL] [--json]``: pause a running crawl (``pause_crawl`` message)."""

from crawlfw.commands import command
from crawlfw.commands._control import crawl_arg, json_arg, print_json, send, target


@crawl_arg
@json_arg
@command(help="Pause a running crawl (no new download starts)")
def pause(crawl=None, *, settings=None, json=False):
    """Pause the crawl: no new download starts (transfers in flight finish) and it does
    not close as idle until ``crawlfw resume``. Exit status 1 when no crawl or several
    match."""
    endpoint, found = target(crawl)
    reply = send(endpoint, {"type": "pause_crawl", "crawl_id": found["crawl_id"]})
    if json:
        print_json({"pid": endpoint["pid"], **reply})
    else:
        print(f"Paused {found['crawl_id']} (pid {endpoint['pid']}); transfers in flight "
              "finish")
