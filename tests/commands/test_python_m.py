"""``python -m crawlfw`` runs the command line (as ``python -m scrapy`` does), and a
Scrapy 2 style spider using ``response.json()``, ``response.jmespath()``,
``has-class()``, ``drop()`` and ``Selector(body=...)`` crawls a local site with it
(issue 17)."""

import json
import subprocess
import sys

import pytest

import crawlfw
from tests.commands.conftest import COMMAND_TIMEOUT_S, crawlfw_env, write
from tests.support.servers import StaticSiteServer

pytestmark = pytest.mark.slow

SPIDER = '''
import crawlfw
from crawlfw.selector import Selector


class ApiSpider(crawlfw.Spider):
    name = "api"
    base_url = ""

    def start_requests(self):
        yield crawlfw.Request(self.base_url + "/api/items.json", callback=self.parse)

    def parse(self, response):
        data = response.json()
        assert response.json() is data
        for name, price in zip(response.jmespath("items[].name").getall(),
                               response.jmespath("items[].price").getall()):
            yield {"name": name, "price": price, "total": data["total"]}
        yield response.follow(response.jmespath("next").get(), callback=self.parse_page)

    def parse_page(self, response):
        response.css("div.ad").drop()
        yield {
            "featured": response.xpath('//li[has-class("item", "featured")]/text()').getall(),
            "items": response.css("li::text").getall(),
            "ads": response.css("div.ad").getall(),
            "config": response.css("script#config::text").jmespath("lang").get(),
            "body": Selector(body=response.body, encoding=response.encoding).css(
                "title::text").get(),
        }
'''


def test_python_m_crawlfw_version():
    out = subprocess.run([sys.executable, "-m", "crawlfw", "version"], env=crawlfw_env(),
                         capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"crawlfw {crawlfw.__version__}"


def test_python_m_crawlfw_runspider_with_scrapy2_selectors(tmp_path):
    site = tmp_path / "site"
    write(site / "api" / "items.json", json.dumps({
        "items": [{"name": "a", "price": 1.5}, {"name": "b", "price": 2}],
        "total": 2, "next": "/page.html"}))
    write(site / "page.html", """
        <html><head><title>Caf\u00e9</title>
        <script id="config">{"lang": "fr"}</script></head>
        <body><ul>
          <li class="item featured">one</li>
          <li class="item">two</li>
          <li class="featured  item other">three</li>
        </ul><div class="ad">buy</div><div class="ad"><p>now</p></div></body></html>
    """)
    spider = write(tmp_path / "api_spider.py", SPIDER)
    server = StaticSiteServer(site).start()
    try:
        out = subprocess.run(
            [sys.executable, "-m", "crawlfw", "runspider", str(spider), "-a",
             f"base_url={server.url}", "-o", str(tmp_path / "out.jl")],
            cwd=tmp_path, env=crawlfw_env(), capture_output=True, text=True,
            timeout=COMMAND_TIMEOUT_S)
    finally:
        server.stop()
    assert out.returncode == 0, out.stderr
    items = [json.loads(line) for line in (tmp_path / "out.jl").read_text().splitlines()]
    assert items == [
        {"name": "a", "price": 1.5, "total": 2},
        {"name": "b", "price": 2, "total": 2},
        {"featured": ["one", "three"], "items": ["one", "two", "three"], "ads": [],
         "config": "fr", "body": "Caf\u00e9"},
    ]
    assert "'finish_reason': 'finished'" in out.stderr
    assert "ERROR" not in out.stderr
