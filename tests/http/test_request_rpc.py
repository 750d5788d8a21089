import xmlrpc.client

import pytest

from crawlfw.http import Request, XmlRpcRequest


@pytest.mark.parametrize(
    ("kwargs", "params", "methodname"),
    [
        ({"params": ("value",)}, ("value",), None),
        (
            {"params": ("username", "password"), "methodname": "login"},
            ("username", "password"),
            "login",
        ),
        ({"params": ({"k": [1, 2.5, True]},), "methodname": "m"}, ({"k": [1, 2.5, True]},), "m"),
        ({"params": ("caf\u00e9",), "methodname": "m", "encoding": "latin1"}, ("caf\u00e9",), "m"),
        ({"params": (None,), "methodname": "m", "allow_none": True}, (None,), "m"),
    ],
)
def test_body_is_a_loadable_xmlrpc_call(kwargs, params, methodname):
    r = XmlRpcRequest("http://scrapytest.org/rpc2", **kwargs)
    assert r.method == "POST"
    assert r.dont_filter is True
    assert r.headers["Content-Type"] == b"text/xml"
    assert r.encoding == kwargs.get("encoding", "utf-8")
    assert xmlrpc.client.loads(r.body) == (params, methodname)


def test_latin1_body_bytes():
    r = XmlRpcRequest("http://x/rpc", params=("caf\u00e9",), methodname="m", encoding="latin1")
    assert b"caf\xe9" in r.body
    assert b"encoding='latin1'" in r.body


def test_defaults_can_be_overridden():
    r = XmlRpcRequest(
        "http://x/rpc",
        params=(1,),
        method="PUT",
        dont_filter=False,
        headers={"Content-Type": "a/b"},
    )
    assert r.method == "PUT"
    assert r.dont_filter is False
    assert r.headers["Content-Type"] == b"a/b"


def test_explicit_body():
    r = XmlRpcRequest("http://x/rpc", body=b"<raw/>")
    assert r.body == b"<raw/>"
    assert r.method == "POST"


def test_body_and_params_together_are_refused():
    with pytest.raises(TypeError, match="either body or params, not both"):
        XmlRpcRequest("http://x/rpc", body=b"<raw/>", params=(1,))


def test_params_must_be_a_tuple():
    with pytest.raises(TypeError, match="XmlRpcRequest params must be a tuple, got list"):
        XmlRpcRequest("http://x/rpc", params=[1, 2])


def test_replace_keeps_body():
    r = XmlRpcRequest("http://x/rpc", params=(1,), methodname="m")
    r2 = r.replace(priority=2)
    assert type(r2) is XmlRpcRequest
    assert r2.body == r.body
    assert isinstance(r2, Request)


def test_dumps_args_is_read_from_xmlrpc_dumps_on_first_access():
    import xmlrpc.client

    from crawlfw.http.request import rpc
    from crawlfw.utils.python import get_func_args

    assert rpc.DUMPS_ARGS == get_func_args(xmlrpc.client.dumps)
    assert rpc.xmlrpclib is xmlrpc.client
    with pytest.raises(AttributeError, match="no_such_name"):
        rpc.no_such_name  # noqa: B018
