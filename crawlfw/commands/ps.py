"""``crawlfw ps [--json]``: the running crawls of this user, in every process."""

from crawlfw.commands import command
from crawlfw.commands._control import human_duration, json_arg, print_json
from crawlfw.core.control.protocol import discover


@json_arg
@command(help="List the running crawls of this user")
def ps(*, settings=None, json=False):
    """Print one line per running crawl: id, spider, pid, state, pages, items, uptime.

    Sockets left by killed processes are removed on the way. With ``--json``, a list of
    ``{crawl_id, spider, pid, state, pages, items, uptime_s, socket}``.
    """
    rows = []
    for endpoint in discover():
        for crawl in endpoint.get("crawls", []):
            rows.append({"crawl_id": crawl["crawl_id"], "spider": crawl["spider"],
                         "pid": endpoint["pid"], "state": crawl["state"],
                         "pages": crawl["pages"], "items": crawl["items"],
                         "uptime_s": crawl["uptime_s"], "socket": endpoint["socket"]})
    if json:
        print_json(rows)
        return
    if not rows:
        print("No running crawl of this user")
        return
    header = ("ID", "SPIDER", "PID", "STATE", "PAGES", "ITEMS", "UPTIME")
    table = [header] + [(r["crawl_id"], r["spider"], str(r["pid"]), r["state"],
                         str(r["pages"]), str(r["items"]), human_duration(r["uptime_s"]))
                        for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
