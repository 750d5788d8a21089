"""Markup helpers (Scrapy 1.2's ``scrapy.utils.markup``, a transitional module).

Scrapy 1.2 re-exports ``w3lib.html`` here; new code should import from ``w3lib.html``.
"""

from w3lib.html import (
    get_base_url,
    get_meta_refresh,
    has_entities,
    remove_comments,
    remove_tags,
    remove_tags_with_content,
    replace_entities,
    replace_escape_chars,
    replace_tags,
    strip_html5_whitespace,
    unquote_markup,
)

__all__ = [
    "get_base_url",
    "get_meta_refresh",
    "has_entities",
    "remove_comments",
    "remove_tags",
    "remove_tags_with_content",
    "replace_entities",
    "replace_escape_chars",
    "replace_tags",
    "strip_html5_whitespace",
    "unquote_markup",
]
