"""``crawl``/``runspider --workers N``: N worker processes of one crawl on this machine,
sharing the frontier named by ``FRONTIER_URL``, their items merged into the one feed of
``-o``.

Each worker is the same command run as a child process (``python -m crawlfw.cmdline``)
with ``FRONTIER_WORKER=<base>-<i>`` (``<base>``: ``FRONTIER_WORKER`` or the host name)
and its own JSON Lines part file, ``<part dir>/<worker id>.jl``, whose committed length
is kept in the shared frontier with the worker's acks. Before any worker starts, the
parent checks the Redis (:func:`crawlfw.core.frontier.redis_link.check_server`): a malformed
URL, a wrong password, a server that does not speak Redis or an evicting
``maxmemory-policy`` end the command at once, in one line, exit status 1.

A worker that crashed (killed by a signal, or gone without reporting how its crawl
ended) is started again under the same id, at most :data:`MAX_RESTARTS` times, with
``FRONTIER_JOIN_ONLY`` (it must find the crawl in Redis): it cuts its part back to what
it committed and goes on, so no item is lost or written twice. A worker that stopped on
purpose (its crawl ended with a failure reason such as ``frontier_failed``, or its start
was refused) reports its reason through the file named by ``CRAWLFW_WORKER_REPORT`` and
is not restarted: the parent stops the other workers and exits with status 1, naming
that reason. Parts left by an earlier run make every worker join only, so a Redis that
lost the crawl (restarted without persistence, flushed) is refused instead of crawled
again from the start. When every worker has finished, the parent writes the
items of all parts, in worker order, to the feed of ``-o`` (any format and storage, by
:class:`crawlfw.core.feeds.feeds.FeedWriter`) and removes the parts. Interrupted (^C), it
leaves the parts in place: the same command resumes the crawl and its parts.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import signal
import socket
import sys
import time
from pathlib import Path

from crawlfw.exceptions import UsageError

logger = logging.getLogger(__name__)

__all__ = ["run_workers", "report_to_parent"]

#: The environment variable naming the file where a worker reports how its crawl ended.
REPORT_ENV = "CRAWLFW_WORKER_REPORT"

#: Times one worker is started again after a failure, before the parent gives up on it.
MAX_RESTARTS = 5

#: Seconds between checks of the workers.
_POLL_S = 0.2

#: Settings the parent sets for each worker itself.
_OWN = ("FEED_URI", "FEED_FORMAT", "FEEDS", "FRONTIER_WORKER", "FRONTIER_JOIN_ONLY")


def report_to_parent(reason: str) -> None:
    """In a worker started by ``--workers``: write how its crawl ended (``reason``: a
    finish reason, or ``start_failed: ...``) to the file named by
    :data:`REPORT_ENV`, so the parent does not restart a worker that stopped on
    purpose. Nothing happens outside a ``--workers`` worker."""
    path = os.environ.get(REPORT_ENV)
    if not path:
        return
    try:
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"finish_reason": reason}, f)
    except OSError:
        pass  # (the parent then takes the exit for a crash)


def _read_report(path: Path):
    """The finish reason a worker reported, or None (none: it crashed)."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f).get("finish_reason")
    except (OSError, ValueError, AttributeError):
        return None


