"""A crawl whose component cannot be built never starts: it leaves every feed file as it
was (an ``-O`` file too, with ``JOBDIR`` too) and says why in one ERROR line naming the
setting, the class path and the exception, whatever the log settings; the traceback is a
DEBUG record (issue 34, issue 29's "A crawl that fails before it starts writes no feed
file and exits with one clear line"). Real ``runspider``/``crawl`` subprocesses against
a local site."""

import json

import pytest

from tests.commands.conftest import write
from tests.support.servers import StaticSiteServer

pytestmark = pytest.mark.slow

SPIDER = """
import crawlfw
from crawlfw.actors import UserActor


class Boom:
    def __init__(self):
        raise RuntimeError("this component refuses to start")


class BoomFromCrawler:
    @classmethod
    def from_crawler(cls, crawler):
        raise ValueError("no database at db://nowhere")


class BoomOnOpen:
    def open_spider(self, spider):
        raise ConnectionError("db://nowhere refused the connection")

    def process_item(self, item, spider):
        return item


class BadActor(UserActor):
    def __init__(self, crawler, **kw):
        super().__init__(crawler, **kw)
        raise KeyError("token")


class ItemsSpider(crawlfw.Spider):
    name = "items"

    def start_requests(self):
        yield crawlfw.Request(self.base_url + "/index.html")

    def parse(self, response):
        for text in response.css("p::text").extract():
            yield {"text": text}
"""

#: What an earlier run left in each -O file.
OLD = {
    "out.jl": b'{"text": "earlier"}\n',
    "out.json": b'[\n{"text": "earlier"}\n]',
    "out.csv": b"text\r\nearlier\r\n",
}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("site")
    (root / "index.html").write_text("<html><body><p>new one</p><p>new two</p></body></html>",
                                     encoding="utf-8")
    server = StaticSiteServer(root).start()
    yield server
    server.stop()


def _broken(setting, path):
    return ["-s", f"{setting}=" + json.dumps({path: 300})]


def _errors(stderr):
    return [line for line in stderr.splitlines() if "] ERROR: " in line]


@pytest.mark.parametrize("setting, path, error, jobdir", [
    ("ITEM_PIPELINES", "brokenstart.Boom", "RuntimeError: this component refuses to start",
     False),
    ("ITEM_PIPELINES", "brokenstart.Boom", "RuntimeError: this component refuses to start",
     True),
    ("DOWNLOADER_MIDDLEWARES", "brokenstart.BoomFromCrawler",
     "ValueError: no database at db://nowhere", True),
    ("SPIDER_MIDDLEWARES", "brokenstart.Boom", "RuntimeError: this component refuses to start",
     False),
    ("EXTENSIONS", "brokenstart.BoomFromCrawler", "ValueError: no database at db://nowhere",
     False),
])
def test_a_failed_start_keeps_every_feed_file(crawlfw, tmp_path, site, setting, path, error,
                                              jobdir):
    """The -O files were emptied before the components were built (the feeds were opened
    first); Scrapy keeps them. Then the same command without the broken component
    overwrites them, with the same JOBDIR too."""
    spider = write(tmp_path / "brokenstart.py", SPIDER)
    for name, content in OLD.items():
        (tmp_path / name).write_bytes(content)
    (tmp_path / "kept.jl").write_bytes(b'{"appended": "before"}\n')
    args = ["runspider", spider, "-a", f"base_url={site.url}",
            *(arg for name in OLD for arg in ("-O", name))]
    job = ["-s", f"JOBDIR={tmp_path / 'job'}"] if jobdir else []
    result = crawlfw(*args, *job, *_broken(setting, path))
    assert result.returncode == 1, result.stderr
    for name, content in OLD.items():
        assert (tmp_path / name).read_bytes() == content, name
    line = f"Crawl could not start: {setting}: cannot build {path!r}: {error}"
    assert result.stderr.splitlines()[-1].endswith(f"] ERROR: {line}"), result.stderr[-2000:]
    assert len(_errors(result.stderr)) == 1, result.stderr
    assert "Spider opened" not in result.stderr and "Stored" not in result.stderr
    # -o files too: not created, not cut back
    result = crawlfw("runspider", spider, "-a", f"base_url={site.url}", "-o", "new.jl",
                     "-o", "kept.jl", *_broken(setting, path))
    assert result.returncode == 1, result.stderr
    assert not (tmp_path / "new.jl").exists()
    assert (tmp_path / "kept.jl").read_bytes() == b'{"appended": "before"}\n'

    result = crawlfw(*args, *job)  # the component fixed: the files are overwritten
    assert result.returncode == 0, result.stderr
    assert [json.loads(line) for line in (tmp_path / "out.jl").read_text().splitlines()] == [
        {"text": "new one"}, {"text": "new two"}]
    assert json.loads((tmp_path / "out.json").read_text()) == [
        {"text": "new one"}, {"text": "new two"}]
    assert (tmp_path / "out.csv").read_bytes() == b"text\r\nnew one\r\nnew two\r\n"


