"""Frontier: what to download next, in memory, on disk (:mod:`.frontier`) or shared over
Redis (:mod:`.redis_frontier`, :mod:`.redis_slot`, :mod:`.redis_link`), behind Scrapy's
scheduler interface (:mod:`.scheduler`)."""
