"""Turn a cURL command line into :class:`~crawlfw.http.Request` arguments (Scrapy 2's
``scrapy.utils.curl``, behind ``Request.from_curl``).

Understood options (the subset of curl(1) that Scrapy 2.19 maps to a request):

====================================  ==============================================
``URL``                               the URL; ``http://`` is prepended when it has no
                                      scheme (as curl does)
``-X``/``--request METHOD``           the method (upper-cased); default GET, or POST
                                      when there is a body
``-H``/``--header "Name: value"``     a header (repeatable); a ``Cookie`` header is
                                      parsed into ``cookies`` instead
``-b``/``--cookie "a=1; b=2"``        cookies (repeatable)
``-d``/``--data``/``--data-raw DATA``  the body (a leading ``$`` of a shell ``$'...'``
                                      string is dropped)
``-u``/``--user USER:PASSWORD``       an ``Authorization: Basic`` header (RFC 7617)
====================================  ==============================================

``--compressed``, ``-s``/``--silent``, ``-v``/``--verbose`` and ``-#``/
``--progress-bar`` are ignored silently; any other option is ignored with a warning
(``ignore_unknown_options=True``) or refused with ``ValueError``.
"""

from __future__ import annotations

import argparse
import warnings
from http.cookies import SimpleCookie
from shlex import split
from urllib.parse import urlparse

from w3lib.http import basic_auth_header

__all__ = ["curl_to_request_kwargs"]


class _CurlParser(argparse.ArgumentParser):
    def error(self, message):
        raise ValueError(f"There was an error parsing the curl command: {message}")


class _DataAction(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        value = str(values)
        if value.startswith("$"):  # bash's $'...' quoting, pasted from a browser
            value = value[1:]
        setattr(namespace, self.dest, value)


def _parser() -> _CurlParser:
    parser = _CurlParser(add_help=False, allow_abbrev=False)
    parser.add_argument("url")
    parser.add_argument("-H", "--header", dest="headers", action="append")
    parser.add_argument("-X", "--request", dest="method")
    parser.add_argument("-b", "--cookie", dest="cookies", action="append")
    parser.add_argument("-d", "--data", "--data-raw", dest="data", action=_DataAction)
    parser.add_argument("-u", "--user", dest="auth")
    for flags in (["--compressed"], ["-s", "--silent"], ["-v", "--verbose"],
                  ["-#", "--progress-bar"]):
        parser.add_argument(*flags, action="store_true")
    return parser


_CURL_PARSER = _parser()


def curl_to_request_kwargs(curl_command: str, ignore_unknown_options: bool = True) -> dict:
    """Convert a cURL command (as a browser's "Copy as cURL" gives it) into keyword
    arguments of :class:`~crawlfw.http.Request`.

    Args:
        curl_command: the command line, starting with ``curl``; shell quoting as in
            POSIX sh (:func:`shlex.split`).
        ignore_unknown_options: True: an option this module does not know is dropped
            with a warning ("Unrecognized options: ..."); False: ``ValueError``.

    Returns:
        dict: ``method`` and ``url``, plus ``headers`` (list of ``(name, value)``),
        ``cookies`` (dict) and ``body`` (str) when given.

    Raises:
        ValueError: the command does not start with ``curl``, has no URL, or (with
            ``ignore_unknown_options=False``) has an unknown option.
    """
    curl_args = split(curl_command)
    if not curl_args or curl_args[0] != "curl":
        raise ValueError('A curl command must start with "curl"')
    parsed, unknown = _CURL_PARSER.parse_known_args(curl_args[1:])
    if unknown:
        message = f"Unrecognized options: {', '.join(unknown)}"
        if not ignore_unknown_options:
            raise ValueError(message)
        warnings.warn(message, stacklevel=2)
    url = parsed.url
    if not urlparse(url).scheme:
        url = "http://" + url
    result = {"method": (parsed.method or "GET").upper(), "url": url}
    headers, cookies = [], {}
    for header in parsed.headers or ():
        name, _, value = header.partition(":")
        name, value = name.strip(), value.strip()
        if name.lower() == "cookie":
            cookies.update((k, m.value) for k, m in SimpleCookie(value).items())
        else:
            headers.append((name, value))
    for cookie in parsed.cookies or ():
        cookies.update((k, m.value) for k, m in SimpleCookie(cookie).items())
    if parsed.auth:
        user, _, password = parsed.auth.partition(":")
        headers.append(("Authorization", basic_auth_header(user, password)))
    if headers:
        result["headers"] = headers
    if cookies:
        result["cookies"] = cookies
    if parsed.data:
        result["body"] = parsed.data
        if not parsed.method:
            result["method"] = "POST"
    return result
