"""Helpers for deprecating names and classes (Scrapy 1.2's ``scrapy.utils.deprecate``)."""

import inspect
import warnings

from crawlfw.exceptions import CrawlfwDeprecationWarning

__all__ = [
    "attribute",
    "create_deprecated_class",
    "update_classpath",
    "method_is_overridden",
    "argument_is_required",
    "warn_on_deprecated_spider_attribute",
    "DEPRECATION_RULES",
]


def attribute(obj, oldattr, newattr, version='0.12'):
    """Warn that ``obj.oldattr`` is deprecated in favour of ``obj.newattr``."""
    cname = obj.__class__.__name__
    warnings.warn(
        f"{cname}.{oldattr} attribute is deprecated and will be no longer supported "
        f"in crawlfw {version}, use {cname}.{newattr} attribute instead",
        CrawlfwDeprecationWarning, stacklevel=3)


def create_deprecated_class(name, new_class, clsdict=None,
                            warn_category=CrawlfwDeprecationWarning,
                            warn_once=True,
                            old_class_path=None,
                            new_class_path=None,
                            subclass_warn_message="{cls} inherits from "
                                                  "deprecated class {old}, please inherit "
                                                  "from {new}.",
                            instance_warn_message="{cls} is deprecated, "
                                                  "instantiate {new} instead."):
    """Return a deprecated alias of ``new_class``.

    The alias warns when it is subclassed or instantiated (not when its subclasses
    are instantiated), and ``issubclass``/``isinstance`` checks against it accept
    subclasses of ``new_class`` too, so renaming a base class keeps user checks
    working::

        class NewName(SomeClass): ...
        OldName = create_deprecated_class('OldName', NewName)

    Args:
        name (str): the old class name.
        new_class (type): the class that replaces it.
        clsdict (dict | None): extra class attributes for the alias.
        warn_category (type[Warning]): warning class.
        warn_once (bool): warn only on the first subclass.
        old_class_path (str | None): dotted path shown for the old class.
        new_class_path (str | None): dotted path shown for the new class.
        subclass_warn_message (str): format with ``{cls}``, ``{old}``, ``{new}``.
        instance_warn_message (str): format with ``{cls}``, ``{new}``.

    Returns:
        type: the deprecated class.
    """

    class DeprecatedClass(new_class.__class__):

        deprecated_class = None
        warned_on_subclass = False

        def __new__(metacls, name, bases, clsdict_):
            cls = super().__new__(metacls, name, bases, clsdict_)
            if metacls.deprecated_class is None:
                metacls.deprecated_class = cls
            return cls

        def __init__(cls, name, bases, clsdict_):
            meta = cls.__class__
            old = meta.deprecated_class
            if old in bases and not (warn_once and meta.warned_on_subclass):
                meta.warned_on_subclass = True
                msg = subclass_warn_message.format(cls=_clspath(cls),
                                                   old=_clspath(old, old_class_path),
                                                   new=_clspath(new_class, new_class_path))
                if warn_once:
                    msg += ' (warning only on first subclass, there may be others)'
                warnings.warn(msg, warn_category, stacklevel=2)
            super().__init__(name, bases, clsdict_)

        # PEP 3119: overloading isinstance() and issubclass()
        def __instancecheck__(cls, inst):
            return any(cls.__subclasscheck__(c) for c in {type(inst), inst.__class__})

        def __subclasscheck__(cls, sub):
            if cls is not DeprecatedClass.deprecated_class:
                # only the deprecated class itself gets the magic; its
                # subclasses use the normal check.
                return super().__subclasscheck__(sub)
            if not inspect.isclass(sub):
                raise TypeError("issubclass() arg 1 must be a class")
            mro = getattr(sub, '__mro__', ())
            return any(c in {cls, new_class} for c in mro)

        def __call__(cls, *args, **kwargs):
            old = DeprecatedClass.deprecated_class
            if cls is old:
                msg = instance_warn_message.format(cls=_clspath(cls, old_class_path),
                                                   new=_clspath(new_class, new_class_path))
                warnings.warn(msg, warn_category, stacklevel=2)
            return super().__call__(*args, **kwargs)

    deprecated_cls = DeprecatedClass(name, (new_class,), clsdict or {})

    try:
        frm = inspect.stack()[1]
        parent_module = inspect.getmodule(frm[0])
        if parent_module is not None:
            deprecated_cls.__module__ = parent_module.__name__
    except Exception as e:  # inspect.stack() can fail (e.g. in templates)
        warnings.warn(f"Error detecting parent module: {e!r}", stacklevel=2)

    return deprecated_cls


def _clspath(cls, forced=None):
    if forced is not None:
        return forced
    return f'{cls.__module__}.{cls.__name__}'


