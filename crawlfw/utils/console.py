"""Interactive Python consoles for ``crawlfw shell`` (Scrapy 1.2's ``scrapy.utils.console``).

The console is chosen from a list of names, first available wins: ``ptpython`` (a
dependency of crawlfw), ``ipython`` and ``bpython`` when installed, and ``python`` (the
standard library's :func:`code.interact`, always available). Without a terminal on
standard input, or off the main thread, only ``python`` is used: prompt_toolkit needs
both.
"""

import code
import logging
import os
import sys
import threading
from collections import OrderedDict

__all__ = ["DEFAULT_PYTHON_SHELLS", "get_shell_embed_func", "start_python_console"]


def _history_filename():
    """``$XDG_STATE_HOME/crawlfw/shell_history`` (default ``~/.local/state``), or None
    when the directory cannot be created."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    directory = os.path.join(base, "crawlfw")
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError:
        return None
    return os.path.join(directory, "shell_history")


class _CurrentStderr:
    """A stream writing to whatever ``sys.stderr`` is at the time of each write, so
    that log lines go through ptpython's ``patch_stdout`` while a prompt is shown."""

    def write(self, text):
        return sys.stderr.write(text)

    def flush(self):
        sys.stderr.flush()


class _LogsAbovePrompt:
    """Point the root logger's stderr handlers at :class:`_CurrentStderr` for a while."""

    def __enter__(self):
        self.swapped = []
        for handler in logging.root.handlers:
            stream = getattr(handler, "stream", None)
            if isinstance(handler, logging.StreamHandler) and stream in (sys.stderr,
                                                                          sys.__stderr__):
                self.swapped.append((handler, handler.setStream(_CurrentStderr())))
        return self

    def __exit__(self, *exc):
        for handler, stream in self.swapped:
            handler.setStream(stream)


def _embed_ptpython_shell(namespace, banner):
    """Start a ptpython shell (``patch_stdout`` keeps background output above the prompt)."""
    import ptpython.repl

    if banner:
        print(banner)
    with _LogsAbovePrompt():
        ptpython.repl.embed(globals=namespace, locals=namespace, patch_stdout=True,
                            history_filename=_history_filename())


def _embed_ipython_shell(namespace, banner):
    """Start an IPython shell (when IPython is installed)."""
    from IPython.terminal.embed import InteractiveShellEmbed
    from IPython.terminal.ipapp import load_default_config

    config = load_default_config()
    shell = InteractiveShellEmbed.instance(banner1=banner, user_ns=namespace, config=config)
    shell()


def _embed_bpython_shell(namespace, banner):
    """Start a bpython shell (when bpython is installed)."""
    import bpython

    bpython.embed(locals_=namespace, banner=banner)


def _embed_standard_shell(namespace, banner):
    """Start the standard library's console, with tab completion when readline exists."""
    try:
        import readline
    except ImportError:
        pass
    else:
        import rlcompleter

        readline.set_completer(rlcompleter.Completer(namespace).complete)
        readline.parse_and_bind("tab: complete")
    code.interact(banner=banner, local=namespace, exitmsg="")


#: Console name -> (module that must be importable, embed function(namespace, banner)).
DEFAULT_PYTHON_SHELLS = OrderedDict([
    ("ptpython", ("ptpython.repl", _embed_ptpython_shell)),
    ("ipython", ("IPython", _embed_ipython_shell)),
    ("bpython", ("bpython", _embed_bpython_shell)),
    ("python", (None, _embed_standard_shell)),
])

#: Consoles that need a terminal on stdin and the main thread.
_NEED_TTY = {"ptpython", "ipython", "bpython"}


def _importable(module_name):
    if module_name is None:
        return True
    try:
        __import__(module_name)
    except ImportError:
        return False
    return True


def get_shell_embed_func(shells=None, known_shells=None):
    """Return the embed function of the first usable console in ``shells``.

    Args:
        shells: console names in order of preference (default: every known one).
            Unknown names are skipped.
        known_shells: name -> (module, embed function) (default
            :data:`DEFAULT_PYTHON_SHELLS`).

    Returns:
        A function ``embed(namespace: dict, banner: str)``, or None when none is usable.
    """
    if known_shells is None:
        known_shells = DEFAULT_PYTHON_SHELLS
    if shells is None:
        shells = list(known_shells)
    interactive = sys.stdin is not None and sys.stdin.isatty() and (
        threading.current_thread() is threading.main_thread()
    )
    for shell in shells:
        shell = shell.strip().lower()
        if shell not in known_shells:
            continue
        if shell in _NEED_TTY and not interactive:
            continue
        module_name, func = known_shells[shell]
        if _importable(module_name):
            return func
    return None


def start_python_console(namespace=None, banner="", shells=None):
    """Start an interactive Python console with ``namespace`` as its variables.

    Blocks until the user leaves the console (Ctrl-D, ``exit()``). ``python``
    (:func:`code.interact`) is always tried last.

    Args:
        namespace: the console's globals (dict); a new one when None.
        banner: text printed before the first prompt.
        shells: console names in order of preference (``ptpython``, ``ipython``,
            ``bpython``, ``python``); default: that order.
    """
    if namespace is None:
        namespace = {}
    shells = list(shells or DEFAULT_PYTHON_SHELLS) + ["python"]
    embed = get_shell_embed_func(shells)
    try:
        embed(namespace=namespace, banner=banner)
    except SystemExit:  # exit() in the console
        pass
