"""``InitSpider``: a spider that makes initialization requests (e.g. a login) before its
start requests (Scrapy 1.2's ``scrapy.spiders.init``).

Deprecated: override ``start_requests()`` instead, yielding the initialization request
and yielding the real start requests from its callback. It stays public for ported code.
"""

import warnings

from crawlfw.exceptions import CrawlfwDeprecationWarning
from crawlfw.spiders import Spider
from crawlfw.utils.spider import iterate_spider_output

__all__ = ["InitSpider"]


class InitSpider(Spider):
    """Base spider with initialization requests (deprecated, see the module docstring).

    ``start_requests()`` yields what :meth:`init_request` returns; the callback of the
    last initialization request must be :meth:`initialized`, which returns the spider's
    normal start requests (those of ``Spider.start_requests``).

    Warns:
        CrawlfwDeprecationWarning: when a spider is created.
    """

    def __init__(self, *a, **kw):
        warnings.warn(
            "InitSpider is deprecated: override start_requests() to make the "
            "initialization requests, and yield the start requests from their callback",
            category=CrawlfwDeprecationWarning,
            stacklevel=2,
        )
        super().__init__(*a, **kw)

    def start_requests(self):
        """Keep the normal start requests aside and return the initialization ones."""
        self._postinit_reqs = super().start_requests()
        return iterate_spider_output(self.init_request())

    def initialized(self, response=None):
        """Callback of the last initialization request: return the start requests.

        Args:
            response: the last initialization response (unused).

        Returns:
            The iterable of the spider's normal start requests.

        Raises:
            KeyError: called twice, or before ``start_requests()``.
        """
        return self.__dict__.pop("_postinit_reqs")

    def init_request(self):
        """Return the initialization request(s), the last one with
        ``callback=self.initialized``.

        Several requests in sequence are fine (chain them through their callbacks) as
        long as the final callback is :meth:`initialized`. The default calls
        :meth:`initialized` at once: no initialization.
        """
        return self.initialized()