#: (old prefix, new prefix) pairs applied by :func:`update_classpath`, first match wins.
DEPRECATION_RULES = [
    ('crawlfw.contrib_exp.downloadermiddleware.decompression.',
     'crawlfw.downloadermiddlewares.decompression.'),
    ('crawlfw.contrib_exp.iterators.', 'crawlfw.utils.iterators.'),
    ('crawlfw.contrib.downloadermiddleware.', 'crawlfw.downloadermiddlewares.'),
    ('crawlfw.contrib.exporter.', 'crawlfw.exporters.'),
    ('crawlfw.contrib.linkextractors.', 'crawlfw.linkextractors.'),
    ('crawlfw.contrib.loader.processor.', 'crawlfw.loader.processors.'),
    ('crawlfw.contrib.loader.', 'crawlfw.loader.'),
    ('crawlfw.contrib.pipeline.', 'crawlfw.pipelines.'),
    ('crawlfw.contrib.spidermiddleware.', 'crawlfw.spidermiddlewares.'),
    ('crawlfw.contrib.spiders.', 'crawlfw.spiders.'),
    ('crawlfw.contrib.', 'crawlfw.extensions.'),
    ('crawlfw.command.', 'crawlfw.commands.'),
    ('crawlfw.dupefilter.', 'crawlfw.dupefilters.'),
    ('crawlfw.linkextractor.', 'crawlfw.linkextractors.'),
    ('crawlfw.telnet.', 'crawlfw.extensions.telnet.'),
    ('crawlfw.spider.', 'crawlfw.spiders.'),
    ('crawlfw.squeue.', 'crawlfw.squeues.'),
    ('crawlfw.statscol.', 'crawlfw.statscollectors.'),
    ('crawlfw.utils.decorator.', 'crawlfw.utils.decorators.'),
    ('crawlfw.spidermanager.SpiderManager', 'crawlfw.spiderloader.SpiderLoader'),
]


def update_classpath(path):
    """Map a deprecated dotted path to its current location, warning when it changes.

    A path starting with ``scrapy.`` (a setting copied from a Scrapy project) is
    first renamed to ``crawlfw.``; then the first matching
    :data:`DEPRECATION_RULES` prefix is replaced.

    Args:
        path: a dotted path (anything else is returned unchanged).

    Returns:
        The current path (or ``path`` itself when nothing applies).
    """
    if not isinstance(path, str):
        return path
    new_path = path
    if new_path.startswith('scrapy.'):
        new_path = 'crawlfw.' + new_path[len('scrapy.'):]
    for prefix, replacement in DEPRECATION_RULES:
        if new_path.startswith(prefix):
            new_path = replacement + new_path[len(prefix):]
            break
    if new_path != path:
        warnings.warn(f"`{path}` class is deprecated, use `{new_path}` instead",
                      CrawlfwDeprecationWarning, stacklevel=2)
    return new_path


def method_is_overridden(subclass, base_class, method_name):
    """Return True if ``subclass`` overrides ``base_class.method_name``.

    Args:
        subclass (type): a subclass of ``base_class``.
        base_class (type): the class defining the method.
        method_name (str): the method name.

    Returns:
        bool
    """
    base_method = getattr(base_class, method_name)
    sub_method = getattr(subclass, method_name)
    return getattr(base_method, '__code__', base_method) is not getattr(
        sub_method, '__code__', sub_method)


def argument_is_required(func, arg_name):
    """Return True when ``func`` has a parameter ``arg_name`` without a default
    (Scrapy 2.14).

    Args:
        func (callable): a function, method, class (its ``__init__``), partial or
            callable object.
        arg_name (str): the parameter name.

    Returns:
        bool: False when the parameter has a default or does not exist.
    """
    from crawlfw.utils.python import get_func_args_dict

    param = get_func_args_dict(func).get(arg_name)
    return param is not None and param.default is inspect.Parameter.empty


def warn_on_deprecated_spider_attribute(attribute_name, setting_name):
    """Warn (``CrawlfwDeprecationWarning``) that the spider attribute
    ``attribute_name`` is deprecated in favour of the setting ``setting_name``, as
    Scrapy 2.19 does for ``download_maxsize``, ``download_warnsize`` and the like.

    Args:
        attribute_name (str): the spider attribute, e.g. ``'download_maxsize'``.
        setting_name (str): the setting that replaces it, e.g. ``'DOWNLOAD_MAXSIZE'``.
    """
    warnings.warn(
        f"The '{attribute_name}' spider attribute is deprecated. "
        "Use Spider.custom_settings or Spider.update_settings() instead. "
        f"The corresponding setting name is '{setting_name}'.",
        category=CrawlfwDeprecationWarning,
        stacklevel=2,
    )
