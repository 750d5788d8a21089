"""The rules of ``crawlfw port``, one text at a time (:class:`crawlfw.commands._porting.Porter`):
what changes in Python and in configuration text, what is left and reported, and that a
ported text ports to itself."""

import sys
import textwrap

import pytest

from crawlfw.commands._porting import Note, Porter, PortError

PORTER = Porter(local={"myproj", "scrapy_tools"}, commands={"checkall"})


def py(text):
    return PORTER.port_python(textwrap.dedent(text).lstrip("\n"))


# -- Python: what changes ------------------------------------------------------------------

@pytest.mark.parametrize(("source", "expected", "changes"), [
    ("import scrapy\n", "import crawlfw\n", 1),
    ("import scrapy.http\n", "import crawlfw.http\n", 1),
    ("import os, scrapy\n", "import os, crawlfw\n", 1),
    ("import scrapy as s\ns.Request\n", "import crawlfw as s\ns.Request\n", 1),
    ("from scrapy.http import TextResponse\n", "from crawlfw.http import TextResponse\n", 1),
    ("from scrapy import (\n    Request,\n    signals,\n)\n",
     "from crawlfw import (\n    Request,\n    signals,\n)\n", 1),
    ("import scrapy\nclass S(scrapy.Spider):\n    x = scrapy.http.Request\n",
     "import crawlfw\nclass S(crawlfw.Spider):\n    x = crawlfw.http.Request\n", 3),
    # strings: a whole dotted path into Scrapy (settings keys and values, mock targets)
    ('X = {"scrapy.extensions.telnet.TelnetConsole": None}\n',
     'X = {"crawlfw.extensions.telnet.TelnetConsole": None}\n', 1),
    ("patch('scrapy.crawler.CrawlerProcess.start')\n",
     "patch('crawlfw.crawler.CrawlerProcess.start')\n", 1),
    ('E = "scrapy.utils.misc:load_object"\n', 'E = "crawlfw.utils.misc:load_object"\n', 1),
    ('cmd = ["python", "-m", "scrapy", "crawl", "q"]\n',
     'cmd = ["python", "-m", "crawlfw", "crawl", "q"]\n', 1),
    ('c = "scrapy crawlall --sample 1"\n', 'c = "scrapy crawlall --sample 1"\n', 0),  # unknown
    ('c = "scrapy checkall --loglevel=ERROR"\n', 'c = "crawlfw checkall --loglevel=ERROR"\n', 1),
    ('os.environ["SCRAPY_SETTINGS_MODULE"] = "p.settings"\n',
     'os.environ["CRAWLFW_SETTINGS_MODULE"] = "p.settings"\n', 1),
    ("env = 'SCRAPY_PROJECT=x SCRAPY_PYTHON_SHELL=ptpython'\n",
     "env = 'CRAWLFW_PROJECT=x CRAWLFW_PYTHON_SHELL=ptpython'\n", 2),
    ('r"scrapy.http"\n', 'r"crawlfw.http"\n', 1),
    ('"""scrapy.http"""\n', '"""crawlfw.http"""\n', 1),
])
def test_python_changes(source, expected, changes):
    ported = PORTER.port_python(source)
    assert ported.text == expected
    assert ported.changes == changes
    assert PORTER.port_python(ported.text).text == ported.text  # a second run: the same
    assert PORTER.port_python(ported.text).changes == 0


# -- Python: what stays -----------------------------------------------------------------------

@pytest.mark.parametrize("source", [
    "# import scrapy; scrapy crawl x\n",
    '"""A scrapy spider, see scrapy.Spider and `scrapy crawl`."""\n',
    "scrapy_item = {'url': 'https://scrapy.org'}\n",
    "from kingfisher_scrapy.base_spiders import BaseSpider\n",
    "import kingfisher_scrapy.util\nkingfisher_scrapy.util.x\n",
    "from spidermon.contrib.scrapy.monitors import SpiderCloseMonitorSuite\n",
    "x = 'scrapy.org'\n",
    "scrapy = 3\nprint(scrapy)\n",  # not the module: the file does not import it
    "intersphinx = {'scrapy': ('https://docs.scrapy.org/', None)}\n",  # a dict key
    "setup(entry_points={'scrapy': ['settings = p.settings']})\n",
    "b'scrapy.http'\n",
    "from . import scrapy\n",
    "from myproj import scrapy\n",
    "x.scrapy.http\n",
    "'scrapyd-job.txt'\n",
])
def test_python_left_alone(source):
    ported = PORTER.port_python(source)
    assert (ported.text, ported.changes) == (source, 0)


