"""Debugging extensions: dump every thread's stack, or enter pdb, on a Unix signal."""

import logging
import signal
import sys
import threading
import traceback
from pdb import Pdb

__all__ = ["StackTraceDump", "Debugger"]

logger = logging.getLogger(__name__)


def _format_engine_status(engine):
    try:
        from crawlfw.utils.engine import format_engine_status
    except ImportError:
        return ''
    try:
        return format_engine_status(engine)
    except Exception as e:  # a dump must never fail because of the engine report
        return f'(engine status unavailable: {e!r})'


def _format_live_refs():
    try:
        from crawlfw.utils.trackref import format_live_refs
    except ImportError:
        return ''
    return format_live_refs()


class StackTraceDump:
    """On SIGUSR2 or SIGQUIT, logs (INFO) the stack of every thread and the engine status.

    crawlfw runs each actor on its own thread, so the dump lists all threads
    (from :func:`sys._current_frames`), each headed ``# Thread: <name>(<id>)``.
    Signal handlers can only be installed from the main thread: built elsewhere,
    the extension logs that at DEBUG and does nothing (Windows has no SIGUSR2).

    Args:
        crawler: the crawler (its ``engine`` is reported when available).
    """

    def __init__(self, crawler=None):
        self.crawler = crawler
        try:
            signal.signal(signal.SIGUSR2, self.dump_stacktrace)
            signal.signal(signal.SIGQUIT, self.dump_stacktrace)
        except (AttributeError, ValueError) as e:
            logger.debug("StackTraceDump not installed: %(error)s", {'error': e})

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def dump_stacktrace(self, signum, frame):
        """Signal handler: log every thread's stack, the engine status and live refs."""
        log_args = {
            'stackdumps': self._thread_stacks(),
            'enginestatus': _format_engine_status(getattr(self.crawler, 'engine', None)),
            'liverefs': _format_live_refs(),
        }
        logger.info("Dumping stack trace and engine status\n"
                    "%(enginestatus)s\n%(liverefs)s\n%(stackdumps)s",
                    log_args, extra={'crawler': self.crawler})

    def _thread_stacks(self):
        id2name = {th.ident: th.name for th in threading.enumerate()}
        dumps = []
        for id_, frame in sys._current_frames().items():
            name = id2name.get(id_, '')
            dump = ''.join(traceback.format_stack(frame))
            dumps.append(f"# Thread: {name}({id_})\n{dump}\n")
        return ''.join(dumps)


class Debugger:
    """On SIGUSR2, enters pdb in the main thread's current frame (main thread only)."""

    def __init__(self):
        try:
            signal.signal(signal.SIGUSR2, self._enter_debugger)
        except (AttributeError, ValueError) as e:
            logger.debug("Debugger not installed: %(error)s", {'error': e})

    def _enter_debugger(self, signum, frame):
        Pdb().set_trace(frame.f_back)
