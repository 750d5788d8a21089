"""Link extractors: find the links of a response to follow (Scrapy 1.2's
``scrapy.linkextractors``).

:class:`LinkExtractor` (an alias of
:class:`~crawlfw.linkextractors.lxmlhtml.LxmlLinkExtractor`) is the one to use.
:class:`FilteringLinkExtractor` holds the filtering rules shared by extractors:

* only ``http``, ``https``, ``file`` and ``ftp`` URLs are kept (``javascript:``,
  ``mailto:``, ``data:``... are skipped);
* ``allow`` / ``deny``: regexes searched in the absolute URL (deny wins);
* ``allow_domains`` / ``deny_domains``: the host or any of its subdomains;
* ``deny_extensions``: URLs whose path ends in one of these extensions are skipped
  (default: :data:`IGNORED_EXTENSIONS`);
* ``restrict_xpaths`` / ``restrict_css``: only links inside these regions;
* ``canonicalize``: URLs passed through ``w3lib.url.canonicalize_url``.
"""

from crawlfw.linkextractors._filtering import (  # noqa: F401  (the private ones: Scrapy's too)
    IGNORED_EXTENSIONS,
    FilteringLinkExtractor,
    _is_valid_url,
    _matches,
    _re_type,
)
from crawlfw.linkextractors.lxmlhtml import LxmlLinkExtractor as LinkExtractor

__all__ = ["IGNORED_EXTENSIONS", "FilteringLinkExtractor", "LinkExtractor"]
