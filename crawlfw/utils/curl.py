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
``-b``/``--cookie "a=1; b=2"``        cookies (repeatable; one without ``=``, a
                                      cookie file to curl, is skipped)
``-d``/``--data``/``--data-raw DATA``  the body (a leading ``$`` of a shell ``$'...'``
                                      string is dropped; repeated: joined with ``&``)
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
from typing import NoReturn
from urllib.parse import urlparse

from w3lib.http import basic_auth_header

__all__ = [
    "CurlParser", "DataAction", "curl_parser", "curl_to_request_kwargs",
    "safe_to_ignore_arguments",
]


class CurlParser(argparse.ArgumentParser):
    """The :mod:`argparse` parser of a curl command's arguments (Scrapy 2's
    ``CurlParser``): a parse error raises ``ValueError("There was an error parsing the
    curl command: ...")`` instead of printing usage and exiting."""

    def error(self, message: str) -> NoReturn:
        raise ValueError(f"There was an error parsing the curl command: {message}")


class DataAction(argparse.Action):
    """The action of ``-d``/``--data``/``--data-raw`` (Scrapy 2's ``DataAction``): the
    value as a str, a leading ``$`` (bash's ``$'...'`` quoting, as a browser's "Copy as
    cURL" writes it) dropped; repeated options are joined with ``&``, as curl does."""

    def __call__(self, parser, namespace, values, option_string=None):
        value = str(values)
        if value.startswith("$"):
            value = value[1:]
        previous = getattr(namespace, self.dest, None)
        if previous is not None:
            value = f"{previous}&{value}"
        setattr(namespace, self.dest, value)


#: The curl options dropped without a warning (each a list of its spellings; Scrapy 2's
#: ``safe_to_ignore_arguments``). ``--compressed`` is among them because the
#: HttpCompressionMiddleware, on by default, asks for and decodes compressed bodies.
safe_to_ignore_arguments = [
    ["--compressed"],
    ["-s", "--silent"],
    ["-v", "--verbose"],
    ["-#", "--progress-bar"],
]


def _parser() -> CurlParser:
    # no -h/--help (curl's -h is not a help flag here) and no abbreviations: an option
    # is one curl has, spelled out
    parser = CurlParser(add_help=False, allow_abbrev=False)
    parser.add_argument("url")
    parser.add_argument("-H", "--header", dest="headers", action="append")
    parser.add_argument("-X", "--request", dest="method")
    parser.add_argument("-b", "--cookie", dest="cookies", action="append")
    parser.add_argument("-d", "--data", "--data-raw", dest="data", action=DataAction)
    parser.add_argument("-u", "--user", dest="auth")
    for flags in safe_to_ignore_arguments:
        parser.add_argument(*flags, action="store_true")
    return parser


#: The parser :func:`curl_to_request_kwargs` uses (Scrapy 2's ``curl_parser``); its
#: :meth:`~argparse.ArgumentParser.parse_known_args` gives ``url``, ``headers``,
#: ``method``, ``cookies``, ``data``, ``auth`` and the ignored flags.
curl_parser = _parser()


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
    parsed, unknown = curl_parser.parse_known_args(curl_args[1:])
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
        if "=" not in cookie:  # curl reads a cookie file then: not supported, skipped
            continue
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
