"""Private URL helpers of the link extractors and Request: the same results as the reference
functions (``urllib.parse.urljoin``, ``w3lib.url.safe_url_string``, ``urlparse`` +
``posixpath.splitext``), with shortcuts for the plain URLs real pages are made of.

Resolving and escaping every link with the reference functions costs more than
parsing the page; the shortcuts skip them only where they provably return their input
(checked by tests against the reference functions on every link of the shared site
copies and on random URLs).
"""

import posixpath
import re
from urllib.parse import urljoin, urlparse

from w3lib.url import canonicalize_url, safe_url_string

__all__ = [
    "safe_url",
    "url_origin",
    "absolute_url",
    "url_extension",
    "join_prefixes",
    "join_url",
    "canonical_url",
]

# URLs that safe_url_string would change: characters outside printable ASCII, ASCII
# characters it escapes in some component, a userinfo ("@"), a "#" inside the
# fragment, and an empty query or fragment it drops. Upper-case letters in scheme and
# host (which it lower-cases) are checked separately. ";" is not changed by it, but
# urljoin drops an empty ";params", so URLs with ";" take the reference path too.
#
# Written as two patterns, tested in turn (the same answer as the one alternation
# [^\x21-\x7e]|["'<>\[\\\]^`{|}@;]|#.*#|[?#]$|\?# , which re tried at every position):
# a single character class, which re scans in a tight loop, then the "#"/"?" rules,
# only for URLs that have one of them.
_UNSAFE_CHAR = re.compile(r"[^!#-&(-:=?A-Z_a-z~]")
_FRAGMENT_RULES = re.compile(r"#.*#|[?#]$|\?#")


def _needs_escaping(url):
    """True for a ``url`` (str) the shortcuts must leave to the reference functions."""
    return _UNSAFE_CHAR.search(url) is not None or (
        ("#" in url or "?" in url) and _FRAGMENT_RULES.search(url) is not None
    )

# URLs canonicalize_url returns as they are (with the fragment dropped, and "/" for an
# empty path): lower-case http(s) scheme and ASCII host (IDNA leaves ASCII labels
# alone), a port without leading zeros, a path of characters it never escapes or
# unescapes (no "%"; no ";" params), no query or one of plain arguments, a fragment of
# the same characters as the path. Dot segments ("/." in the path) and ports above
# 65535 are checked in code. A plain query argument, which canonicalize_url keeps as it
# is: a name and a value of unreserved characters (no "%", "+", ";" or "="), joined by
# one "="; the arguments of a query of them joined by "&" are only sorted (by name, then
# value: ASCII strs compare as canonicalize_url's bytes do).
_PLAIN_ARG = r"[A-Za-z0-9\-._~]+=[A-Za-z0-9\-._~]*"
_PLAIN_CANONICAL = re.compile(
    r"(https?://[a-z0-9.\-]+(?::([1-9][0-9]{0,4}))?)"
    r"(/[A-Za-z0-9\-._~/!$&'()*+,=:@]*)?"
    rf"(?:\?({_PLAIN_ARG}(?:&{_PLAIN_ARG})*))?"
    r"(?:#[A-Za-z0-9\-._~/!$&'()*+,=:@]*)?\Z"
)

# A relative reference that is a plain path (RFC 3986 "path-absolute" or
# "path-noscheme"): segments of characters the "needs escaping" test lets through,
# none empty and none starting with "." (so no "//" and no dot segment), no ":" (not
# "a:b", a scheme), no query, no fragment; an optional final "/". urljoin() appends it
# to the base's directory (or origin, for "/..."): join_url's first, cheapest test.
_PLAIN_SEGMENT = r"[!$%&()*+,\-=0-9A-Z_a-z~][!$%&()*+,\-.=0-9A-Z_a-z~]*"
_PLAIN_PATH = re.compile(rf"/?(?:{_PLAIN_SEGMENT}(?:/{_PLAIN_SEGMENT})*/?)?\Z")

#: ``[url]``: the last URL that ``TextResponse.urljoin``'s plain-path shortcut returned
#: (``origin`` or ``directory`` of :func:`join_prefixes` + a ``_PLAIN_PATH`` match), which
#: ``safe_url`` returns as it is for any encoding: the prefix comes from a base that
#: passed ``_needs_escaping`` and ``_plain_head`` and holds no "?" or "#", the path only
#: characters ``_UNSAFE_CHAR`` lets through and no "?", "#" or ":", so the joined URL
#: passes both tests with the base's very ``scheme://host[:port]``; it has no "#!" and
#: has "://". ``Request()`` given that very object (``url is SAFE_JOINED[0]``: a str is
#: immutable and this list keeps it alive) skips ``_make_safe_url``. One slot, shared by
#: every thread: a hint, never a wrong answer. It starts with an object no caller has.
SAFE_JOINED: list[object] = [object()]

# scheme "://" netloc, then the path (up to "?" or "#"), as urlsplit splits them.
_SPLIT_PATH = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^/?#]*([^?#]*)")


def _plain_head(url):
    """True if ``url`` has ``scheme://host[:port]`` with nothing safe_url_string would
    change."""
    start = url.find("://")
    if start <= 0:
        return False
    end = url.find("/", start + 3)
    head = url if end < 0 else url[:end]  # scheme://host[:port]
    # safe_url_string lower-cases scheme and host and adds "/" before a query or
    # fragment that follows the host; urljoin replaces an empty host with the base's.
    if head != head.lower() or "?" in head or "#" in head:
        return False
    host, colon, port = head[start + 3:].partition(":")
    if not host:
        return False
    # safe_url_string validates a port and strips its leading zeros.
    return not colon or (
        port.isascii() and port.isdigit() and port[0] != "0" and int(port) <= 65535
    )


