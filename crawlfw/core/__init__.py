"""The plain, thread-free logic the actors own, one folder per subsystem: ``transport/``,
``frontier/``, ``flow/``, ``feeds/``, ``control/`` (ARCHITECTURE.md, "Where each piece lives").
``scheduler``, ``scraper`` and ``spidermw`` here are Scrapy's public paths (re-exports)."""
