"""Link (crawlfw.link)."""

import pytest

from crawlfw.link import Link


def test_attributes_and_defaults():
    link = Link("http://www.example.com")
    assert (link.url, link.text, link.fragment, link.nofollow) == ("http://www.example.com", "", "", False)
    link = Link("http://e.com/#x", text="t", fragment="x", nofollow=True)
    assert (link.url, link.text, link.fragment, link.nofollow) == ("http://e.com/#x", "t", "x", True)


@pytest.mark.parametrize(
    "a, b, equal",
    [
        (Link("http://e.com"), Link("http://e.com"), True),
        (Link("http://e.com", "t", "f", True), Link("http://e.com", "t", "f", True), True),
        (Link("http://e.com"), Link("http://e.com/"), False),
        (Link("http://e.com", text="a"), Link("http://e.com", text="b"), False),
        (Link("http://e.com", fragment="a"), Link("http://e.com", fragment="b"), False),
        (Link("http://e.com", nofollow=True), Link("http://e.com", nofollow=False), False),
    ],
)
def test_eq_and_hash(a, b, equal):
    assert (a == b) is equal
    assert (a != b) is not equal
    if equal:
        assert hash(a) == hash(b)
        assert len({a, b}) == 1


def test_not_equal_to_other_types():
    assert Link("http://e.com") != "http://e.com"


def test_repr_round_trips():
    link = Link("http://www.example.com", text="test", fragment="something", nofollow=True)
    assert repr(link) == (
        "Link(url='http://www.example.com', text='test', fragment='something', nofollow=True)"
    )
    assert eval(repr(link)) == link


@pytest.mark.parametrize("url", [b"http://www.example.com", None, 3])
def test_url_must_be_str(url):
    with pytest.raises(TypeError, match="Link urls must be str objects"):
        Link(url)


def test_slots():
    with pytest.raises(AttributeError):
        Link("http://e.com").other = 1
