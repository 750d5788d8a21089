"""What every message family uses: :class:`Rule` (JSON Schema keywords a type cannot say)
and the field aliases (``Count``, ``Url``...); see :mod:`crawlfw.actors.messages`.
"""

import sys
from typing import Annotated, Any

if sys.version_info >= (3, 11):
    pass
else:  # NotRequired came in 3.11 (PEP 655); typing's TypedDict of 3.10 ignores it.
    # typing_extensions comes with jsonschema (its `referencing` requires it below 3.13).
    pass


from crawlfw.item import AnyItem


class Rule:
    """JSON Schema keywords that a Python type cannot say, for ``Annotated[T, Rule(...)]``.

    ``Annotated[int, Rule(minimum=1)]`` is ``{"type": "integer", "minimum": 1}``; the
    keywords (``minimum``, ``maximum``, ``minLength``, ``maxLength``, ``minItems``,
    ``pattern``...) are merged into the schema of ``T`` as written (draft 2020-12).

    Args:
        **keywords: JSON Schema keyword -> JSON value.
    """

    __slots__ = ("keywords",)

    def __init__(self, **keywords):
        self.keywords = keywords

    def __repr__(self):
        return f"Rule({', '.join(f'{k}={v!r}' for k, v in self.keywords.items())})"


Message = dict[str, Any]
"""Any message: a dict with at least ``type`` (str)."""

Item = AnyItem
"""A scraped item of any type ``itemadapter`` adapts: a dict, a ``crawlfw.item.Item``, a
dataclass, attrs or pydantic instance (``crawlfw.item.AnyItem``)."""

Count = Annotated[int, Rule(minimum=0)]
"""A number of things (requests, items, bytes): 0 or more."""

Reason = Annotated[str, Rule(minLength=1)]
"""A ``finish_reason`` (``"finished"``, ``"shutdown"``, ``"closespider_timeout"``...)."""

CrawlId = Annotated[str, Rule(minLength=1)]
"""A crawl's id as the Supervisor named it (``"<spider name>-<n>"``)."""

Url = Annotated[str, Rule(minLength=1, maxLength=8192)]
"""An absolute URL, as JSON text."""

Headers = dict[str, list[str]]
"""Header name -> list of values (str)."""
