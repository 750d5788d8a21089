"""The item pipeline manager (Scrapy 1.2's ``scrapy.pipelines``).

The item processor class is chosen by the ``ITEM_PROCESSOR`` setting.
"""

import logging

from crawlfw.middleware import MiddlewareManager
from crawlfw.utils.conf import build_component_list

__all__ = ["ItemPipelineManager"]

logger = logging.getLogger(__name__)


class ItemPipelineManager(MiddlewareManager):
    """Runs the pipelines listed in ``ITEM_PIPELINES`` merged over ``ITEM_PIPELINES_BASE``.

    Pipelines run in ascending order of their numbers; each pipeline's
    ``process_item(item, spider)`` receives what the previous one returned.
    Methods run synchronously on the caller's thread (the item pipeline actor).
    """

    component_name = 'item pipeline'

    @classmethod
    def _get_mwlist_from_settings(cls, settings):
        return build_component_list(settings.getwithbase('ITEM_PIPELINES'))

    def _add_middleware(self, pipe):
        super()._add_middleware(pipe)
        if hasattr(pipe, 'process_item'):
            self.methods['process_item'].append(pipe.process_item)

    def process_item(self, item, spider):
        """Pass an item through every pipeline.

        As in Scrapy 1.2, a pipeline returning None passes None on to the next
        pipeline (and None is the final item); a WARNING names that pipeline, since
        it is almost always a missing ``return item``.

        Args:
            item: the scraped item (an Item or a dict).
            spider: the spider that scraped it.

        Returns:
            The item returned by the last pipeline.

        Raises:
            crawlfw.exceptions.DropItem: a pipeline dropped the item (later
                pipelines are not called).
            Exception: whatever a pipeline raised.
        """
        for method in self.methods['process_item']:
            item = method(item, spider)
            if item is None:
                owner = getattr(method, '__self__', None)
                name = type(owner).__name__ if owner is not None else repr(method)
                logger.warning("Item pipeline %(pipeline)s.process_item returned None: "
                               "return the item, or raise DropItem to drop it",
                               {'pipeline': name}, extra={'spider': spider})
        return item
