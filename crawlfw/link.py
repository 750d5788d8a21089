"""The :class:`Link` objects link extractors return (Scrapy 1.2's ``scrapy.link``)."""

__all__ = ["Link"]


class Link:
    """A link found in a page.

    Args:
        url: the absolute URL the link points to (``str``).
        text: the link's text (the anchor's string value).
        fragment: the part of the URL after ``#`` (link extractors leave it in ``url``
            and this empty, as Scrapy 1.2 does).
        nofollow: True when the element's ``rel`` attribute contains ``nofollow``
            (HTML Living Standard, "link types").

    Raises:
        TypeError: ``url`` is not a ``str``.
    """

    __slots__ = ["url", "text", "fragment", "nofollow"]

    def __init__(self, url, text="", fragment="", nofollow=False):
        if not isinstance(url, str):
            raise TypeError(f"Link urls must be str objects, got {url.__class__.__name__}")
        self.url = url
        self.text = text
        self.fragment = fragment
        self.nofollow = nofollow

    def __eq__(self, other):
        if not isinstance(other, Link):
            return NotImplemented
        return (
            self.url == other.url
            and self.text == other.text
            and self.fragment == other.fragment
            and self.nofollow == other.nofollow
        )

    def __hash__(self):
        return hash(self.url) ^ hash(self.text) ^ hash(self.fragment) ^ hash(self.nofollow)

    def __repr__(self):
        return (
            f"Link(url={self.url!r}, text={self.text!r}, "
            f"fragment={self.fragment!r}, nofollow={self.nofollow!r})"
        )
