"""Pretty-printing with optional colours (Scrapy 1.2's ``scrapy.utils.display``).

Colours come from pygments when it is installed and standard output is a terminal;
pygments is not a dependency of crawlfw (ptpython happens to pull it in).
"""

import sys
from pprint import pformat as _pformat

__all__ = ["pformat", "pprint"]


def _colorize(text: str, colorize: bool = True) -> str:
    if not colorize or not sys.stdout.isatty():
        return text
    try:
        from pygments import highlight
        from pygments.formatters import TerminalFormatter
        from pygments.lexers import PythonLexer
    except ImportError:
        return text
    return highlight(text, PythonLexer(), TerminalFormatter())


def pformat(obj, *args, colorize: bool = True, **kwargs) -> str:
    """Return :func:`pprint.pformat` of ``obj``, highlighted as Python when possible.

    Args:
        obj: any object.
        *args, **kwargs: passed to :func:`pprint.pformat` (``indent``, ``width``...).
        colorize: highlight with pygments when stdout is a TTY and pygments is installed.

    Returns:
        str (with ANSI colour codes when highlighted).
    """
    return _colorize(_pformat(obj, *args, **kwargs), colorize)


def pprint(obj, *args, colorize: bool = True, **kwargs) -> None:
    """Print :func:`pformat` of ``obj`` to standard output."""
    print(pformat(obj, *args, colorize=colorize, **kwargs))
