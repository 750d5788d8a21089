"""Spider middlewares shipped with crawlfw (Scrapy 1.2's set, same module names).

One component per module, enabled through ``SPIDER_MIDDLEWARES_BASE`` and run by
:class:`crawlfw.core.spidermw.SpiderMiddlewareManager`:

==========  ======================  =====================================
module      class                   switched by
==========  ======================  =====================================
httperror   HttpErrorMiddleware     HTTPERROR_ALLOWED_CODES, _ALLOW_ALL
offsite     OffsiteMiddleware       spider.allowed_domains
referer     RefererMiddleware       REFERER_ENABLED
urllength   UrlLengthMiddleware     URLLENGTH_LIMIT
depth       DepthMiddleware         DEPTH_LIMIT, DEPTH_PRIORITY, DEPTH_STATS
==========  ======================  =====================================

The modules are imported on demand (by ``load_object`` from the settings), so this
package exports nothing itself.
"""

__all__: list[str] = []
