"""Helpers for the file templates of ``crawlfw startproject`` and ``crawlfw genspider``
(Scrapy 1.2's ``scrapy.utils.template``)."""

import os
import re
import string

__all__ = ["render_templatefile", "string_camelcase", "CAMELCASE_INVALID_CHARS"]

#: The characters :func:`string_camelcase` removes: anything but ASCII letters and digits.
CAMELCASE_INVALID_CHARS = re.compile(r"[^a-zA-Z\d]")


def render_templatefile(path: str, **kwargs) -> str:
    """Substitute ``$name``/``${name}`` placeholders in a UTF-8 template file, in place.

    The text is rendered with :class:`string.Template` (``$$`` is a literal ``$``). A
    ``*.tmpl`` file is written without its ``.tmpl`` suffix and the template removed;
    any other file is overwritten.

    Args:
        path: the template file.
        **kwargs: the placeholder values (str).

    Returns:
        The path of the rendered file.

    Raises:
        KeyError: the template uses a placeholder not given in ``kwargs``.
        ValueError: the template has a malformed placeholder (a lone ``$``).
        OSError: the file cannot be read or written.
    """
    with open(path, "rb") as fp:
        raw = fp.read().decode("utf8")
    content = string.Template(raw).substitute(**kwargs)
    render_path = path[: -len(".tmpl")] if path.endswith(".tmpl") else path
    with open(render_path, "wb") as fp:
        fp.write(content.encode("utf8"))
    if path.endswith(".tmpl"):
        os.remove(path)
    return render_path


def string_camelcase(string: str) -> str:
    """Return a word in CamelCase with every non-alphanumeric character removed.

    >>> string_camelcase('lost-pound')
    'LostPound'
    >>> string_camelcase('missing_images')
    'MissingImages'

    Args:
        string: the word (a project or spider name).

    Returns:
        str: the title-cased word keeping ASCII letters and digits only.
    """
    return CAMELCASE_INVALID_CHARS.sub("", string.title())
