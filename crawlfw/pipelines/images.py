"""ImagesPipeline: download the images an item links to, convert them to JPEG, make
thumbnails, and store them (Scrapy 1.2's ``scrapy.pipelines.images``).

Needs Pillow (``pip install Pillow``, or crawlfw's ``images`` extra); without it the
pipeline disables itself with a warning saying so. Enable it with
``ITEM_PIPELINES = {'crawlfw.pipelines.images.ImagesPipeline': 1}`` and ``IMAGES_STORE``.
Each item's ``image_urls`` (``IMAGES_URLS_FIELD``) are downloaded; ``images``
(``IMAGES_RESULT_FIELD``) receives ``{'url', 'path', 'checksum'}`` per stored image.

Every image is stored as RGB JPEG at ``full/<SHA1 of the URL>.jpg`` (transparent PNGs
are put on white), and one thumbnail per ``IMAGES_THUMBS`` entry
(``{'small': (50, 50)}``) at ``thumbs/<name>/<SHA1 of the URL>.jpg``, fitted inside the
given size with its aspect ratio kept. Images smaller than ``IMAGES_MIN_WIDTH`` x
``IMAGES_MIN_HEIGHT`` pixels are skipped (logged at WARNING). ``checksum`` is the MD5 of
the stored full-size JPEG.

Settings: ``IMAGES_STORE``, ``IMAGES_EXPIRES`` (days, default 90), ``IMAGES_THUMBS``,
``IMAGES_MIN_WIDTH``, ``IMAGES_MIN_HEIGHT``, ``IMAGES_URLS_FIELD``,
``IMAGES_RESULT_FIELD``, ``IMAGES_STORE_S3_ACL`` and the AWS settings of
:mod:`crawlfw.pipelines.files`.
"""

import hashlib
from io import BytesIO

from crawlfw.exceptions import DropItem, NotConfigured
from crawlfw.http import Request
from crawlfw.pipelines.files import (
    FileException,
    FilesPipeline,
    _set_results,
    _url_of,
    _warn_deprecated,
)
from crawlfw.settings import Settings
from crawlfw.utils.misc import md5sum
from crawlfw.utils.python import to_bytes

try:
    from PIL import Image
except ImportError:  # optional dependency: the pipeline raises NotConfigured
    Image = None

__all__ = ["NoimagesDrop", "ImageException", "ImagesPipeline"]


class NoimagesDrop(DropItem):
    """Product with no images exception (for pipelines that drop such items)."""


class ImageException(FileException):
    """An image could not be processed (too small, unreadable...)."""


