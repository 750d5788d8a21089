"""Feeds: feed writing (:mod:`.feeds`), its plug-in points (:mod:`.plugins`) and storages
(:mod:`.storage`)."""