def run_workers(settings, workers: int, command: list, spargs: dict, spidercls) -> None:
    """Run ``workers`` worker processes of one shared crawl and merge their feeds.

    Args:
        settings: the command's :class:`~crawlfw.settings.Settings` (``-s`` and ``-o``
            applied at ``'cmdline'`` priority; those are passed on to the workers).
        workers: how many worker processes (>= 1).
        command: the command and its positional argument, e.g.
            ``['runspider', 'spider.py']`` or ``['crawl', 'myspider']``.
        spargs: the spider arguments (``-a``), passed on.
        spidercls: the spider class (its ``name`` and attributes resolve ``-o``).

    Raises:
        UsageError: ``FRONTIER_URL`` is not set, or ``workers`` < 1.
        SystemExit: status 1 when the Redis cannot be used, or a worker did not finish
            (the parts are kept).
    """
    if not settings.get("FRONTIER_URL"):
        raise UsageError("--workers needs a shared frontier: set FRONTIER_URL "
                         "(e.g. -s FRONTIER_URL=redis://127.0.0.1:6379/0)")
    if workers < 1:
        raise UsageError(f"--workers must be at least 1, not {workers}")
    from crawlfw.utils.log import configure_logging

    configure_logging(settings)
    from crawlfw.core.feeds.feed_settings import feeds_from_settings
    from crawlfw.core.frontier.frontier import FrontierError
    from crawlfw.core.frontier.redis_link import RedisLink, check_server

    link = RedisLink()  # ^C while waiting for the Redis ends the wait
    old = {sig: signal.signal(sig, lambda *_: link.stopping.set())
           for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        check_server(settings["FRONTIER_URL"],
                     settings.getfloat("FRONTIER_RETRY_TIMEOUT", 300.0), link=link)
    except FrontierError as e:
        logger.error("Crawl could not start: shared frontier: %(error)s", {"error": e})
        sys.exit(1)
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)

    # -o, -O, FEEDS (the settings', else the spider's custom_settings'): the workers
    # write parts only (FEEDS={} for them), merged into each feed at the end
    feed_settings = settings.copy()
    spidercls.update_settings(feed_settings)
    feeds = feeds_from_settings(feed_settings)
    output = (feeds[0][0] or feed_settings.get("FEED_URI")) if feeds else None
    base = settings.get("FRONTIER_WORKER") or socket.gethostname()
    ids = [f"{base}-{i}" for i in range(1, workers + 1)]
    parts = _parts_dir(str(output), spidercls.name) if output else None
    args = [sys.executable, "-m", "crawlfw.cmdline", *command]
    for name, value in spargs.items():
        args += ["-a", f"{name}={value}"]
    for name in settings:
        if name not in _OWN and settings.getpriority(name) == _cmdline_priority():
            args += ["-s", f"{name}={_as_text(settings[name])}"]

    log_format = None
    if settings.getpriority("LOG_FORMAT") != _cmdline_priority():  # lines name the worker
        log_format = settings["LOG_FORMAT"].replace("[%(name)s]", "[{wid}] [%(name)s]", 1)

    # subprocess and tempfile only here: a crawl without --workers imports neither
    import subprocess
    import tempfile

    reports = Path(tempfile.mkdtemp(prefix="crawlfw-workers-"))
    # Parts of an earlier run: the crawl has a history, so it must be found in Redis.
    join_only = parts is not None and any(p.stat().st_size for p in parts.glob("*.jl"))

    def start(wid, join_only):
        # no feed of the settings or custom_settings in a worker: the parent writes them
        own = ["-s", f"FRONTIER_WORKER={wid}", "-s", "FEEDS={}"]
        if join_only or settings.getbool("FRONTIER_JOIN_ONLY"):
            own += ["-s", "FRONTIER_JOIN_ONLY=True"]
        report = reports / f"{wid}.json"
        report.unlink(missing_ok=True)
        env = {**os.environ, REPORT_ENV: str(report)}
        if parts is not None:
            part = str(parts / f"{wid}.jl").replace("%", "%%")
            own += ["-s", f"FEED_URI={part}", "-s", "FEED_FORMAT=jsonlines"]
        if log_format is not None:
            own += ["-s", f"LOG_FORMAT={log_format.replace('{wid}', wid)}"]
        # A session of its own: a ^C reaches the parent, which passes it on once; a
        # worker whose parent dies stops as on ^C (Linux), so no orphan keeps its id.
        return subprocess.Popen([*args, *own], start_new_session=True, env=env,
                                preexec_fn=_stop_with_parent)

    if parts is not None:
        parts.mkdir(parents=True, exist_ok=True)
    logger.info("Starting %(n)d workers (%(ids)s) on %(url)s%(parts)s",
                {"n": workers, "ids": ", ".join(ids), "url": settings["FRONTIER_URL"],
                 "parts": f"; their items in {parts}/" if parts else ""})
    procs = {wid: start(wid, join_only) for wid in ids}
    restarts = dict.fromkeys(ids, 0)
    codes = {}
    reasons = {}  # worker id -> the failure it stopped on, on purpose
    interrupted = []

    def on_signal(signum, frame):
        interrupted.append(signum)
        for wid, proc in procs.items():
            if wid not in codes:
                proc.send_signal(signal.SIGINT if len(interrupted) < 3 else signal.SIGKILL)

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        while len(codes) < len(ids):
            time.sleep(_POLL_S)
            for wid, proc in procs.items():
                if wid in codes or proc.poll() is None:
                    continue
                code = proc.returncode
                reason = _read_report(reports / f"{wid}.json")
                if code != 0 and reason is not None and not interrupted and not reasons:
                    # Stopped on purpose (frontier_failed, a refused start...): the same
                    # would happen again, so the crawl ends here.
                    reasons[wid] = reason
                    logger.error("Worker %(id)s stopped: %(reason)s (exit status %(code)s); "
                                 "not restarted: stopping the other workers",
                                 {"id": wid, "reason": reason, "code": code})
                    for other, p in procs.items():
                        if other not in codes and other != wid and p.poll() is None:
                            p.send_signal(signal.SIGINT)
                elif (code != 0 and reason is None and not interrupted and not reasons
                        and restarts[wid] < MAX_RESTARTS):
                    restarts[wid] += 1
                    logger.warning("Worker %(id)s exited with status %(code)s: starting it "
                                   "again (restart %(n)d of %(max)d; it resumes its part)",
                                   {"id": wid, "code": code, "n": restarts[wid],
                                    "max": MAX_RESTARTS})
                    procs[wid] = start(wid, True)  # it ran: the crawl must be in Redis
                    continue
                codes[wid] = code
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
        shutil.rmtree(reports, ignore_errors=True)
    failed = {wid: code for wid, code in codes.items() if code != 0}
    if failed or interrupted or reasons:
        where = f"; the items so far are in {parts}/" if parts else ""
        why = "".join(f"; {w}: {r}" for w, r in reasons.items())
        logger.error("Workers stopped before the crawl finished (exit status: %(codes)s)"
                     "%(why)s%(where)s: run the same command again to resume",
                     {"codes": ", ".join(f"{w} {c}" for w, c in codes.items()),
                      "why": why, "where": where})
        sys.exit(1)
    if parts is not None:
        _merge(feed_settings, spidercls, spargs, parts, ids, feeds)


