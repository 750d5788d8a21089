"""``crawlfw check``: spider contracts run against the local quotes site; a failing
contract makes the exit status 1."""

import pytest

from tests.commands.conftest import write

pytestmark = pytest.mark.slow

SPIDER = '''
import crawlfw


class ContractedSpider(crawlfw.Spider):
    name = "contracted"

    async def start(self):  # Scrapy 2.13's entry point: check replaces it too
        yield crawlfw.Request("{base}/never-requested")

    def parse(self, response):
        """A listing page.

        @url {base}/
        @returns items 10 10
        @returns requests 1 1
        @scrapes text author
        """
        for quote in response.css("div.quote"):
            yield {{"text": quote.css("span.text::text").extract_first(),
                   "author": quote.css("small.author::text").extract_first()}}
        yield crawlfw.Request(response.urljoin(response.css("li.next a::attr(href)")
                                               .extract_first()))

    def parse_author(self, response):
        """@url {base}/author/Jane-Austen/
        @returns items 1
        @scrapes name
        """
        yield {{"name": response.css("h3.author-title::text").extract_first().strip()}}

    def not_tested(self, response):
        pass
'''

FAILING = '''
import crawlfw


class FailingSpider(crawlfw.Spider):
    name = "failing"

    def parse(self, response):
        """@url {base}/
        @returns items 5 5
        @scrapes text missing_field
        """
        return [{{"text": "only one"}}]
'''


@pytest.fixture
def contracts_project(project, quotes):
    write(project / "testproj" / "spiders" / "contracted.py", SPIDER.format(base=quotes.url))
    write(project / "testproj" / "spiders" / "failing.py", FAILING.format(base=quotes.url))
    write(project / "testproj" / "spiders" / "plain.py", """
        import crawlfw

        class Plain(crawlfw.Spider):
            name = "plain"
    """)
    return project


def test_passing_contracts(crawlfw, contracts_project):
    result = crawlfw("check", "contracted", cwd=contracts_project)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert "Ran 5 contracts in " in result.stderr  # 2 @returns + @scrapes, @returns + @scrapes
    assert lines[-1] == "OK"


def test_failing_contracts(crawlfw, contracts_project):
    result = crawlfw("check", "failing", cwd=contracts_project)
    assert result.returncode == 1
    # the seed's format (Scrapy's documentation of "check")
    lines = result.stderr.splitlines()
    assert lines[:6] == [
        "FF",  # unittest's progress dots
        "[FAILED] failing:parse",
        ">>> Returned 1 items, expected 5",
        "",
        "[FAILED] failing:parse",
        ">>> 'missing_field' field is missing",
    ]
    assert "Traceback" not in result.stderr
    assert "Ran 2 contracts in " in result.stderr
    assert result.stderr.splitlines()[-1] == "FAILED (failures=2)"


def test_every_spider_by_default(crawlfw, contracts_project):
    result = crawlfw("check", cwd=contracts_project)
    assert result.returncode == 1
    assert "Ran 7 contracts in " in result.stderr
    assert result.stderr.splitlines()[-1] == "FAILED (failures=2)"


def test_verbose_lists_each_contract(crawlfw, contracts_project):
    result = crawlfw("check", "-v", "contracted", cwd=contracts_project)
    assert result.returncode == 0, result.stderr
    assert "[contracted] parse_author (@scrapes post-hook) ... ok" in result.stderr
    assert result.stderr.count(" ... ok") == 5


def test_verbose_failure_adds_the_traceback(crawlfw, contracts_project):
    result = crawlfw("check", "-v", "failing", cwd=contracts_project)
    assert result.returncode == 1
    assert "[FAILED] failing:parse\n>>> Returned 1 items, expected 5\n" in result.stderr
    assert "ContractFail: Returned 1 items, expected 5" in result.stderr  # the traceback


def test_list(crawlfw, contracts_project):
    result = crawlfw("check", "-l", cwd=contracts_project)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "contracted\n  * parse\n  * parse_author\nfailing\n  * parse\n"
    result = crawlfw("check", "-l", "-v", cwd=contracts_project)
    assert result.stdout.endswith("plain\n")


def test_download_error_is_an_error(crawlfw, project, unused_port):
    write(project / "testproj" / "spiders" / "down.py", SPIDER.format(
        base=f"http://127.0.0.1:{unused_port}"))
    result = crawlfw("check", "contracted", cwd=project)
    assert result.returncode == 1
    assert "[ERROR] contracted:parse\n>>> ConnectionRefusedError: " in result.stderr
    assert "FAILED (errors=2)" in result.stderr


def test_unknown_spider(crawlfw, contracts_project):
    result = crawlfw("check", "nope", cwd=contracts_project)
    assert result.returncode == 1
    assert "Spider not found: nope" in result.stderr


def test_unknown_contract(crawlfw, project, quotes):
    write(project / "testproj" / "spiders" / "odd.py", f'''
        import crawlfw

        class Odd(crawlfw.Spider):
            name = "odd"

            def parse(self, response):
                """@url {quotes.url}/
                @nosuchcontract 1
                """
    ''')
    result = crawlfw("check", "odd", cwd=project)
    assert result.returncode == 1
    assert "Unknown contract @nosuchcontract" in result.stderr


ECHOED = '''
import json

import crawlfw

EXPECTED = {{"method": "PUT", "body": "a=1&b=two words", "x_test": "yes please",
            "language": "fr", "cookie": "session=abc123"}}


class EchoedSpider(crawlfw.Spider):
    name = "echoed"

    def parse(self, response):
        """Scrapy 2.19's request contracts, on by default.

        @url {base}/form
        @method PUT
        @body a=1&b=two words
        @header X-Test yes please
        @header Accept-Language fr
        @cookie session abc123
        @returns items 1 1
        @scrapes method body x_test language cookie
        """
        echo = json.loads(response.text)
        got = {{"method": echo["method"], "body": echo["body"],
               "x_test": echo["headers"].get("X-Test"),
               "language": echo["headers"].get("Accept-Language"),
               "cookie": echo["headers"].get("Cookie")}}
        # a field the server did not see as the contracts say is left out: @scrapes fails
        yield {{k: v for k, v in got.items() if EXPECTED[k] == v}}

    def parse_checked(self, response):
        """@url {base}/checked
        @method POST
        @returns items 1 1
        """
        if json.loads(response.text)["method"] == "POST":
            yield {{"ok": True}}
'''


@pytest.fixture
def echo_server():
    from tests.support.servers import EchoServer

    server = EchoServer().start()
    yield server
    server.stop()


def test_scrapy_2_19_request_contracts(crawlfw, project, echo_server):
    write(project / "testproj" / "spiders" / "echoed.py", ECHOED.format(base=echo_server.url))
    result = crawlfw("check", "echoed", cwd=project)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Ran 3 contracts in " in result.stderr
