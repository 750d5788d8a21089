"""boto helpers (Scrapy 1.2's ``scrapy.utils.boto``).

Scrapy 1.2 supported both the old ``boto`` and ``botocore``; crawlfw's S3 code (feed
storage, files store) uses boto3, which runs on botocore.
"""

from crawlfw.exceptions import NotConfigured

__all__ = ["is_botocore"]


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
