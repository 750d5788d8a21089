""":class:`XmlResponse`: a text response holding XML (Scrapy 1.2's ``scrapy.http.response.xml``).

Its encoding may be declared by the XML declaration ``<?xml version="1.0" encoding="..."?>``
(XML 1.0 section 4.3.3); see :mod:`crawlfw.http.response.text`.
"""

from crawlfw.http.response.text import TextResponse

__all__ = ["XmlResponse"]


class XmlResponse(TextResponse):
    """A :class:`TextResponse` for XML documents (``text/xml``, RSS, Atom...)."""

    _selector_type = "xml"  # what crawlfw.selector parses it as (it imports no http class)
