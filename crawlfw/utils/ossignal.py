"""OS signal helpers (Scrapy 1.2's ``scrapy.utils.ossignal``, without the reactor)."""

import signal

__all__ = ["signal_names", "install_shutdown_handlers"]

#: ``{signal number: name}``, e.g. ``{2: 'SIGINT', 15: 'SIGTERM'}``.
signal_names = {}
for _signame in dir(signal):
    if _signame.startswith('SIG') and not _signame.startswith('SIG_'):
        _signum = getattr(signal, _signame)
        if isinstance(_signum, int):
            signal_names.setdefault(int(_signum), _signame)


def install_shutdown_handlers(function, override_sigint=True):
    """Install ``function(signum, frame)`` for the shutdown signals.

    SIGTERM always; SIGINT unless ``override_sigint`` is False and a handler other
    than Python's default (e.g. pdb's) is already installed; SIGBREAK on Windows.
    Must be called from the main thread (a Python rule for ``signal.signal``).

    Args:
        function (callable): the handler.
        override_sigint (bool): replace an existing custom SIGINT handler.

    Raises:
        ValueError: called from a thread other than the main thread.
    """
    signal.signal(signal.SIGTERM, function)
    if signal.getsignal(signal.SIGINT) == signal.default_int_handler or override_sigint:
        signal.signal(signal.SIGINT, function)
    # Ctrl-Break on Windows
    if hasattr(signal, 'SIGBREAK'):
        signal.signal(signal.SIGBREAK, function)
