"""What the actors use of the objects above them: :class:`CrawlerLike`, defined in
``crawlfw/core/_types.py`` (the core names the crawler through it too)."""

from crawlfw.core._types import CrawlerLike

__all__ = ["CrawlerLike"]
