"""The contracts enabled by default (``SPIDER_CONTRACTS_BASE``), Scrapy 1.2's
``scrapy.contracts.default``, plus two of later Scrapy (``@cb_kwargs``, ``@meta``) that
can be enabled in ``SPIDER_CONTRACTS``.
"""

import json

from crawlfw.contracts import Contract
from crawlfw.exceptions import ContractFail
from crawlfw.http import Request
from crawlfw.item import ITEM_TYPES, BaseItem

__all__ = [
    "UrlContract",
    "ReturnsContract",
    "ScrapesContract",
    "CallbackKeywordArgumentsContract",
    "MetadataContract",
]


class UrlContract(Contract):
    """``@url URL``: the URL the request for the callback fetches (needed to test it).

    Example: ``@url http://quotes.toscrape.com/page/1/``
    """

    name = "url"

    def adjust_request_args(self, args):
        args["url"] = self.args[0]
        return args


class CallbackKeywordArgumentsContract(Contract):
    """``@cb_kwargs JSON``: keyword arguments for the callback, a JSON object (later
    Scrapy's contract; enable it in ``SPIDER_CONTRACTS``).

    Example: ``@cb_kwargs {"page": 2}``

    Raises:
        ValueError: the argument is not a JSON object.
    """

    name = "cb_kwargs"

    def adjust_request_args(self, args):
        args["cb_kwargs"] = _json_object(self.name, self.args)
        return args


class MetadataContract(Contract):
    """``@meta JSON``: the request's ``meta``, a JSON object (later Scrapy's contract;
    enable it in ``SPIDER_CONTRACTS``).

    Example: ``@meta {"dont_redirect": true}``

    Raises:
        ValueError: the argument is not a JSON object.
    """

    name = "meta"

    def adjust_request_args(self, args):
        args["meta"] = _json_object(self.name, self.args)
        return args


def _json_object(name, words):
    text = " ".join(words)
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"@{name} needs a JSON object, got {text!r}: {exc}") from None
    if not isinstance(value, dict):
        raise ValueError(f"@{name} needs a JSON object, got {text!r}")
    return value


class ReturnsContract(Contract):
    """``@returns KIND [MIN [MAX]]``: the callback returns between MIN (default 1) and
    MAX (default unbounded) objects of KIND: ``request``/``requests`` (``Request``) or
    ``item``/``items`` (an item of any type: ``dict``, ``Item``, dataclass, attrs,
    pydantic...).

    Examples: ``@returns requests``, ``@returns items 1 10``, ``@returns request 0 0``.

    Raises:
        ValueError: not 1 to 3 arguments, an unknown KIND, or bounds that are not
            integers.
        ContractFail: (from the check) ``"Returned N items, expected MIN..MAX"``
            (``"expected N"`` when MIN == MAX).
    """

    name = "returns"
    objects = {
        "request": Request,
        "requests": Request,
        "item": ITEM_TYPES,
        "items": ITEM_TYPES,
    }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not 1 <= len(self.args) <= 3 or not self.args[0]:
            raise ValueError(
                "@returns takes 1 to 3 arguments: request(s)/item(s) [min [max]], "
                f"got {' '.join(self.args)!r}"
            )
        self.obj_name = self.args[0]
        try:
            self.obj_type = self.objects[self.obj_name]
        except KeyError:
            raise ValueError(
                f"@returns: unknown kind {self.obj_name!r} "
                f"(expected one of {', '.join(sorted(self.objects))})"
            ) from None
        try:
            self.min_bound = int(self.args[1]) if len(self.args) > 1 else 1
            self.max_bound = int(self.args[2]) if len(self.args) > 2 else float("inf")
        except ValueError:
            raise ValueError(
                f"@returns bounds must be integers, got {' '.join(self.args[1:])!r}"
            ) from None

    def post_process(self, output):
        occurrences = sum(1 for x in output if isinstance(x, self.obj_type))
        if not self.min_bound <= occurrences <= self.max_bound:
            if self.min_bound == self.max_bound:
                expected = self.min_bound
            else:
                expected = f"{self.min_bound}..{self.max_bound}"
            raise ContractFail(f"Returned {occurrences} {self.obj_name}, expected {expected}")


class ScrapesContract(Contract):
    """``@scrapes FIELD ...``: every item the callback returns has these fields.

    Example: ``@scrapes title price``

    Raises:
        ContractFail: (from the check) ``"'FIELD' field is missing"`` for the first
            missing field of the first incomplete item.
    """

    name = "scrapes"

    def post_process(self, output):
        for x in output:
            if isinstance(x, ITEM_TYPES):
                if not isinstance(x, (BaseItem, dict)):
                    from itemadapter import ItemAdapter

                    x = ItemAdapter(x)
                for arg in self.args:
                    if arg not in x:
                        raise ContractFail(f"'{arg}' field is missing")
