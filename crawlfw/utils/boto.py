"""boto helpers (Scrapy 1.2's ``scrapy.utils.boto``).

Scrapy 1.2 supported both the old ``boto`` and ``botocore``; crawlfw's S3 code (feed
storage, files store) uses boto3, which runs on botocore.
"""

from importlib.util import find_spec

from crawlfw.exceptions import NotConfigured

__all__ = ["is_botocore", "is_botocore_available"]


def is_botocore() -> bool:
    """Return True when botocore (boto3's core) can be imported.

    Raises:
        NotConfigured: botocore is missing (``pip install boto3``).
    """
    try:
        import botocore  # noqa: F401
    except ImportError:
        raise NotConfigured("missing botocore library: pip install boto3") from None
    return True


def is_botocore_available() -> bool:
    """Return True when botocore can be imported, without importing it (Scrapy 2.4+).

    Unlike :func:`is_botocore`, never raises: a missing botocore gives False.
    """
    return find_spec("botocore") is not None
