"""crawlfw.utils.curl's public names (Scrapy 2.19's ``scrapy.utils.curl``): the parser,
its data action and the options dropped silently; the expected values are Scrapy's."""

import argparse

import pytest

from crawlfw.utils.curl import (
    CurlParser,
    DataAction,
    curl_parser,
    curl_to_request_kwargs,
    safe_to_ignore_arguments,
)


def test_curl_parser_raises_value_error():
    assert isinstance(curl_parser, CurlParser)
    assert isinstance(curl_parser, argparse.ArgumentParser)
    with pytest.raises(ValueError, match="There was an error parsing the curl command: "):
        curl_parser.parse_args([])  # no URL
    with pytest.raises(ValueError, match="error parsing the curl command"):
        CurlParser().error("bad")


def test_curl_parser_reads_curl_options():
    parsed, unknown = curl_parser.parse_known_args(
        ["http://x/", "-H", "A: 1", "-X", "PUT", "-b", "c=1", "-d", "$x=1", "-u", "u:p",
         "--compressed", "-s", "--insecure"])
    assert (parsed.url, parsed.headers, parsed.method, parsed.cookies, parsed.data,
            parsed.auth) == ("http://x/", ["A: 1"], "PUT", ["c=1"], "x=1", "u:p")
    assert parsed.compressed and parsed.silent
    assert unknown == ["--insecure"]


def test_data_action_joins_repeated_data_with_ampersand():
    parser = CurlParser(add_help=False)
    parser.add_argument("-d", dest="data", action=DataAction)
    assert parser.parse_args(["-d", "a=1", "-d", "$b=2"]).data == "a=1&b=2"


def test_safe_to_ignore_arguments_are_ignored_without_a_warning(recwarn):
    assert safe_to_ignore_arguments == [
        ["--compressed"], ["-s", "--silent"], ["-v", "--verbose"], ["-#", "--progress-bar"]]
    flags = [flag for spellings in safe_to_ignore_arguments for flag in spellings]
    kwargs = curl_to_request_kwargs("curl http://x/ " + " ".join(flags))
    assert kwargs == {"method": "GET", "url": "http://x/"}
    assert not recwarn.list


def test_repeated_data_and_a_cookie_file():
    # Scrapy 2.19 gives the same dict
    kwargs = curl_to_request_kwargs(
        "curl 'http://x/' -d a=1 --data-raw $'b=2' -b cookies.txt -b 'k=v'")
    assert kwargs == {"method": "POST", "url": "http://x/", "cookies": {"k": "v"},
                      "body": "a=1&b=2"}
