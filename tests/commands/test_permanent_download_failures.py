"""A download failure that would repeat is not retried (issue 23): response headers
over libcurl's limits, and a body cancelled at ``DOWNLOAD_MAXSIZE``. A real
``crawlfw runspider`` subprocess against a local server: one ERROR line per page naming
the limit, no retry, the failure counted in the stats."""

import re
import textwrap

import pytest

from tests.core.test_curl import server  # noqa: F401 - the local server's fixture
from tests.support.proc import run_measured

pytestmark = pytest.mark.slow

SPIDER = textwrap.dedent("""
    import crawlfw

    class Limits(crawlfw.Spider):
        name = "limits"
        base = ""

        def start_requests(self):
            for path in ("bigheader", "manyheaders", "largeheaders", "bytes/100000",
                         "bytes/10"):
                yield crawlfw.Request(f"{self.base}/{path}")

        def parse(self, response):
            yield {"url": response.url}
""")


def test_failures_that_would_repeat_are_not_retried(server, tmp_path):  # noqa: F811
    (tmp_path / "limits.py").write_text(SPIDER)
    done = run_measured("runspider", "limits.py", "-a", f"base={server.url}",
                        "-o", "items.jl", "-s", "DOWNLOAD_MAXSIZE=1000",
                        "-s", "RETRY_TIMES=2", cwd=tmp_path, timeout_s=90)
    text = done.stderr
    assert done.returncode == 0 and not done.timed_out, text[-3000:]
    errors = [line for line in text.splitlines() if " ERROR: " in line]
    assert len(errors) == 4, "\n".join(errors)
    for route in ("bigheader", "manyheaders", "largeheaders"):
        [line] = [e for e in errors if f"/{route}>" in e]
        assert f"Response headers too large: {server.url}/{route} (curl " in line, line
    [line] = [e for e in errors if "/bytes/100000>" in e]
    assert "expected response size (100000) larger than download max size (1000)" in line
    assert "Retrying" not in text
    assert "'retry/count'" not in text
    assert re.search(r"'downloader/exception_type_count/crawlfw\.exceptions\."
                     r"ResponseHeadersTooLarge': 3", text), text[-3000:]
    assert re.search(r"'downloader/exception_type_count/crawlfw\.exceptions\."
                     r"DownloadCancelled': 1", text), text[-3000:]
    assert (tmp_path / "items.jl").read_text().count("\n") == 1  # the small page
