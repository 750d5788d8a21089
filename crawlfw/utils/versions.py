"""The versions of crawlfw and the libraries it runs on (Scrapy 2's
``scrapy.utils.versions``).

``crawlfw version -v`` prints crawlfw's own list; :func:`get_versions` answers for the
names a caller gives, by default ``crawlfw`` and the ``LOG_VERSIONS`` setting's default
(Scrapy's list).
"""

from __future__ import annotations

import platform
import ssl
import sys
from importlib.metadata import PackageNotFoundError, version

import crawlfw
from crawlfw.settings.default_settings import LOG_VERSIONS

__all__ = ["get_versions"]

_DEFAULT_SOFTWARE: list[str] = ["crawlfw", *LOG_VERSIONS]


def _openssl() -> str:
    try:
        import OpenSSL  # type: ignore[import-not-found]  # noqa: PLC0415
    except ImportError:
        return f"not installed (Python's ssl module: {ssl.OPENSSL_VERSION})"
    system = OpenSSL.SSL.SSLeay_version(OpenSSL.SSL.SSLEAY_VERSION).decode("ascii", "replace")
    return f"{OpenSSL.version.__version__} ({system})"


def _version(item: str) -> str:
    lowercase = item.lower()
    if lowercase == "crawlfw":
        return crawlfw.__version__
    if lowercase == "libxml2":
        import lxml.etree  # noqa: PLC0415

        return ".".join(map(str, lxml.etree.LIBXML_VERSION))
    if lowercase == "platform":
        return platform.platform()
    if lowercase == "pyopenssl":
        return _openssl()
    if lowercase == "python":
        return sys.version.replace("\n", "- ")
    if lowercase == "twisted":
        try:
            return f"{version(item)} (not used: crawlfw runs on Pykka actors and pycurl)"
        except PackageNotFoundError:
            return "not used (crawlfw runs on Pykka actors and pycurl)"
    return version(item)


def get_versions(software: list[str] | None = None) -> list[tuple[str, str]]:
    """The version of each named piece of software.

    ``libxml2`` is lxml's libxml2, ``Platform`` the operating system
    (:func:`platform.platform`), ``Python`` :data:`sys.version`, ``pyOpenSSL`` its
    version and OpenSSL's (or, not installed, the OpenSSL of Python's ``ssl``),
    ``Twisted`` says that crawlfw does not use it; any other name is looked up as an
    installed distribution (case-insensitive).

    Args:
        software: names, in the order wanted; None or empty: ``crawlfw`` and the
            default ``LOG_VERSIONS`` (lxml, libxml2, cssselect, parsel, w3lib, Twisted,
            Python, pyOpenSSL, cryptography, Platform).

    Returns:
        list[tuple[str, str]]: ``(name as given, version)`` pairs.

    Raises:
        importlib.metadata.PackageNotFoundError: a name is no installed distribution.
    """
    software = software or _DEFAULT_SOFTWARE
    return [(item, _version(item)) for item in software]