def test_keyword_argument_named_scrapy_is_not_the_module():
    ported = py("""
        import scrapy
        f(scrapy=scrapy.Request)
    """)
    assert ported.text == "import crawlfw\nf(scrapy=crawlfw.Request)\n"


def test_a_local_variable_after_a_from_import_is_left():
    ported = py("""
        from scrapy import Spider
        scrapy = Spider
    """)
    assert ported.text == "from crawlfw import Spider\nscrapy = Spider\n"


def test_line_endings_encoding_and_the_rest_of_the_file_are_kept():
    source = "# -*- coding: utf-8 -*-\r\nimport scrapy\r\nNAME = 'São Paulo'  # scrapy\r\n"
    ported = PORTER.port_python(source)
    assert ported.text == source.replace("import scrapy", "import crawlfw")


def test_templates_with_placeholders_are_ported():
    template = textwrap.dedent("""
        import scrapy


        class $classname(scrapy.Spider):
            name = "$name"
            allowed_domains = ["${domain}"]
    """).lstrip()
    ported = PORTER.port_python(template, template=True)
    assert ported.text == template.replace("scrapy", "crawlfw")
    assert ported.changes == 2


def test_python_that_does_not_tokenize_is_an_error():
    with pytest.raises(PortError, match="not Python"):
        PORTER.port_python("x = (\n")


# -- Python: notes and references ---------------------------------------------------------------

def test_plugins_are_left_and_noted():
    ported = py("""
        from scrapy_playwright.page import PageMethod
        import scrapyd
        from spidermon import Monitor
        from scrapy_tools.x import y  # the project's own package
        H = {"https": "scrapy_zyte_api.ScrapyZyteAPIDownloadHandler"}
        P = {"spidermon.contrib.scrapy.pipelines.ItemValidationPipeline": 400}
    """)
    assert ported.changes == 0
    assert ported.notes == [
        Note(1, "plugin", "import scrapy_playwright.page"),
        Note(2, "plugin", "import scrapyd"),
        Note(3, "plugin", "import spidermon"),
        Note(5, "plugin", "scrapy_zyte_api.ScrapyZyteAPIDownloadHandler"),
        Note(6, "plugin", "spidermon.contrib.scrapy.pipelines.ItemValidationPipeline"),
    ]


def test_paths_built_at_run_time_are_noted():
    ported = py("""
        a = "scrapy.%s" % name
        b = "scrapy.downloadermiddlewares." + name
        c = f"scrapy.{name}"
    """)
    assert ported.changes == 0
    assert [(n.line, n.kind) for n in ported.notes] == [(1, "dynamic"), (2, "dynamic"),
                                                        (3, "dynamic")]


def test_dependencies_in_setup_py_are_noted():
    ported = py('setup(install_requires=["scrapy>=2.11", "w3lib"])\n')
    assert ported.notes == [Note(1, "dependency", "scrapy>=2.11")]


def test_references_name_every_crawlfw_name_used():
    ported = py("""
        import scrapy
        from scrapy.utils.reactor import install_reactor, is_asyncio_reactor_installed as i
        from scrapy.http import (
            JsonResponse,
        )
        S = {"scrapy.extensions.telnet.TelnetConsole": None}
        x = scrapy.FormRequest.from_response
    """)
    assert ported.references == [
        (1, "crawlfw"),
        (2, "crawlfw.utils.reactor.install_reactor"),
        (2, "crawlfw.utils.reactor.is_asyncio_reactor_installed"),
        (4, "crawlfw.http.JsonResponse"),
        (6, "crawlfw.extensions.telnet.TelnetConsole"),
        (7, "crawlfw.FormRequest.from_response"),
    ]


@pytest.mark.skipif(sys.version_info < (3, 12), reason="f-string tokens are Python 3.12's")
def test_code_inside_fstrings_is_ported():
    ported = py("""
        import scrapy
        v = f"{scrapy.__version__}"
    """)
    assert ported.text == 'import crawlfw\nv = f"{crawlfw.__version__}"\n'


# -- configuration and deployment text ----------------------------------------------------------

