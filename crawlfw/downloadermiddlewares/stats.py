"""Download statistics: request/response counts and bytes, exceptions by type."""

from crawlfw.exceptions import NotConfigured
from crawlfw.utils.request import request_httprepr
from crawlfw.utils.response import response_httprepr

__all__ = ["DownloaderStats"]


class DownloaderStats:
    """Count what goes through the downloader, in the crawler's stats.

    Keys (Scrapy 1.2's): ``downloader/request_count``,
    ``downloader/request_method_count/<METHOD>``, ``downloader/request_bytes`` (length
    of the request's HTTP/1.1 representation), ``downloader/response_count``,
    ``downloader/response_status_count/<status>``, ``downloader/response_bytes``
    (length of the response's HTTP/1.1 representation, as decoded by the
    middlewares below this one), ``downloader/exception_count`` and
    ``downloader/exception_type_count/<module.ClassName>``.

    Disabled (``NotConfigured``) when ``DOWNLOADER_STATS`` is false.

    Args:
        stats: the crawler's stats collector.
    """

    def __init__(self, stats):
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler):
        if not crawler.settings.getbool("DOWNLOADER_STATS"):
            raise NotConfigured
        return cls(crawler.stats)

    def process_request(self, request, spider):
        self.stats.inc_value("downloader/request_count", spider=spider)
        self.stats.inc_value(f"downloader/request_method_count/{request.method}", spider=spider)
        reqlen = len(request_httprepr(request))
        self.stats.inc_value("downloader/request_bytes", reqlen, spider=spider)

    def process_response(self, request, response, spider):
        self.stats.inc_value("downloader/response_count", spider=spider)
        self.stats.inc_value(f"downloader/response_status_count/{response.status}", spider=spider)
        reslen = len(response_httprepr(response))
        self.stats.inc_value("downloader/response_bytes", reslen, spider=spider)
        return response

    def process_exception(self, request, exception, spider):
        ex_class = f"{type(exception).__module__}.{type(exception).__name__}"
        self.stats.inc_value("downloader/exception_count", spider=spider)
        self.stats.inc_value(f"downloader/exception_type_count/{ex_class}", spider=spider)