def test_an_actor_that_cannot_be_built_is_one_line(crawlfw, tmp_path, site):
    """An ACTORS actor's constructor runs as the tree starts, after the feeds were opened:
    the start fails in one line, and no feed is written (a created file removed)."""
    spider = write(tmp_path / "brokenstart.py", SPIDER)
    result = crawlfw("runspider", spider, "-a", f"base_url={site.url}", "-o", "new.jl",
                     *_broken("ACTORS", "brokenstart.BadActor"))
    assert result.returncode == 1, result.stderr
    assert not (tmp_path / "new.jl").exists()
    line = "Crawl could not start: ACTORS: cannot build 'brokenstart.BadActor': KeyError: 'token'"
    assert result.stderr.splitlines()[-1].endswith(f"] ERROR: {line}"), result.stderr[-2000:]
    assert len(_errors(result.stderr)) == 1, result.stderr
    assert "[pykka]" not in result.stderr


@pytest.mark.parametrize("setting, path, line, jobdir", [
    ("ITEM_PIPELINES", "brokenstart.BoomOnOpen",
     "ITEM_PIPELINES: 'brokenstart.BoomOnOpen'.open_spider failed: "
     "ConnectionError: db://nowhere refused the connection", False),
    ("ITEM_PIPELINES", "brokenstart.BoomOnOpen",
     "ITEM_PIPELINES: 'brokenstart.BoomOnOpen'.open_spider failed: "
     "ConnectionError: db://nowhere refused the connection", True),
    ("ACTORS", "brokenstart.BadActor",
     "ACTORS: cannot build 'brokenstart.BadActor': KeyError: 'token'", False),
])
def test_user_code_that_refuses_the_start_keeps_every_feed_file(crawlfw, tmp_path, site,
                                                                setting, path, line, jobdir):
    """An item pipeline's open_spider and an ACTORS constructor run on the actors'
    threads as the tree starts; they ran after the feeds were opened, and an -O file
    was left empty. Scrapy opens the item pipelines before spider_opened (where its
    FeedExporter opens the feeds) and keeps the file; so does crawlfw now: the feeds
    are opened after them. The pipeline is not closed (it never opened)."""
    spider = write(tmp_path / "brokenstart.py", SPIDER)
    for name, content in OLD.items():
        (tmp_path / name).write_bytes(content)
    job = ["-s", f"JOBDIR={tmp_path / 'job'}"] if jobdir else []
    result = crawlfw("runspider", spider, "-a", f"base_url={site.url}",
                     *(arg for name in OLD for arg in ("-O", name)), *job,
                     *_broken(setting, path))
    assert result.returncode == 1, result.stderr
    for name, content in OLD.items():
        assert (tmp_path / name).read_bytes() == content, name
    assert result.stderr.splitlines()[-1].endswith(f"] ERROR: Crawl could not start: {line}"), \
        result.stderr[-2000:]
    assert len(_errors(result.stderr)) == 1, result.stderr
    assert "Stored" not in result.stderr and "[pykka]" not in result.stderr
    result = crawlfw("runspider", spider, "-a", f"base_url={site.url}", "-o", "new.jl",
                     *_broken(setting, path))
    assert result.returncode == 1, result.stderr
    assert not (tmp_path / "new.jl").exists()
    if jobdir:  # the job resumes with the pipeline fixed, and its feeds are complete
        result = crawlfw("runspider", spider, "-a", f"base_url={site.url}",
                         *(arg for name in OLD for arg in ("-O", name)), *job)
        assert result.returncode == 0, result.stderr
        assert (tmp_path / "out.csv").read_bytes() == b"text\r\nnew one\r\nnew two\r\n"


