"""Scrapy 1.2's ``ChunkedTransferMiddleware``, kept as a documented no-op.

Scrapy 1.2 decoded ``Transfer-Encoding: chunked`` bodies here because its old HTTP/1.0
client did not. crawlfw's downloader is libcurl, which always removes the transfer
coding (RFC 7230 §4.1) before the body reaches any middleware, so there is nothing
left to do. The class exists so settings that name it (to enable, disable or reorder
it) keep working.
"""

__all__ = ["ChunkedTransferMiddleware"]


class ChunkedTransferMiddleware:
    """No-op: libcurl has already de-chunked the body. Returns the response unchanged."""

    def process_response(self, request, response, spider):
        return response
