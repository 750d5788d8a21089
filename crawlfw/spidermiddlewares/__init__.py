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
package exports nothing itself; importing it registers the default middlewares' output
chain in one pass (``_default_chain.py``) with the manager.
"""

__all__: list[str] = []

# The default middlewares' output chain in one pass, offered to the manager (core/ does
# not import components: they register with it).
from crawlfw.core.flow.spidermw import SpiderMiddlewareManager as _Manager  # noqa: E402
from crawlfw.spidermiddlewares._default_chain import default_chain_output as _run  # noqa: E402
from crawlfw.spidermiddlewares._default_chain import default_chain_plan as _plan  # noqa: E402

_Manager.register_output_shortcut(_plan, _run)
del _Manager, _plan, _run
