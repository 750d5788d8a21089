"""The item pipeline manager (Scrapy 1.2's ``scrapy.pipelines``).

The item processor class is chosen by the ``ITEM_PROCESSOR`` setting.
"""

import functools
import logging

from crawlfw.item import ITEM_TYPES
from crawlfw.middleware import MiddlewareManager, _method_name, component_method
from crawlfw.utils.conf import build_component_list

__all__ = ["ItemPipelineManager", "InvalidOutput", "AwaitingDownloads"]


class AwaitingDownloads:
    """What an item pipeline's ``process_item`` returns while the item waits for
    downloads: the requests to download and what to do with their outcomes (Scrapy
    1.2's MediaPipeline returns a Deferred; this is its continuation, made explicit).

    The Pipeline actor asks the engine for each request (a ``download`` message), goes
    on with other items, and when every outcome is in calls :meth:`resume` with them:
    the item's processing goes on from there, on the Pipeline actor's thread.

    Args:
        requests: the ``Request`` objects to download (not empty), in order.
        resume: ``resume(outcomes)`` with ``outcomes`` one per request, in order: the
            ``Response`` or the exception its download ended with. Returns the item
            (or another :class:`AwaitingDownloads`); raises as ``process_item`` would
            (``DropItem``...).
    """

    __slots__ = ("requests", "resume")

    def __init__(self, requests, resume):
        self.requests = list(requests)
        if not self.requests:
            raise ValueError("AwaitingDownloads needs at least one request")
        self.resume = resume

    def then(self, after):
        """The same wait, ``after(result)`` applied to what :meth:`resume` returns (also
        when that is another wait, once it finishes).

        Args:
            after: ``after(result) -> item or AwaitingDownloads``; may raise.

        Returns:
            AwaitingDownloads: the composed wait.
        """
        inner = self.resume

        def resume(outcomes):
            result = inner(outcomes)
            if isinstance(result, AwaitingDownloads):
                return result.then(after)
            return after(result)

        return AwaitingDownloads(self.requests, resume)

    def __repr__(self) -> str:
        return f"<AwaitingDownloads of {len(self.requests)} request(s)>"


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
    components_setting = 'ITEM_PIPELINES'

    @classmethod
    def _get_mwlist_from_settings(cls, settings):
        return build_component_list(settings.getwithbase('ITEM_PIPELINES'))

    def _add_middleware(self, pipe):
        super()._add_middleware(pipe)
        if hasattr(pipe, 'process_item'):
            self.methods['process_item'].append(component_method(pipe, 'process_item'))

    def process_item(self, item, spider):
        """Pass an item through every pipeline.

        A pipeline may return an :class:`AwaitingDownloads` (a media pipeline whose item
        waits for its files): then so does this method, its ``resume`` going on with the
        later pipelines once the downloads are done.

        As in Scrapy 1.2, a pipeline returning None passes None on to the next
        pipeline (and None is the final item); a WARNING names that pipeline, since
        it is almost always a missing ``return item``.

        Args:
            item: the scraped item (an Item or a dict).
            spider: the spider that scraped it.

        Returns:
            The item returned by the last pipeline, or an :class:`AwaitingDownloads`.

        Raises:
            crawlfw.exceptions.DropItem: a pipeline dropped the item (later
                pipelines are not called).
            InvalidOutput: a pipeline returned something else than an item or None
                (an ``async def process_item`` is awaited first).
            Exception: whatever a pipeline raised.
        """
        return self._process_from(0, item, spider)

    def _process_from(self, start, item, spider):
        """Run the pipelines from index ``start`` on ``item``."""
        methods = self.methods['process_item']
        for index in range(start, len(methods)):
            method = methods[index]
            item = method(item, spider)
            if item.__class__ is AwaitingDownloads:
                return item.then(functools.partial(self._resumed, index, spider))
            self._check_output(method, item, spider)
        return item

    def _resumed(self, index, spider, item):
        """A wait of pipeline ``index`` finished with ``item``: check it, go on."""
        self._check_output(self.methods['process_item'][index], item, spider)
        return self._process_from(index + 1, item, spider)

    def _check_output(self, method, item, spider):
        """Raise :class:`InvalidOutput` for a non-item; warn about None."""
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
