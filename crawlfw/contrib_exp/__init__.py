"""Scrapy 1.2's deprecated ``scrapy.contrib_exp`` modules, as ``crawlfw.contrib_exp.*``
aliases (importing one warns): ``downloadermiddleware.decompression`` ->
:mod:`crawlfw.downloadermiddlewares.decompression`, ``iterators`` ->
:mod:`crawlfw.utils.iterators`."""

from crawlfw._moved import install_moved_modules

install_moved_modules(
    {
        f"{__name__}.downloadermiddleware.decompression": (
            "crawlfw.downloadermiddlewares.decompression", ["DecompressionMiddleware"]),
        f"{__name__}.iterators": ("crawlfw.utils.iterators", ["xmliter_lxml"]),
    },
    packages=[f"{__name__}.downloadermiddleware"],
)
