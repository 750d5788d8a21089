"""Helper functions which don't fit anywhere else (Scrapy 1.2's ``scrapy.utils.misc``)."""

import ast
import inspect
import os
import re
import textwrap
import warnings
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from importlib import import_module
from typing import Any, Protocol

__all__ = [
    "arg_to_iter",
    "load_object",
    "walk_modules",
    "extract_regex",
    "md5sum",
    "create_instance",
    "rel_has_nofollow",
    "walk_modules_iter",
    "build_from_crawler",
    "SupportsFromCrawler",
    "set_environ",
    "walk_callable",
    "is_generator_with_return_value",
    "warn_on_generator_with_return_value",
]

def __getattr__(name: str):
    # w3lib.html (with w3lib.url: urllib.request, http.client, ssl, email) is imported
    # where it is used: every crawl loads it, the command line alone ("crawlfw
    # version", "crawlfw -h") does not. Scrapy 1.2's module had replace_entities (PEP 562).
    if name == "replace_entities":
        from w3lib.html import replace_entities

        return replace_entities
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_BASE_SINGLE_VALUES = (dict, str, bytes)
_single_values = None


def _iterable_single_values():
    """Types that are iterable but count as one value: dict, str, bytes, items.

    ``crawlfw.item`` is imported lazily (it is not needed to load settings); until
    it can be imported only dict/str/bytes are used.
    """
    global _single_values
    if _single_values is None:
        try:
            from crawlfw.item import AnyItem, BaseItem
        except ImportError:
            return _BASE_SINGLE_VALUES
        _single_values = _BASE_SINGLE_VALUES + (BaseItem, AnyItem)
    return _single_values


def arg_to_iter(arg: Any) -> Any:
    """Turn an argument into an iterable.

    Args:
        arg: None, a single value, or an iterable.

    Returns:
        ``[]`` for None; ``arg`` itself for an iterable that is not a dict, str,
        bytes or item; otherwise ``[arg]``.
    """
    if arg is None:
        return []
    if not isinstance(arg, _iterable_single_values()) and hasattr(arg, '__iter__'):
        return arg
    return [arg]


def load_object(path: Any) -> Any:
    """Import and return an object from its full dotted path.

    Args:
        path (str): e.g. ``'crawlfw.downloadermiddlewares.retry.RetryMiddleware'``.
            A non-string (a class or function already) is returned unchanged.

    Returns:
        The class, function, variable or instance named by ``path``.

    Raises:
        ValueError: ``path`` has no dot ("Error loading object 'x': not a full path").
        ImportError: the module part cannot be imported.
        NameError: the module has no attribute of that name.
    """
    if not isinstance(path, str):
        if callable(path):
            return path
        raise TypeError(
            f"Unexpected argument type, expected string or object, got: {type(path)}")
    try:
        dot = path.rindex('.')
    except ValueError:
        raise ValueError(f"Error loading object '{path}': not a full path") from None

    module, name = path[:dot], path[dot + 1:]
    mod = import_module(module)
    try:
        return getattr(mod, name)
    except AttributeError:
        raise NameError(f"Module '{module}' doesn't define any object named '{name}'") from None


def walk_modules(path):
    """Import a module and, recursively, all its submodules.

    Args:
        path (str): dotted module path, e.g. ``'crawlfw.utils'``.

    Returns:
        list[module]: the module followed by its submodules (depth first).

    Raises:
        Exception: whatever importing any of the modules raises.
    """
    return list(walk_modules_iter(path))


def walk_modules_iter(path):
    """Import a module and, recursively, its submodules, one at a time (Scrapy 2.17+).

    Args:
        path (str): dotted module path, e.g. ``'crawlfw.utils'``.

    Yields:
        module: the module, then its submodules (depth first), each imported when it
        is reached: an error is raised only when the generator gets there.

    Raises:
        Exception: whatever importing a module raises.
    """
    mod = import_module(path)
    yield mod
    if hasattr(mod, '__path__'):
        from pkgutil import iter_modules  # only for packages of spiders or commands

        for _, subpath, ispkg in iter_modules(mod.__path__):
            fullpath = path + '.' + subpath
            if ispkg:
                yield from walk_modules_iter(fullpath)
            else:
                yield import_module(fullpath)