PIPELINE_LINE = ("Crawl could not start: ITEM_PIPELINES: cannot build 'brokenstart.Boom': "
                 "RuntimeError: this component refuses to start")

#: log options that keep ERROR lines off standard error ("{log}": a file in tmp_path)
QUIET = {
    "--nolog": ["--nolog"],
    "-L CRITICAL": ["-L", "CRITICAL"],
    "LOG_ENABLED=False": ["-s", "LOG_ENABLED=False"],
    "LOG_FILE": ["-s", "LOG_FILE={log}"],
}


@pytest.mark.parametrize("command", ["crawl", "runspider"])
@pytest.mark.parametrize("logging", ["default", "-L INFO", *QUIET])
def test_a_component_that_cannot_be_built_is_one_line(crawlfw, tmp_path, site, command,
                                                      logging):
    """Three tracebacks were logged (the Supervisor's, pykka's INFO one and the
    command's). Now: one ERROR line, the traceback at DEBUG only (on standard error
    at the default level, in the log file at DEBUG), exit status 1."""
    if command == "crawl":
        project = tmp_path / "proj"
        write(project / "crawlfw.cfg", "[settings]\ndefault = proj.settings\n")
        write(project / "proj" / "__init__.py", "")
        write(project / "proj" / "settings.py", 'SPIDER_MODULES = ["proj.spiders"]\n')
        write(project / "proj" / "spiders" / "__init__.py", "")
        write(project / "proj" / "spiders" / "brokenstart.py", SPIDER)
        path = "proj.spiders.brokenstart.Boom"
        args = ["crawl", "items", "-a", f"base_url={site.url}", "-s",
                "ITEM_PIPELINES=" + json.dumps({path: 300})]
        cwd = project
        line = PIPELINE_LINE.replace("'brokenstart.Boom'", f"{path!r}")
    else:
        spider = write(tmp_path / "brokenstart.py", SPIDER)
        args = ["runspider", spider, "-a", f"base_url={site.url}",
                *_broken("ITEM_PIPELINES", "brokenstart.Boom")]
        cwd = tmp_path
        line = PIPELINE_LINE
    log_file = tmp_path / "crawl.log"
    options = {"default": [], "-L INFO": ["-L", "INFO"]}.get(logging)
    if options is None:
        options = [arg.format(log=log_file) for arg in QUIET[logging]]
    result = crawlfw(*args, *options, "-o", "items.jl", cwd=cwd)
    assert result.returncode == 1, result.stderr
    assert not (cwd / "items.jl").exists()
    lines = result.stderr.splitlines()
    assert "[pykka]" not in result.stderr
    if logging in QUIET:  # the reason, alone, once
        assert lines == [line], result.stderr
        if logging == "LOG_FILE":  # logged there, with the traceback at DEBUG
            logged = log_file.read_text()
            assert f"[crawlfw.commands.{command}] ERROR: {line}" in logged
            assert logged.count("Traceback") == 1
            assert "] DEBUG: ITEM_PIPELINES: cannot build" in logged
        return
    assert lines[-1].endswith(f"[crawlfw.commands.{command}] ERROR: {line}"), result.stderr
    assert len(_errors(result.stderr)) == 1, result.stderr
    if logging == "default":  # DEBUG: the traceback once, under a DEBUG record
        assert result.stderr.count("Traceback") == 1
        before = result.stderr[:result.stderr.index("Traceback")].splitlines()[-1]
        assert "] DEBUG: ITEM_PIPELINES: cannot build" in before, result.stderr
    else:
        assert "Traceback" not in result.stderr
