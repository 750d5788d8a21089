"""``crawlfw stop [CRAWL] [--json]``: close a running crawl gracefully, as one Ctrl-C does."""

from crawlfw.commands import command
from crawlfw.commands._control import crawl_arg, json_arg, print_json, send, target


@crawl_arg
@json_arg
@command(help="Stop a running crawl gracefully (finish_reason shutdown)")
def stop(crawl=None, *, settings=None, json=False):
    """Close the crawl with ``finish_reason`` ``shutdown``: requests in flight go back to
    the scheduler (kept in JOBDIR), the pipelines close and the feeds are stored. Returns
    once the crawl was told; its process exits when it has closed. Exit status 1 when
    no crawl or several match."""
    endpoint, found = target(crawl)
    reply = send(endpoint, {"type": "stop_crawl", "crawl_id": found["crawl_id"],
                            "reason": "shutdown"})
    if json:
        print_json({"pid": endpoint["pid"], **reply})
    else:
        print(f"Stopping {found['crawl_id']} (pid {endpoint['pid']})")
