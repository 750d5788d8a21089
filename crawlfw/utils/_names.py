"""Names of classes as a user sees them in stats and logs."""

__all__ = ["public_class_name"]


def public_class_name(cls: type) -> str:
    """The name of ``cls``, or of its nearest public base class when ``cls`` is private.

    A class is private when its name starts with ``_`` (``_NotText``, the
    :class:`~crawlfw.exceptions.NotSupported` a binary response's ``css()`` raises). The
    first public class in the method resolution order names the exception in stats
    such as ``spider_exceptions/<name>`` and ``item_dropped_reasons_count/<name>``: a
    private helper class never leaks into them (``spider_exceptions/NotSupported``, as
    in Scrapy 2.19).

    Args:
        cls: a class (usually an exception class).

    Returns:
        str: the class's ``__name__``, or its nearest public base's (``cls.__name__``
        when every class in its MRO but ``object`` is private).
    """
    for klass in cls.__mro__:
        if klass is object:
            break
        if not klass.__name__.startswith("_"):
            return klass.__name__
    return cls.__name__
