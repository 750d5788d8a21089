"""``crawlfw status [CRAWL] [--json]``: the live figures of one running crawl."""

from crawlfw.commands import command
from crawlfw.commands._control import (
    crawl_arg,
    human_bytes,
    human_duration,
    json_arg,
    print_json,
    target,
)


def format_status(pid: int, crawl: dict) -> str:
    """The human-readable status of ``crawl`` (a ``status_reported`` crawl dict)."""
    slots = ", ".join(f"{k}: {v}" for k, v in sorted(crawl["slots"].items()) if v)
    errors = ", ".join(f"{k}: {v}" for k, v in sorted(crawl["errors"].items())) or "none"
    in_flight = "?" if crawl["in_flight"] is None else crawl["in_flight"]
    lines = [
        ("crawl", f"{crawl['crawl_id']} (spider {crawl['spider']}, pid {pid})"),
        ("state", crawl["state"]),
        ("pages", f"{crawl['pages']} ({crawl['pages_per_min']:.1f}/min over the last minute)"),
        ("items", f"{crawl['items']} ({crawl['items_per_min']:.1f}/min over the last minute)"),
        ("pending", str(crawl["pending"])),
        ("in flight", f"{in_flight}" + (f" ({slots})" if slots else "")),
        ("errors", errors),
        ("peak memory", human_bytes(crawl["peak_memory_bytes"])),
        ("uptime", human_duration(crawl["uptime_s"])),
        ("JOBDIR", crawl["jobdir"] or "-"),
    ]
    stats = crawl.get("stats") or {}
    if "frontier/memory_bytes" in stats:  # the in-memory frontier (no JOBDIR)
        lines.append(("frontier", f"{human_bytes(stats['frontier/memory_bytes'])} in memory, "
                                  f"{human_bytes(stats.get('frontier/disk_bytes', 0))} on "
                                  f"disk (queued requests)"))
    if "revisit/scheduled" in stats:  # a continuous crawl (REVISIT_ENABLED)
        lines.append(("revisits", format_revisits(stats)))
    dns = crawl.get("dns")
    if dns:
        rate = "-" if dns["hit_rate"] is None else f"{dns['hit_rate']:.0%}"
        lines.insert(6, ("dns", f"{dns['in_flight']} lookups in flight ({dns['queued']} "
                                f"queued), cache hit rate {rate} ({dns['cache_hits']} hits, "
                                f"{dns['lookups']} lookups, {dns['failures']} failed)"))
    shared = crawl.get("shared")
    if shared:
        lines.append(("whole crawl", f"{shared['pages']} pages, {shared['items']} items, "
                                     f"{shared['queued']} queued, {shared['leased']} leased "
                                     f"(shared frontier, {len(shared['workers'])} workers)"))
        for w in shared["workers"]:
            seen = "never" if w["last_seen_s"] is None else f"{w['last_seen_s']:.0f} s ago"
            lines.append(("  worker", f"{w['worker']}: {w['pages']} pages, {w['items']} items, "
                                      f"last seen {seen}"))
    return "\n".join(f"{name:<12}{value}" for name, value in lines)


def format_revisits(stats: dict, now: float | None = None) -> str:
    """The revisit schedule's line of ``crawlfw status``: pages scheduled, due now (pushed
    and not answered yet), when the next one is due, pages found changed and unchanged.

    Args:
        stats: the crawl's stats (``revisit/*``).
        now: the wall-clock time (``time.time()``; None: now).
    """
    import time

    now = time.time() if now is None else now
    next_due = stats.get("revisit/next_due")
    if next_due is None:
        when = "none"
    elif next_due <= now:
        when = "now"
    else:
        when = f"in {human_duration(next_due - now)}"
    return (f"{stats.get('revisit/scheduled', 0)} pages scheduled, "
            f"{stats.get('revisit/due_now', 0)} due now, next due {when}; "
            f"{stats.get('revisit/changed', 0)} changed, "
            f"{stats.get('revisit/unchanged', 0)} unchanged "
            f"({stats.get('revisit/not_modified', 0)} answered 304), "
            f"{stats.get('revisit/gone', 0)} gone")


@crawl_arg
@json_arg
@command(help="Show the live figures of a running crawl")
def status(crawl=None, *, settings=None, json=False):
    """Print state, pages, items, pending and in-flight requests (per download slot),
    pages/min and items/min over the last minute, errors by type, peak memory, uptime
    and JOBDIR of one crawl, DNS lookups in flight and the DNS cache's hit rate, the
    bytes its queued requests take in memory and on disk (without a JOBDIR), the revisit
    schedule of a continuous crawl (``REVISIT_ENABLED``: pages scheduled, due now, next
    due, changed and unchanged); with a
    shared frontier (``FRONTIER_URL``) also the whole
    crawl's figures and its workers. Exit status 1 when no crawl or several match."""
    endpoint, found = target(crawl)
    if json:
        print_json({"pid": endpoint["pid"], **found})
    else:
        print(format_status(endpoint["pid"], found))