def _merge(settings, spidercls, spargs, parts: Path, ids, feeds) -> None:
    """Write the items of every part, worker by worker, to each feed (``-o``, ``-O``,
    ``FEEDS``: ``[(uri, options)]`` as :func:`crawlfw.core.feeds.feed_settings.feeds_from_settings`
    gives them), then remove the parts."""
    from crawlfw.core.feeds.feeds import FeedWriter

    spider = spidercls(**spargs)
    stored = True
    for uri, options in feeds:
        writer = FeedWriter(settings, spider, uri=uri, options=options)
        writer.open()
        for wid in ids:
            part = parts / f"{wid}.jl"
            if not part.exists():
                continue
            with open(part, "rb") as f:
                for line in f:
                    if line.endswith(b"\n"):  # (a worker's part is whole once it finished)
                        writer.export_item(json.loads(line))
        result = writer.close()
        stored = stored and (result["stored"] or not result["itemcount"])
    if stored:
        shutil.rmtree(parts, ignore_errors=True)
    else:
        logger.error("The workers' items stay in %(parts)s/", {"parts": parts})
        sys.exit(1)


def _parts_dir(output: str, spider_name: str) -> Path:
    """Where the workers' part files go: ``<-o file>.parts`` beside a local ``-o``
    file (``%(...)s`` placeholders kept as their names), else
    ``crawlfw-<spider>.parts`` in the current directory (stdout, FTP, S3 feeds)."""
    from crawlfw.core.feeds.feed_settings import uri_scheme

    plain = re.sub(r"%\((\w+)\)s", r"\1", output)
    if output != "-" and uri_scheme(output) in ("", "file"):
        path = plain[len("file://"):] if plain.startswith("file://") else plain
        return Path(path + ".parts")
    return Path(f"crawlfw-{spider_name}.parts")


def _stop_with_parent() -> None:
    """In the child, before exec: ask Linux for SIGINT when the parent dies
    (``prctl(PR_SET_PDEATHSIG)``); elsewhere nothing."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGINT))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _cmdline_priority() -> int:
    from crawlfw.settings import get_settings_priority

    return get_settings_priority("cmdline")


def _as_text(value) -> str:
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value)
    return str(value)
