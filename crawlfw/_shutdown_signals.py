"""SIGINT/SIGTERM of a process object, through a pipe (private to :mod:`crawlfw.crawler`)."""

import os
import signal
import threading

from crawlfw.utils.ossignal import install_shutdown_handlers

__all__ = ["ShutdownSignals"]


class ShutdownSignals:
    """The SIGINT/SIGTERM handling of a ``CrawlerProcess``, open from :meth:`open` to
    :meth:`close`.

    The handlers only write the signal's number to a pipe (async-signal-safe, no lock):
    a handler that took a lock could interrupt its own thread holding that lock (an
    ``Event.wait``) and hang for ever. A daemon thread (``crawlfw-signals``) reads the
    pipe and calls ``graceful(signum)`` for the first signal, ``forced(signum)`` for the
    second; later ones are ignored. :meth:`close` ends the thread and closes the pipe.

    Args:
        graceful (callable): ``graceful(signum)``, called on the thread.
        forced (callable): ``forced(signum)``, called on the thread.

    Attributes:
        previous (dict): ``{signal: handler}`` installed before :meth:`open` (empty
            when opened from another thread than the main thread).
    """

    def __init__(self, graceful, forced):
        self._graceful = graceful
        self._forced = forced
        self._write_fd: int | None = None  # the pipe's write end while open
        self.previous: dict = {}

    @property
    def is_open(self) -> bool:
        """True between :meth:`open` and :meth:`close`."""
        return self._write_fd is not None

    def open(self) -> None:
        """Open the pipe, start the thread reading it and install the handlers.

        Raises:
            ValueError: called from a thread other than the main thread (Python installs
                signal handlers from the main thread only).
        """
        read_fd, self._write_fd = os.pipe()
        threading.Thread(target=self._read, args=(read_fd,), name="crawlfw-signals",
                         daemon=True).start()
        self.previous = _shutdown_handlers()
        install_shutdown_handlers(self._first)

    def restore_handlers(self) -> None:
        """Put back the handlers of before :meth:`open` (from the main thread only;
        elsewhere nothing is done)."""
        if threading.current_thread() is not threading.main_thread():
            return
        for sig, handler in self.previous.items():
            if handler is not None:
                signal.signal(sig, handler)

    def close(self, restore: bool = True) -> None:
        """With ``restore``, :meth:`restore_handlers`; then close the pipe's write end:
        the thread reads the end of it, closes the read end and ends. Safe to call more
        than once."""
        if restore:
            self.restore_handlers()
        write_fd, self._write_fd = self._write_fd, None
        if write_fd is not None:
            os.close(write_fd)

    def _first(self, signum, _):
        install_shutdown_handlers(self._second)
        self._write(signum)

    def _second(self, signum, _):
        install_shutdown_handlers(signal.SIG_IGN)
        self._write(signum | 0x80)

    def _write(self, byte: int) -> None:
        write_fd = self._write_fd
        if write_fd is None:  # closed from another thread: nothing left to stop
            return
        try:
            os.write(write_fd, bytes((byte,)))
        except OSError:  # closed meanwhile on another thread
            pass

    def _read(self, read_fd: int) -> None:
        try:
            while True:
                try:
                    data = os.read(read_fd, 16)
                except OSError:
                    return
                if not data:
                    return
                for byte in data:
                    if byte & 0x80:
                        self._forced(byte & 0x7F)
                    else:
                        self._graceful(byte)
        finally:
            os.close(read_fd)


def _shutdown_handlers() -> dict:
    """The current handlers of the shutdown signals (from the main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    names = ("SIGTERM", "SIGINT", "SIGBREAK")
    return {sig: signal.getsignal(sig) for sig in
            (getattr(signal, name) for name in names if hasattr(signal, name))}
