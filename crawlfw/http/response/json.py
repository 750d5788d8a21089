""":class:`JsonResponse`: a text response holding JSON (Scrapy 2's
``scrapy.http.response.json``), made for the ``application/json`` MIME types.

Everything is :class:`~crawlfw.http.TextResponse`'s: ``json()`` parses the body, and
its selector reads it as JSON (``response.jmespath(...)`` where parsel has it).
"""

from crawlfw.http.response.text import TextResponse

__all__ = ["JsonResponse"]


class JsonResponse(TextResponse):
    """A :class:`TextResponse` for JSON documents (``application/json``,
    ``application/x-json``, ``application/json-amazonui-streaming``)."""
