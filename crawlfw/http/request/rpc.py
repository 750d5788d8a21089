""":class:`XmlRpcRequest`: a Request carrying an XML-RPC call (Scrapy 1.2's ``scrapy.http.request.rpc``).

See the XML-RPC specification (http://xmlrpc.com/spec.md).
"""

from __future__ import annotations

import xmlrpc.client as xmlrpclib

from crawlfw.http.request import Request
from crawlfw.utils.python import get_func_args

__all__ = ["XmlRpcRequest"]

#: The keyword arguments of ``xmlrpc.client.dumps``: params, methodname,
#: methodresponse, encoding, allow_none.
DUMPS_ARGS = get_func_args(xmlrpclib.dumps)


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
            kw = {k: kwargs.pop(k) for k in DUMPS_ARGS if k in kwargs}
            if not isinstance(kw.get("params"), tuple):
                raise TypeError(
                    f"XmlRpcRequest params must be a tuple, got {type(kw.get('params')).__name__}"
                )
            kwargs["body"] = xmlrpclib.dumps(**kw)
        kwargs.setdefault("method", "POST")
        kwargs.setdefault("dont_filter", True)
        if encoding is not None:
            kwargs["encoding"] = encoding
        super().__init__(*args, **kwargs)
        self.headers.setdefault("Content-Type", "text/xml")
