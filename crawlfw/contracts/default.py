"""The contracts enabled by default (``SPIDER_CONTRACTS_BASE``): Scrapy 1.2's
``scrapy.contracts.default`` (``@url``, ``@returns``, ``@scrapes``) and Scrapy 2's
(``@cb_kwargs``, ``@meta``; Scrapy 2.19's ``@method``, ``@body``, ``@header``,
``@cookie``), as in Scrapy 2.19's ``SPIDER_CONTRACTS_BASE``.
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
    "MethodContract",
    "BodyContract",
    "HeaderContract",
    "CookieContract",
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


class MethodContract(Contract):
    """``@method METHOD``: the request's HTTP method (Scrapy 2.19).

    Example: ``@method POST``

    Raises:
        ValueError: no method given, or more than one word.
    """

    name = "method"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if len(self.args) != 1 or not self.args[0]:
            raise ValueError(f"@method takes one HTTP method, got {' '.join(self.args)!r}")

    def adjust_request_args(self, args):
        args["method"] = self.args[0]
        return args


class BodyContract(Contract):
    """``@body TEXT``: the request's body, the rest of the line (its words joined by one
    space; Scrapy 2.19).

    Example: ``@body field1=value1&field2=value2``
    """

    name = "body"

    def adjust_request_args(self, args):
        args["body"] = " ".join(self.args)
        return args


class HeaderContract(Contract):
    """``@header NAME VALUE``: one header of the request, one line per header; the
    value is the rest of the line (Scrapy 2.19).

    Example: ``@header Accept-Language fr``

    Raises:
        ValueError: no header name given.
    """

    name = "header"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.args or not self.args[0]:
            raise ValueError("@header takes a header name and its value")

    def adjust_request_args(self, args):
        args["headers"] = {**(args.get("headers") or {}),
                           self.args[0]: " ".join(self.args[1:])}
        return args


class CookieContract(Contract):
    """``@cookie NAME VALUE``: one cookie of the request, one line per cookie; the value
    is the rest of the line (Scrapy 2.19).

    Example: ``@cookie session abc123``

    Raises:
        ValueError: no cookie name given.
    """

    name = "cookie"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.args or not self.args[0]:
            raise ValueError("@cookie takes a cookie name and its value")

    def adjust_request_args(self, args):
        args["cookies"] = {**(args.get("cookies") or {}),
                           self.args[0]: " ".join(self.args[1:])}
        return args


def _is_request(obj) -> bool:
    return isinstance(obj, Request)


def _is_item(obj) -> bool:
    return isinstance(obj, ITEM_TYPES)


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

    KIND is looked up in ``object_type_verifiers`` (Scrapy 2.19: ``{kind: callable(obj)
    -> bool}``), then in ``objects`` (``{kind: class or tuple of classes}``): a subclass
    adds kinds to either.

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
    object_type_verifiers = {
        "request": _is_request,
        "requests": _is_request,
        "item": _is_item,
        "items": _is_item,
    }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not 1 <= len(self.args) <= 3 or not self.args[0]:
            raise ValueError(
                "@returns takes 1 to 3 arguments: request(s)/item(s) [min [max]], "
                f"got {' '.join(self.args)!r}"
            )
        self.obj_name = self.args[0]
        self.obj_type = self.objects.get(self.obj_name)
        verifier = self.object_type_verifiers.get(self.obj_name)
        if verifier is None:
            if self.obj_type is None:
                kinds = sorted({*self.objects, *self.object_type_verifiers})
                raise ValueError(f"@returns: unknown kind {self.obj_name!r} "
                                 f"(expected one of {', '.join(kinds)})")
            obj_type = self.obj_type

            def verifier(obj):
                return isinstance(obj, obj_type)
        self.obj_type_verifier = verifier
        try:
            self.min_bound = int(self.args[1]) if len(self.args) > 1 else 1
            self.max_bound = int(self.args[2]) if len(self.args) > 2 else float("inf")
        except ValueError:
            raise ValueError(
                f"@returns bounds must be integers, got {' '.join(self.args[1:])!r}"
            ) from None

    def post_process(self, output):
        verifier = self.obj_type_verifier
        occurrences = sum(1 for x in output if verifier(x))
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
