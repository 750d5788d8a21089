"""Downloader middlewares shipped with crawlfw (Scrapy 1.2's set, same module names).

One component per module; each is enabled through ``DOWNLOADER_MIDDLEWARES_BASE`` and
run by :class:`crawlfw.core.flow.downloadermw.DownloaderMiddlewareManager`:

==================  =========================================  ===========================
module              class                                      switched by
==================  =========================================  ===========================
robotstxt           RobotsTxtMiddleware                        ROBOTSTXT_OBEY
httpauth            HttpAuthMiddleware                         spider.http_user/http_pass
downloadtimeout     DownloadTimeoutMiddleware                  DOWNLOAD_TIMEOUT
defaultheaders      DefaultHeadersMiddleware                   DEFAULT_REQUEST_HEADERS
useragent           UserAgentMiddleware                        USER_AGENT
retry               RetryMiddleware                            RETRY_ENABLED
ajaxcrawl           AjaxCrawlMiddleware                        AJAXCRAWL_ENABLED
redirect            MetaRefreshMiddleware, RedirectMiddleware  METAREFRESH_ENABLED,
                                                               REDIRECT_ENABLED
httpcompression     HttpCompressionMiddleware                  COMPRESSION_ENABLED
cookies             CookiesMiddleware                          COOKIES_ENABLED
httpproxy           HttpProxyMiddleware                        HTTPPROXY_ENABLED
chunked             ChunkedTransferMiddleware                  (no-op: curl de-chunks)
stats               DownloaderStats                            DOWNLOADER_STATS
httpcache           HttpCacheMiddleware                        HTTPCACHE_ENABLED
decompression       DecompressionMiddleware                    not enabled by default
==================  =========================================  ===========================

The modules are imported on demand (by ``load_object`` from the settings), so this
package exports nothing itself.
"""

__all__: list[str] = []
