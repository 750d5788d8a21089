"""Decorators (Scrapy 1.2's ``scrapy.utils.decorators``).

Scrapy's ``defers`` and ``inthread`` return Twisted Deferreds and have no counterpart.
"""

import functools
import warnings

from crawlfw.exceptions import CrawlfwDeprecationWarning

__all__ = ["deprecated"]


def deprecated(use_instead=None):
    """Mark a function deprecated: each call warns with ``CrawlfwDeprecationWarning``.

    Use as ``@deprecated``, ``@deprecated()`` or ``@deprecated("new_function")``.

    Args:
        use_instead: the name of the replacement, named in the warning (or the function
            itself when used as ``@deprecated`` without parentheses).

    Returns:
        The decorator, or the wrapped function for the bare ``@deprecated`` form.
    """

    def deco(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            message = f"Call to deprecated function {func.__name__}."
            if use_instead:
                message += f" Use {use_instead} instead."
            warnings.warn(message, category=CrawlfwDeprecationWarning, stacklevel=2)
            return func(*args, **kwargs)

        return wrapped

    if callable(use_instead):
        func, use_instead = use_instead, None
        return deco(func)
    return deco
