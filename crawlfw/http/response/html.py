""":class:`HtmlResponse`: a text response holding HTML (Scrapy 1.2's ``scrapy.http.response.html``).

Its encoding may be declared by ``<meta charset>`` or ``<meta http-equiv="Content-Type">``
(WHATWG HTML, "determining the character encoding"); see :mod:`crawlfw.http.response.text`.
"""

from crawlfw.http.response.text import TextResponse

__all__ = ["HtmlResponse"]


class HtmlResponse(TextResponse):
    """A :class:`TextResponse` for HTML documents (``text/html``, XHTML)."""

    _selector_type = "html"  # what crawlfw.selector parses it as (it imports no http class)
