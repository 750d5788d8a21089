""":class:`XmlRpcRequest`: a Request carrying an XML-RPC call (Scrapy 1.2's ``scrapy.http.request.rpc``).

See the XML-RPC specification (http://xmlrpc.com/spec.md).
"""

from __future__ import annotations

from typing import Any

from crawlfw.http.request import Request
from crawlfw.utils.python import get_func_args

__all__ = ["XmlRpcRequest"]

# ``xmlrpc.client`` (about 3 ms of imports) is imported when an XmlRpcRequest is first
# built or DUMPS_ARGS first read, not with crawlfw.http.
_DUMPS_ARGS: list | None = None


def _dumps_args() -> list:
    """The keyword arguments of ``xmlrpc.client.dumps`` (params, methodname,
    methodresponse, encoding, allow_none), read from its signature once."""
    global _DUMPS_ARGS
    if _DUMPS_ARGS is None:
        import xmlrpc.client

        _DUMPS_ARGS = get_func_args(xmlrpc.client.dumps)
    return _DUMPS_ARGS


def __getattr__(name: str) -> Any:
    """``DUMPS_ARGS`` (Scrapy's public name: the keyword arguments of
    ``xmlrpc.client.dumps``) and ``xmlrpclib`` (the module), made on first access.

    Raises:
        AttributeError: any other name.
    """
    if name == "DUMPS_ARGS":
        return _dumps_args()
    if name == "xmlrpclib":
        import xmlrpc.client

        return xmlrpc.client
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class XmlRpcRequest(Request):
    """A POST request whose body is an XML-RPC ``methodCall`` built by ``xmlrpc.client.dumps``.

    Args:
        params: tuple of call parameters (when no ``body`` is given).
        methodname: the remote method name.
        methodresponse, allow_none: passed to ``xmlrpc.client.dumps``.
        encoding: used both for the XML document and the request.
        **kwargs: other :class:`Request` arguments. ``method`` defaults to ``'POST'``
            and ``dont_filter`` to True (calls repeat on the same URL); the
            ``Content-Type`` header defaults to ``text/xml``.

    Raises:
        TypeError: ``params`` is not a tuple (``xmlrpc.client.dumps``' rule), or both
            ``params`` and ``body`` are given.
    """

    def __init__(self, *args, **kwargs):
        encoding = kwargs.get("encoding", None)
        if "body" in kwargs and "params" in kwargs:
            raise TypeError("XmlRpcRequest takes either body or params, not both")
        if "body" not in kwargs and "params" in kwargs:
            kw = {k: kwargs.pop(k) for k in _dumps_args() if k in kwargs}
            if not isinstance(kw.get("params"), tuple):
                raise TypeError(
                    f"XmlRpcRequest params must be a tuple, got {type(kw.get('params')).__name__}"
                )
            import xmlrpc.client

            kwargs["body"] = xmlrpc.client.dumps(**kw)
        kwargs.setdefault("method", "POST")
        kwargs.setdefault("dont_filter", True)
        if encoding is not None:
            kwargs["encoding"] = encoding
        super().__init__(*args, **kwargs)
        self.headers.setdefault("Content-Type", "text/xml")