def _flatten(values):
    out = []
    for v in values:
        if isinstance(v, (list, tuple)):
            out.extend(_flatten(v))
        else:
            out.append(v)
    return out


def extract_regex(regex, text, encoding='utf-8'):
    """Extract strings from ``text`` with a regular expression.

    * if the regex has a named group ``extract``, its match is returned;
    * else if it has numbered groups, all of them are returned (flattened);
    * else every whole match is returned.

    HTML entities in the results are replaced, except ``&lt;`` and ``&amp;``.

    Args:
        regex: a pattern string or compiled pattern (str patterns for str text).
        text (str | bytes): the text; bytes are decoded with ``encoding``.
        encoding (str): encoding of bytes ``text``.

    Returns:
        list[str]
    """
    if isinstance(text, bytes):
        text = text.decode(encoding)
    if isinstance(regex, (str, bytes)):
        if isinstance(regex, bytes):
            regex = regex.decode(encoding)
        regex = re.compile(regex, re.UNICODE)

    strings = None
    if 'extract' in regex.groupindex:
        match = regex.search(text)
        if match is not None:
            strings = [match.group('extract')]
    if strings is None:
        strings = regex.findall(text)
    strings = _flatten(strings)
    global _replace_entities
    if _replace_entities is None:  # w3lib.html is loaded by every crawl, not by the CLI
        # alone; kept in a global: an import statement per call looks up
        # w3lib.html.__path__, which raises and clears an AttributeError each time
        from w3lib.html import replace_entities as _replace_entities
    return [_replace_entities(s, keep=['lt', 'amp']) for s in strings]


_replace_entities = None


def md5sum(file):
    """Return the MD5 hex digest of a binary file-like object, read in 8 KiB chunks.

    Args:
        file: an object with ``read(size) -> bytes``.

    Returns:
        str: 32 lowercase hex digits.
    """
    import hashlib  # (its OpenSSL library costs the command line alone ~3 ms)

    m = hashlib.md5()
    while True:
        d = file.read(8192)
        if not d:
            break
        m.update(d)
    return m.hexdigest()


# Any: a component class and what it builds are any; settings and the crawler are of
# layers this module cannot import (a BaseSettings or None, a Crawler or None).
def create_instance(objcls: Any, settings: Any, crawler: Any, *args: Any, **kwargs: Any) -> Any:
    """Build a component the way Scrapy builds middlewares, pipelines and extensions.

    Uses ``objcls.from_crawler(crawler, *args, **kwargs)`` when ``crawler`` is given
    and the class has it, else ``objcls.from_settings(settings, *args, **kwargs)``
    when the class has it, else ``objcls(*args, **kwargs)``.

    Args:
        objcls (type): the component class.
        settings: a :class:`~crawlfw.settings.Settings`; None to use
            ``crawler.settings``.
        crawler: a :class:`~crawlfw.crawler.Crawler` or None.
        *args: extra positional arguments for the factory.
        **kwargs: extra keyword arguments for the factory.

    Returns:
        The new instance.

    Raises:
        ValueError: both ``settings`` and ``crawler`` are None.
        TypeError: the factory method returned None.
        crawlfw.exceptions.NotConfigured: raised by the component to disable itself.
    """
    if settings is None:
        if crawler is None:
            raise ValueError("Specify at least one of settings and crawler.")
        settings = crawler.settings
    if crawler is not None and hasattr(objcls, 'from_crawler'):
        instance = objcls.from_crawler(crawler, *args, **kwargs)
        method_name = 'from_crawler'
    elif hasattr(objcls, 'from_settings'):
        instance = objcls.from_settings(settings, *args, **kwargs)
        method_name = 'from_settings'
    else:
        instance = objcls(*args, **kwargs)
        method_name = '__new__'
    if instance is None:
        raise TypeError(f"{objcls.__qualname__}.{method_name} returned None")
    return instance


def rel_has_nofollow(rel):
    """Return True if a link's ``rel`` attribute contains ``nofollow``.

    Args:
        rel (str | None): the attribute value (space-separated tokens, HTML5
            "link types").
    """
    return rel is not None and 'nofollow' in rel.split()


