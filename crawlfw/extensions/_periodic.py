"""A call repeated every N seconds on a daemon thread (private helper of the extensions)."""

import logging
import threading

logger = logging.getLogger(__name__)


class PeriodicCall:
    """Calls ``func()`` every ``interval_s`` seconds on a daemon thread until stopped.

    Replaces Twisted's ``LoopingCall``. Every call runs on the timer thread (so a
    slow ``func``, e.g. one sending mail, never blocks the thread that started
    it). The thread sleeps on an :class:`threading.Event` between calls (no busy
    loop) and wakes at once on :meth:`stop`. An exception raised by ``func`` is
    logged and does not stop the loop.

    Args:
        func (callable): called with no arguments, on the timer thread.
        interval_s (float): seconds between calls (> 0).
        name (str): thread name, shown in stack dumps.

    Attributes:
        first_call_done (threading.Event): set once the first call has returned.
    """

    def __init__(self, func, interval_s, name='crawlfw-periodic'):
        if not interval_s or interval_s <= 0:
            raise ValueError(f"PeriodicCall interval must be > 0 seconds, got {interval_s!r}")
        self.func = func
        self.interval_s = interval_s
        self.name = name
        self.first_call_done = threading.Event()
        self._stop = threading.Event()
        self._thread = None

    @property
    def running(self):
        """True between :meth:`start` and :meth:`stop`."""
        return self._thread is not None and not self._stop.is_set()

    def start(self, now=True, delay_s=None):
        """Start the loop; with ``now`` the first call happens at once, else after one
        interval, or after ``delay_s`` seconds when that is given (then every interval)."""
        self._thread = threading.Thread(target=self._run, args=(now, delay_s), name=self.name,
                                        daemon=True)
        self._thread.start()

    def _call(self):
        try:
            self.func()
        except Exception:
            logger.error("Error in periodic call %(name)s", {'name': self.name}, exc_info=True)
        finally:
            self.first_call_done.set()

    def _run(self, now, delay_s=None):
        if delay_s is not None:
            if self._stop.wait(delay_s):
                return
            self._call()
        elif now and not self._stop.is_set():
            self._call()
        while not self._stop.wait(self.interval_s):
            self._call()

    def stop(self, timeout_s=5.0):
        """Stop the loop and wait up to ``timeout_s`` seconds for the thread to end.

        Safe to call more than once, before :meth:`start`, and from ``func`` itself.
        """
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout_s)
