"""The extension manager (Scrapy 1.2's ``scrapy.extension``)."""

from crawlfw.middleware import MiddlewareManager
from crawlfw.utils.conf import build_component_list

__all__ = ["ExtensionManager"]


class ExtensionManager(MiddlewareManager):
    """Builds the extensions listed in ``EXTENSIONS`` merged over ``EXTENSIONS_BASE``.

    Extensions usually do their work by connecting to ``crawler.signals`` in
    ``from_crawler``; the manager only keeps them alive and calls their
    ``open_spider``/``close_spider`` methods, if any.
    """

    component_name = 'extension'
    components_setting = 'EXTENSIONS'

    @classmethod
    def _get_mwlist_from_settings(cls, settings):
        return build_component_list(settings.getwithbase('EXTENSIONS'))