class ImagesPipeline(FilesPipeline):
    """Download, convert and thumbnail the images of ``item['image_urls']`` (see the
    module docstring).

    Args:
        store_uri: a directory, ``file://...`` or ``s3://bucket/prefix/``.
        download_func: see :class:`~crawlfw.pipelines.media.MediaPipeline`.
        settings: a ``Settings`` or dict (the ``IMAGES_*`` settings), or None:
            ``crawler.settings``.
        crawler: the Crawler (Scrapy 2.19's keyword argument; see
            :meth:`FilesPipeline.from_crawler`).

    Raises:
        NotConfigured: Pillow is not installed, or ``store_uri`` is empty
            (``IMAGES_STORE`` unset).
        ValueError: the store URI's scheme is not supported.
    """

    MEDIA_NAME = "image"

    # Upper-case attributes kept for subclasses; settings override them.
    MIN_WIDTH = 0
    MIN_HEIGHT = 0
    EXPIRES = 90
    THUMBS = {}
    DEFAULT_IMAGES_URLS_FIELD = "image_urls"
    DEFAULT_IMAGES_RESULT_FIELD = "images"
    _STORE_SETTING = "IMAGES_STORE"

    _S3_ACL_SETTING = "IMAGES_STORE_S3_ACL"

    def __init__(self, store_uri, download_func=None, settings=None, *, crawler=None):
        if Image is None:
            raise NotConfigured(
                f"{type(self).__name__} needs Pillow to process images: pip install Pillow"
            )
        super().__init__(store_uri, settings=settings, download_func=download_func,
                         crawler=crawler)
        if settings is None and crawler is not None:
            settings = crawler.settings
        if isinstance(settings, dict) or settings is None:
            settings = Settings(settings)
        resolve = self._resolver("ImagesPipeline", settings)
        self.expires = settings.getint(resolve("IMAGES_EXPIRES"), self.EXPIRES)
        if not hasattr(self, "IMAGES_RESULT_FIELD"):
            self.IMAGES_RESULT_FIELD = self.DEFAULT_IMAGES_RESULT_FIELD
        if not hasattr(self, "IMAGES_URLS_FIELD"):
            self.IMAGES_URLS_FIELD = self.DEFAULT_IMAGES_URLS_FIELD
        self.images_urls_field = settings.get(resolve("IMAGES_URLS_FIELD"),
                                              self.IMAGES_URLS_FIELD)
        self.images_result_field = settings.get(resolve("IMAGES_RESULT_FIELD"),
                                                self.IMAGES_RESULT_FIELD)
        self.min_width = settings.getint(resolve("IMAGES_MIN_WIDTH"), self.MIN_WIDTH)
        self.min_height = settings.getint(resolve("IMAGES_MIN_HEIGHT"), self.MIN_HEIGHT)
        self.thumbs = settings.get(resolve("IMAGES_THUMBS"), self.THUMBS)

    @classmethod
    def from_settings(cls, settings):
        """Build from ``IMAGES_STORE``; configures the S3 store from the AWS settings and
        ``IMAGES_STORE_S3_ACL``."""
        cls._configure_s3(settings, "IMAGES_STORE_S3_ACL")
        return cls(settings["IMAGES_STORE"], settings=settings)

    def file_downloaded(self, response, request, info):
        return self.image_downloaded(response, request, info)

    def image_downloaded(self, response, request, info):
        """Store the converted image and its thumbnails; return the MD5 hex digest of the
        full-size JPEG.

        Raises:
            ImageException: the image is smaller than the minimum size.
            PIL.UnidentifiedImageError: the body is not an image Pillow can read.
        """
        checksum = None
        for path, image, buf in self.get_images(response, request, info):
            if checksum is None:
                buf.seek(0)
                checksum = md5sum(buf)
            width, height = image.size
            self.store.persist_file(
                path, buf, info,
                meta={"width": width, "height": height},
                headers={"Content-Type": "image/jpeg"},
            )
        return checksum

    def get_images(self, response, request, info):
        """Yield ``(path, PIL image, BytesIO of its JPEG)`` for the full image, then for
        each thumbnail.

        Raises:
            ImageException: the image is smaller than ``min_width`` x ``min_height``.
        """
        path = self.file_path(request, response=response, info=info)
        orig_image = Image.open(BytesIO(response.body))
        width, height = orig_image.size
        if width < self.min_width or height < self.min_height:
            raise ImageException(
                f"Image too small ({width}x{height} < {self.min_width}x{self.min_height})"
            )
        image, buf = self.convert_image(orig_image)
        yield path, image, buf
        for thumb_id, size in self.thumbs.items():
            thumb_path = self.thumb_path(request, thumb_id, response=response, info=info)
            thumb_image, thumb_buf = self.convert_image(image, size)
            yield thumb_path, thumb_image, thumb_buf

    def convert_image(self, image, size=None):
        """Convert ``image`` to RGB (a transparent PNG on white) and, with ``size``
        ``(width, height)``, shrink a copy to fit inside it (aspect ratio kept).

        Returns:
            ``(image, BytesIO)``: the converted image and its JPEG encoding.
        """
        if image.format == "PNG" and image.mode == "RGBA":
            background = Image.new("RGBA", image.size, (255, 255, 255))
            background.paste(image, image)
            image = background.convert("RGB")
        elif image.mode != "RGB":
            image = image.convert("RGB")
        if size:
            image = image.copy()
            image.thumbnail(size, Image.Resampling.LANCZOS)
        buf = BytesIO()
        image.save(buf, "JPEG")
        return image, buf

    def get_media_requests(self, item, info):
        """One ``Request`` per URL in ``item[images_urls_field]`` (none when missing; any
        item type, read through ``itemadapter``)."""
        from itemadapter import ItemAdapter

        return [Request(x) for x in ItemAdapter(item).get(self.images_urls_field, [])]

    def item_completed(self, results, item, info):
        """Set ``item[images_result_field]`` to the successful results (when the item is
        a dict or declares that field: any item type, through ``itemadapter``); return the
        item."""
        return _set_results(item, self.images_result_field, results)

    def file_path(self, request, response=None, info=None):
        """``full/<SHA1 hex of the URL>.jpg``. Overriding the deprecated ``file_key`` or
        ``image_key`` still works, with a ``CrawlfwDeprecationWarning``."""
        url = _url_of(request, "ImagesPipeline.image_key(url) and file_key(url)")
        if not hasattr(self.file_key, "_base"):
            _warn_deprecated("ImagesPipeline.file_key(url)")
            return self.file_key(url)
        if not hasattr(self.image_key, "_base"):
            _warn_deprecated("ImagesPipeline.image_key(url)")
            return self.image_key(url)
        image_guid = hashlib.sha1(to_bytes(url)).hexdigest()
        return f"full/{image_guid}.jpg"

    def thumb_path(self, request, thumb_id, response=None, info=None):
        """``thumbs/<thumb_id>/<SHA1 hex of the URL>.jpg``. Overriding the deprecated
        ``thumb_key`` still works, with a ``CrawlfwDeprecationWarning``."""
        url = _url_of(request, "ImagesPipeline.thumb_key(url)")
        if not hasattr(self.thumb_key, "_base"):
            _warn_deprecated("ImagesPipeline.thumb_key(url)")
            return self.thumb_key(url, thumb_id)
        thumb_guid = hashlib.sha1(to_bytes(url)).hexdigest()
        return f"thumbs/{thumb_id}/{thumb_guid}.jpg"

    def file_key(self, url):
        """Deprecated: use ``file_path(request, response=None, info=None)``."""
        return self.image_key(url)

    file_key._base = True

    def image_key(self, url):
        """Deprecated: use ``file_path(request, response=None, info=None)``."""
        return self.file_path(url)

    image_key._base = True

    def thumb_key(self, url, thumb_id):
        """Deprecated: use ``thumb_path(request, thumb_id, response=None, info=None)``."""
        return self.thumb_path(url, thumb_id)

    thumb_key._base = True
