"""crawlfw.robotstxt: Scrapy 2's RobotParser interface (issue 29). The answers are
Scrapy 2.19's for the same bodies."""

import pytest

from crawlfw.robotstxt import (
    ProtegoRobotParser,
    PythonRobotParser,
    RerpRobotParser,
    RobotParser,
    decode_robotstxt,
)

BODY = (b"User-agent: *\nDisallow: /private\nDisallow: /*.pdf$\nCrawl-delay: 2\n"
        b"\nUser-agent: special\nAllow: /\n")


class _Crawler:
    spider = None


@pytest.mark.parametrize("url, agent, protego, python", [
    ("http://e.com/private/x", "bot", False, False),
    ("http://e.com/public", "bot", True, True),
    ("http://e.com/doc.pdf", "bot", False, True),   # wildcards: protego only
    ("http://e.com/private/x", "special", True, True),
    (b"http://e.com/private/x", b"bot", False, False),
])
def test_parsers_answer_as_scrapys(url, agent, protego, python):
    assert ProtegoRobotParser.from_crawler(_Crawler(), BODY).allowed(url, agent) is protego
    assert PythonRobotParser.from_crawler(None, BODY).allowed(url, agent) is python


def test_bom():
    body = b"\xef\xbb\xbf" + BODY
    assert ProtegoRobotParser(body, None).allowed("http://e.com/private/x", "bot") is False
    # as in Scrapy: the standard library's parser reads a strict UTF-8 decoding, BOM kept
    assert PythonRobotParser(body, None).allowed("http://e.com/private/x", "bot") is True


def test_crawl_delay():
    assert ProtegoRobotParser(BODY, None).crawl_delay("bot") == 2.0
    assert PythonRobotParser(BODY, None).crawl_delay("special") is None
    assert ProtegoRobotParser(b"", None).crawl_delay("bot") is None


def test_robot_parser_is_abstract():
    with pytest.raises(TypeError):
        RobotParser()

    class Mine(RobotParser):
        @classmethod
        def from_crawler(cls, crawler, robotstxt_body):
            return cls()

        def allowed(self, url, user_agent):
            return True

    assert Mine.from_crawler(None, b"").crawl_delay("x") is None


def test_rerp_parser_needs_its_library():
    try:
        import robotexclusionrulesparser  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pip install robotexclusionrulesparser"):
            RerpRobotParser(BODY, None)
    else:
        assert RerpRobotParser(BODY, None).allowed("http://e.com/private/x", "bot") is False


def test_decode_robotstxt(caplog):
    assert decode_robotstxt(b"\xef\xbb\xbfA\xff", None) == "A"
    assert decode_robotstxt(b"A\xff", None, to_native_str_type=True) == ""
    assert "treating it as an empty file" in caplog.text
