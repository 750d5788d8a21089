"""Private regular-expression extraction behind ``Selector.re()`` (parsel's rules)."""

import re

from w3lib.html import replace_entities as _replace_entities

__all__ = ["extract_regex"]

_compile = re.compile


def extract_regex(regex, text, replace_entities=True):
    """Apply ``regex`` to ``text`` and return the extracted strings.

    Rules (Scrapy 1.2 / parsel):

    * a named group ``extract`` -> only its value from the first match;
    * otherwise ``re.findall``: the whole match, or every numbered group of every
      match, flattened in order;
    * entities other than ``&lt;`` and ``&amp;`` are replaced by their characters
      when ``replace_entities`` is true.

    Args:
        regex: a pattern ``str`` or a compiled pattern.
        text: the ``str`` to search.
        replace_entities: whether to decode HTML character references.

    Returns:
        A list of ``str`` (possibly empty).

    Raises:
        re.error: ``regex`` is a string that is not a valid pattern.
    """
    if isinstance(regex, str):
        regex = _compile(regex)
    if "extract" in regex.groupindex:
        match = regex.search(text)
        if match is None:
            strings = []
        else:
            value = match.group("extract")
            strings = [] if value is None else [value]
    else:
        found = regex.findall(text)
        if found and type(found[0]) is tuple:
            strings = [s for groups in found for s in groups]
        else:
            strings = found
    if not replace_entities:
        return strings
    return [_replace_entities(s, keep=["lt", "amp"]) if "&" in s else s for s in strings]
