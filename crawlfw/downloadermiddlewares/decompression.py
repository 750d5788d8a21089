"""Decompress archive bodies (tar, zip, gzip, bzip2) served as files.

Scrapy 1.2 shipped this middleware but did not enable it by default; neither does
crawlfw (add ``'crawlfw.downloadermiddlewares.decompression.DecompressionMiddleware'``
to ``DOWNLOADER_MIDDLEWARES``). Unlike ``HttpCompressionMiddleware`` it looks at the
body itself, not at ``Content-Encoding``: a response whose body is an archive is
replaced by one holding the archive's **first** member, with a response class guessed
from that member's name and content.
"""

import bz2
import io
import logging
import tarfile
import zipfile

from crawlfw.responsetypes import responsetypes
from crawlfw.utils.gz import gunzip

__all__ = ["DecompressionMiddleware"]

logger = logging.getLogger(__name__)


class DecompressionMiddleware:
    """Replace an archive response by its first member (formats tried: tar, zip, gz, bz2)."""

    def __init__(self):
        self._formats = {
            "tar": self._is_tar,
            "zip": self._is_zip,
            "gz": self._is_gzip,
            "bz2": self._is_bzip2,
        }

    def _is_tar(self, response):
        try:
            tar_file = tarfile.open(fileobj=io.BytesIO(response.body))
        except (tarfile.TarError, EOFError, OSError):
            return None
        members = [m for m in tar_file.getmembers() if m.isfile()]
        if not members:
            return None
        body = tar_file.extractfile(members[0]).read()
        respcls = responsetypes.from_args(filename=members[0].name, body=body)
        return response.replace(body=body, cls=respcls)

    def _is_zip(self, response):
        try:
            zip_file = zipfile.ZipFile(io.BytesIO(response.body))
        except zipfile.BadZipFile:
            return None
        namelist = zip_file.namelist()
        if not namelist:
            return None
        body = zip_file.read(namelist[0])
        respcls = responsetypes.from_args(filename=namelist[0], body=body)
        return response.replace(body=body, cls=respcls)

    def _is_gzip(self, response):
        try:
            body = gunzip(response.body)
        except OSError:
            return None
        respcls = responsetypes.from_args(body=body)
        return response.replace(body=body, cls=respcls)

    def _is_bzip2(self, response):
        try:
            body = bz2.decompress(response.body)
        except (OSError, ValueError):
            return None
        respcls = responsetypes.from_args(body=body)
        return response.replace(body=body, cls=respcls)

    def process_response(self, request, response, spider):
        if not response.body:
            return response
        for fmt, func in self._formats.items():
            new_response = func(response)
            if new_response is not None:
                logger.debug(
                    "Decompressed response with format: %(responsefmt)s",
                    {"responsefmt": fmt},
                    extra={"spider": spider},
                )
                return new_response
        return response