def safe_url(url, encoding):
    """Return ``w3lib.url.safe_url_string(url, encoding)``.

    Args:
        url: an absolute URL.
        encoding: the page encoding (used for the query), or None for UTF-8.

    Raises:
        ValueError: ``url`` cannot be parsed (e.g. an invalid IPv6 host).
    """
    if not _needs_escaping(url) and _plain_head(url):
        return url
    return safe_url_string(url, encoding=encoding or "utf-8")


def url_origin(base):
    """Return ``scheme://host[:port]`` of an http(s) ``base`` URL that needs no
    escaping, else None (then :func:`absolute_url` always takes the reference path)."""
    if not base.startswith(("http://", "https://")):
        return None
    if _needs_escaping(base) or not _plain_head(base):
        return None
    end = base.find("/", base.find("://") + 3)
    return base if end < 0 else base[:end]


def absolute_url(base, origin, href, encoding):
    """Return ``safe_url(urljoin(base, href), encoding)``.

    Args:
        base: the document base URL.
        origin: ``url_origin(base)``.
        href: the (whitespace-stripped) attribute value.
        encoding: the page encoding, or None for UTF-8.

    Raises:
        ValueError: the joined URL cannot be parsed.
    """
    if href and not _needs_escaping(href):
        if href.startswith(("http://", "https://")):
            if _plain_head(href):
                return href  # urljoin() and safe_url_string() both return it as is
        elif origin is not None and href[0] == "/" and href[1:2] != "/":
            end = len(href)
            for sep in "?#":
                i = href.find(sep)
                if 0 <= i < end:
                    end = i
            if "/." not in href[:end]:  # no dot segments to remove (RFC 3986 5.2.4)
                return origin + href
    return safe_url(urljoin(base, href), encoding)


def join_prefixes(base):
    """Return ``(origin, directory)`` of a ``base`` URL for :func:`join_url`.

    ``origin`` is :func:`url_origin`; ``directory`` is ``base`` up to and including the
    last "/" of its path when that path has no empty or dot segments (which urljoin
    would drop or resolve), else None. Both are None when ``base`` is not a plain
    http(s) URL; then :func:`join_url` always takes the reference path.
    """
    origin = url_origin(base)
    if origin is None:
        return None, None
    end = len(base)
    for sep in "?#":
        i = base.find(sep, len(origin))
        if 0 <= i < end:
            end = i
    path = base[len(origin):end]
    if not path or "//" in path or "/." in path:
        return origin, None
    return origin, base[:len(origin) + path.rfind("/") + 1]


def join_url(base, prefixes, href):
    """Return ``urllib.parse.urljoin(base, href)``.

    Args:
        base: the document base URL.
        prefixes: ``join_prefixes(base)``.
        href: the reference to resolve (as is: not stripped).

    Raises:
        ValueError, TypeError: as urljoin does (e.g. an invalid IPv6 host).
    """
    if href and href.__class__ is str and _PLAIN_PATH.match(href) is not None:
        # the common case, one test: "/a/b.html" on the origin, "a/b.html" on the directory
        prefix = prefixes[0] if href[0] == "/" else prefixes[1]
        if prefix is not None:
            return prefix + href
    if href and href.__class__ is str and _UNSAFE_CHAR.search(href) is None and not (
        ("#" in href or "?" in href) and _FRAGMENT_RULES.search(href) is not None
    ):
        if href.startswith(("http://", "https://")):
            if _plain_head(href):
                return href  # an absolute URL urljoin() takes as is
        else:
            first = href[0]
            if first == "/":
                origin = prefixes[0]
                if origin is not None and href[1:2] != "/":
                    end = len(href)
                    for sep in "?#":
                        i = href.find(sep)
                        if 0 <= i < end:
                            end = i
                    if "/." not in href[:end]:  # no dot segments (RFC 3986 5.2.4)
                        return origin + href
            elif first not in "?#.":
                directory = prefixes[1]
                if directory is not None:
                    end = len(href)
                    for sep in "?#":
                        i = href.find(sep)
                        if 0 <= i < end:
                            end = i
                    path = href[:end]
                    # no scheme ("a:b"), no empty or dot segments to drop or resolve
                    if ":" not in path and "//" not in path and "/." not in path:
                        return directory + href
    return urljoin(base, href)


def canonical_url(url):
    """Return ``w3lib.url.canonicalize_url(url)`` (default arguments).

    Raises:
        ValueError: as canonicalize_url does (e.g. an invalid port).
    """
    m = _PLAIN_CANONICAL.match(url) if url.__class__ is str else None
    if m is not None:
        head, port, path, query = m.groups()
        if (port is None or int(port) <= 65535) and (path is None or "/." not in path):
            if query is None:
                return head + (path or "/")
            if "&" in query:  # sorted by (name, value), as canonicalize_url sorts them
                query = "&".join(["".join(arg) for arg in sorted(
                    [arg.partition("=") for arg in query.split("&")])])
            return head + (path or "/") + "?" + query
    return canonicalize_url(url)


def url_extension(url):
    """Return the lower-cased extension (with the dot) of the path of ``url``, as
    ``posixpath.splitext(urlparse(url).path)[1].lower()`` does; ``''`` if none."""
    m = _SPLIT_PATH.match(url)
    if m is None or ";" in m.group(1):
        path = urlparse(url).path
    else:
        path = m.group(1)
    return posixpath.splitext(path)[1].lower()
