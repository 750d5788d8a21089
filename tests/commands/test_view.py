"""``crawlfw view``: the page is written to a temporary file and handed to the browser
(``BROWSER`` selects it; here a script that copies the file)."""

import sys

import pytest

from tests.commands.conftest import write

pytestmark = pytest.mark.slow


@pytest.fixture
def fake_browser(tmp_path):
    """A ``BROWSER`` command copying the opened ``file://`` page to ``opened.html``."""
    script = write(tmp_path / "browser.py", """
        import shutil, sys
        from urllib.parse import urlsplit
        from urllib.request import url2pathname
        url = sys.argv[1]
        assert url.startswith("file://"), url
        shutil.copy(url2pathname(urlsplit(url).path), sys.argv[2])
    """)
    opened = tmp_path / "opened.html"
    return {"BROWSER": f"{sys.executable} {script} %s {opened}", "TMPDIR": str(tmp_path)}, opened


def test_opens_the_page_with_a_base_tag(crawlfw, quotes, fake_browser, sites_dir):
    env, opened = fake_browser
    url = f"{quotes.url}/page/3/"
    result = crawlfw("view", "--nolog", url, env=env)
    assert result.returncode == 0, result.stderr
    html = opened.read_bytes()
    assert f'<head><base href="{url}">'.encode() in html
    original = (sites_dir / "quotes.toscrape.com" / "page" / "3" / "index.html").read_bytes()
    assert html.replace(f'<base href="{url}">'.encode(), b"") == original


def test_download_error_exits_1(crawlfw, fake_browser, unused_port):
    env, opened = fake_browser
    result = crawlfw("view", f"http://127.0.0.1:{unused_port}/", env=env)
    assert result.returncode == 1
    assert not opened.exists()


def test_has_no_headers_option(crawlfw, quotes):
    result = crawlfw("view", "--headers", f"{quotes.url}/")
    assert result.returncode == 2