class SupportsFromCrawler(Protocol):
    """A class built with ``from_crawler(crawler, *args, **kwargs)`` (typing only)."""

    @classmethod
    def from_crawler(cls, crawler: Any, /, *args: Any, **kwargs: Any) -> Any: ...


def build_from_crawler(objcls: Any, crawler: Any, /, *args: Any, **kwargs: Any) -> Any:
    """Build ``objcls`` with ``objcls.from_crawler(crawler, *args, **kwargs)`` when it
    has that method, else ``objcls(*args, **kwargs)`` (Scrapy 2.12+).

    Raises:
        TypeError: the constructor returned None.
    """
    if hasattr(objcls, "from_crawler"):
        instance = objcls.from_crawler(crawler, *args, **kwargs)
        method_name = "from_crawler"
    else:
        instance = objcls(*args, **kwargs)
        method_name = "__new__"
    if instance is None:
        raise TypeError(f"{objcls.__qualname__}.{method_name} returned None")
    return instance


@contextmanager
def set_environ(**kwargs: str) -> Iterator[None]:
    """Set environment variables inside the ``with`` block, then restore them exactly
    (unset the ones that were not set)."""
    original = {key: os.environ.get(key) for key in kwargs}
    os.environ.update(kwargs)
    try:
        yield
    finally:
        for key, value in original.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def walk_callable(node: ast.AST) -> Iterator[ast.AST]:
    """Like ``ast.walk``, but over one function's body: functions defined inside it are
    skipped."""
    todo: deque[ast.AST] = deque([node])
    walked_func_def = False
    while todo:
        node = todo.popleft()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if walked_func_def:
                continue
            walked_func_def = True
        todo.extend(ast.iter_child_nodes(node))
        yield node


_generator_callbacks_cache: Any = None


def _returns_value(node: ast.Return) -> bool:
    value = node.value
    return value is not None and not (isinstance(value, ast.Constant) and value.value is None)


def is_generator_with_return_value(callable: Callable[..., Any]) -> bool:  # noqa: A002
    """True if ``callable`` is a generator function with a ``return`` of a value other
    than None (that value is lost to a caller iterating it).

    Raises:
        IndentationError, SyntaxError: its source cannot be parsed.
    """
    global _generator_callbacks_cache
    if _generator_callbacks_cache is None:
        from crawlfw.utils.datatypes import LocalWeakReferencedCache

        _generator_callbacks_cache = LocalWeakReferencedCache(limit=128)
    cached = _generator_callbacks_cache[callable]
    if cached is not None:
        return bool(cached)
    result = False
    if inspect.isgeneratorfunction(callable):
        func = callable
        while isinstance(func, partial):
            func = func.func
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
        result = any(isinstance(node, ast.Return) and _returns_value(node)
                     for node in walk_callable(tree))
    _generator_callbacks_cache[callable] = result
    return result


def warn_on_generator_with_return_value(spider: Any, callable: Callable[..., Any]) -> None:  # noqa: A002
    """Warn (``UserWarning``) when ``callable`` is a generator function returning a
    value, unless the spider's ``WARN_ON_GENERATOR_RETURN_VALUE`` setting is False."""
    settings = getattr(spider, "settings", None)
    if settings is not None and not settings.getbool("WARN_ON_GENERATOR_RETURN_VALUE", True):
        return
    name = f"{spider.__class__.__name__}.{callable.__name__}"
    try:
        if is_generator_with_return_value(callable):
            warnings.warn(
                f'The "{name}" method is a generator and includes a "return" statement '
                "with a value different than None. This could lead to unexpected "
                "behaviour. Please see https://docs.python.org/3/reference/"
                "simple_stmts.html#the-return-statement for details about the semantics "
                'of the "return" statement within generators', stacklevel=2)
    except (IndentationError, SyntaxError, OSError, TypeError):
        warnings.warn(
            f'Unable to determine whether or not "{name}" is a generator with a return '
            "value. This will not prevent your code from working, but it prevents crawlfw "
            f'from detecting potential issues in your implementation of "{name}".',
            stacklevel=2)
