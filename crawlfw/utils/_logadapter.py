"""The spider's logger adapter, kept apart from :mod:`crawlfw.utils.log` (its public
place) so :mod:`crawlfw.spiders` can use it without importing the logging setup."""

import logging
from collections.abc import MutableMapping

__all__ = ["SpiderLoggerAdapter"]


class SpiderLoggerAdapter(logging.LoggerAdapter):
    """A :class:`logging.LoggerAdapter` that adds its ``extra`` to a record's own
    ``extra`` instead of replacing it (Scrapy 2.12's spider logger): a spider's
    ``self.logger.info(msg, extra={"url": url})`` keeps ``url`` and gains ``spider``.
    """

    def process(self, msg, kwargs):
        """Merge the adapter's ``extra`` into ``kwargs['extra']`` (a mapping given by the
        caller is updated in place; anything else is replaced).

        Returns:
            tuple[str, MutableMapping]: ``msg`` and the keyword arguments.
        """
        if isinstance(kwargs.get("extra"), MutableMapping):
            kwargs["extra"].update(self.extra)
        else:
            kwargs["extra"] = self.extra
        return msg, kwargs
