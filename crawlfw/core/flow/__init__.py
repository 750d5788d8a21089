"""Flow: the crawl's flow control (:mod:`.flow`), the spider's code (:mod:`.scraper`) and
the spider and downloader middleware managers (:mod:`.spidermw`, :mod:`.downloadermw`)."""
