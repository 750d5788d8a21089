"""The item pipeline manager (Scrapy 1.2's ``scrapy.pipelines``).

The item processor class is chosen by the ``ITEM_PROCESSOR`` setting.
"""

import logging

from crawlfw.item import ITEM_TYPES
from crawlfw.middleware import MiddlewareManager, _method_name, component_method
from crawlfw.utils.conf import build_component_list

__all__ = ["ItemPipelineManager", "InvalidOutput"]


class InvalidOutput(TypeError):
    """An item pipeline's ``process_item`` returned something that is not an item
    (the message names the pipeline); the item is not exported (logged as "Error
    processing <item>", ``item_error`` sent, counted in ``invalid_output/<Pipeline>.
    process_item``)."""

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
            self.methods['process_item'].append(component_method(pipe, 'process_item'))

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
            InvalidOutput: a pipeline returned something else than an item or None
                (an ``async def process_item`` is awaited first).
            Exception: whatever a pipeline raised.
        """
        for method in self.methods['process_item']:
            item = method(item, spider)
            if item is not None and not isinstance(item, ITEM_TYPES):
                self._count_invalid_output(method)
                raise InvalidOutput(
                    f"Item pipeline {_method_name(method)} must return an item, None or "
                    f"raise DropItem, got {type(item).__name__!r}")
            if item is None:
                owner = getattr(method, '__self__', None)
                name = type(owner).__name__ if owner is not None else repr(method)
                logger.warning("Item pipeline %(pipeline)s.process_item returned None: "
                               "return the item, or raise DropItem to drop it",
                               {'pipeline': name}, extra={'spider': spider})
        return item