@pytest.mark.parametrize(("text", "expected", "changes"), [
    ("ENV SCRAPY_SETTINGS_MODULE=p.settings\n", "ENV CRAWLFW_SETTINGS_MODULE=p.settings\n", 1),
    ("export SCRAPY_PROJECT=x\n", "export CRAWLFW_PROJECT=x\n", 1),
    ("cd src && uv run scrapy crawl $(SPIDER)\n", "cd src && uv run crawlfw crawl $(SPIDER)\n", 1),
    ('CMD ["scrapy", "crawl", "q"]\n', 'CMD ["crawlfw", "crawl", "q"]\n', 1),
    ("entry: scrapy checkall --loglevel=WARNING\n",
     "entry: crawlfw checkall --loglevel=WARNING\n", 1),
    ("python -m scrapy list\n", "python -m crawlfw list\n", 1),
    ("run: pytest -W ignore::DeprecationWarning:scrapy.core.downloader.webclient\n",
     "run: pytest -W ignore::DeprecationWarning:crawlfw.core.downloader.webclient\n", 1),
    ("[settings]\ndefault = p.settings\n", "[settings]\ndefault = p.settings\n", 0),
    # left: comments, other commands, package lists, URLs, names containing scrapy
    ("# Automatically created by: scrapy startproject\n",
     "# Automatically created by: scrapy startproject\n", 0),
    ("; scrapy crawl x\n", "; scrapy crawl x\n", 0),
    ("pip install scrapy pytest\n", "pip install scrapy pytest\n", 0),
    ("known_third_party = scrapy\n", "known_third_party = scrapy\n", 0),
    ("--thirdparty scrapy --multi-line 3\n", "--thirdparty scrapy --multi-line 3\n", 0),
    ("url: https://docs.scrapy.org/en/latest\n", "url: https://docs.scrapy.org/en/latest\n", 0),
    ("id: scrapy-checkall\n", "id: scrapy-checkall\n", 0),
    ("stack: scrapy:2.14-20260326\n", "stack: scrapy:2.14-20260326\n", 0),
    ("SCRAPY_CLOUD_PROJECT_ID=1\n", "SCRAPY_CLOUD_PROJECT_ID=1\n", 0),
    ("[project.entry-points.scrapy]\n", "[project.entry-points.scrapy]\n", 0),
    ("- uses: scrapy/scrapy/issues/6450\n", "- uses: scrapy/scrapy/issues/6450\n", 0),
])
def test_text_changes(text, expected, changes):
    ported = PORTER.port_text(text)
    assert (ported.text, ported.changes) == (expected, changes)
    assert PORTER.port_text(ported.text).changes == 0


def test_text_dependencies_are_noted_and_kept():
    text = 'dependencies = [\n    "scrapy==2.14.2",\n    "w3lib",\n]\n'
    ported = PORTER.port_text(text)
    assert ported.text == text
    assert ported.notes == [Note(2, "dependency", '"scrapy==2.14.2",')]


def test_requirements_files_are_read_for_notes_only():
    notes = PORTER.dependencies("scrapy==2.16.0\nscrapyd==1.6\n# scrapy\nScrapy-Splash\n"
                                "scrapy[s3]\nscrapy  # the framework\n")
    assert notes == [Note(1, "dependency", "scrapy==2.16.0"), Note(5, "dependency", "scrapy[s3]"),
                     Note(6, "dependency", "scrapy")]


# -- the class-based command (Scrapy 1.2's command API) -------------------------------------------

def test_command_class_ports_in_process(tmp_path, capsys):
    import optparse

    from crawlfw.commands.port import Command
    from crawlfw.exceptions import UsageError
    from crawlfw.settings import Settings

    (tmp_path / "m.py").write_text("import scrapy\n")
    cmd = Command()
    cmd.settings = Settings()
    parser = optparse.OptionParser()
    cmd.add_options(parser)
    assert (cmd.syntax(), cmd.short_desc(), cmd.requires_project) == (
        "[--dry-run] <path>", "Port a Scrapy project, module or file to crawlfw (in place)",
        False)
    opts, args = parser.parse_args(["--dry-run", str(tmp_path)])
    cmd.run(args, opts)
    assert "-import scrapy\n+import crawlfw\n" in capsys.readouterr().out
    assert (tmp_path / "m.py").read_text() == "import scrapy\n"
    opts, args = parser.parse_args([str(tmp_path)])
    cmd.run(args, opts)
    assert capsys.readouterr().out.startswith("m.py: 1\nPorted 1 of 1 files: 1 changes.")
    assert (tmp_path / "m.py").read_text() == "import crawlfw\n"
    with pytest.raises(UsageError):
        cmd.run([], opts)
