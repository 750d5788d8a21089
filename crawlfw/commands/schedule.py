"""``crawlfw schedule [CRAWL] URL [--callback NAME] [--priority N] [--dont-filter]``: add a
request to a running crawl."""

import argh

from crawlfw.commands import command
from crawlfw.commands._control import json_arg, print_json, send, target


@argh.arg("crawl_or_url", metavar="[CRAWL]",
          help="crawl id, spider name or pid (default: the only running crawl)")
@argh.arg("url", metavar="URL", help="the URL to crawl")
@argh.arg("--callback", metavar="NAME", help="the spider method that parses the page "
                                             "(default: parse)")
@argh.arg("--priority", type=int, metavar="N", help="request priority (higher first)")
@argh.arg("--dont-filter", help="bypass the dupefilter")
@json_arg
@command(help="Add a request to a running crawl")
def schedule(crawl_or_url, url=None, *, settings=None, callback=None, priority=0,
             dont_filter=False, json=False):
    """Schedule ``URL`` in the crawl (through the dupefilter unless ``--dont-filter``),
    parsed by the spider method ``--callback``. Exit status 1 when no crawl or several
    match, or the crawl refuses the request (bad URL, no such spider method)."""
    crawl = crawl_or_url if url is not None else None
    url = url if url is not None else crawl_or_url
    endpoint, found = target(crawl)
    reply = send(endpoint, {"type": "schedule_request", "crawl_id": found["crawl_id"],
                            "url": url, "callback": callback or None,
                            "priority": int(priority), "dont_filter": bool(dont_filter)})
    if json:
        print_json({"pid": endpoint["pid"], **reply})
    else:
        print(f"Scheduled {url} in {found['crawl_id']} (pid {endpoint['pid']})")
