"""crawlfw.utils._names.public_class_name: the class name stats show (issue 34)."""

import pytest

from crawlfw.exceptions import DropItem, NotSupported
from crawlfw.http import Response
from crawlfw.utils._names import public_class_name


class _Private(ValueError):
    pass


class _MorePrivate(_Private):
    pass


class Public(_Private):
    pass


class _AllPrivate:
    pass


def _not_text_class():
    """The class a binary response's ``css()`` raises (a private NotSupported)."""
    try:
        Response("http://example.com/", body=b"\x00").css("p")
    except NotSupported as e:
        return type(e)
    raise AssertionError("css() on a binary response did not raise NotSupported")


@pytest.mark.parametrize("cls, name", [
    (ValueError, "ValueError"),
    (DropItem, "DropItem"),
    (_Private, "ValueError"),
    (_MorePrivate, "ValueError"),
    (Public, "Public"),
    (_AllPrivate, "_AllPrivate"),
])
def test_public_class_name(cls, name):
    assert public_class_name(cls) == name


def test_a_binary_responses_css_error_is_named_not_supported():
    """Scrapy 2.19 counts it as spider_exceptions/NotSupported."""
    cls = _not_text_class()
    assert cls.__name__.startswith("_")  # crawlfw's private subclass
    assert public_class_name(cls) == "NotSupported"
