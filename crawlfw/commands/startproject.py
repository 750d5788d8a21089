"""``crawlfw startproject <project_name> [project_dir]``: create a new project."""

import os
import re
import shutil
import stat
import string
from importlib.util import find_spec
from os.path import abspath, exists, join

import argh

import crawlfw
from crawlfw.commands import ScrapyCommand, command, fail
from crawlfw.commands._command import delegate
from crawlfw.exceptions import UsageError
from crawlfw.utils.template import render_templatefile, string_camelcase

#: Files rendered after copying the project template (``$project_name`` substituted).
TEMPLATES_TO_RENDER = (
    ("crawlfw.cfg",),
    ("${project_name}", "settings.py.tmpl"),
    ("${project_name}", "items.py.tmpl"),
    ("${project_name}", "pipelines.py.tmpl"),
)

#: What is not copied from the project template (Scrapy's ``IGNORE``): a
#: :func:`shutil.ignore_patterns` function.
IGNORE = shutil.ignore_patterns("*.pyc", "__pycache__", ".svn")

_VALID_NAME = re.compile(r"^[_a-zA-Z]\w*$", re.ASCII)


def templates_dir(settings, kind: str) -> str:
    """``TEMPLATES_DIR/<kind>`` (``project`` or ``spiders``); ``TEMPLATES_DIR`` defaults to
    the templates shipped in the crawlfw package."""
    base = settings["TEMPLATES_DIR"] or join(crawlfw.__path__[0], "templates")
    return join(base, kind)


def _module_exists(module_name: str) -> bool:
    """True when a top-level module of that name is importable (found without running it)."""
    try:
        return find_spec(module_name) is not None
    except (ImportError, ValueError):
        return False


def name_error(project_name: str) -> str | None:
    """Return why ``project_name`` cannot name a project, or None when it can.

    A project name is a Python identifier (ASCII letters, digits, underscores, not starting
    with a digit) that is not already an importable module (``crawlfw``, ``os``...).
    """
    if not _VALID_NAME.search(project_name):
        return ("Error: Project names must begin with a letter and contain only\n"
                "letters, numbers and underscores")
    if _module_exists(project_name):
        return f"Error: Module {project_name!r} already exists"
    return None


def _make_writable(path):
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            full = join(root, name)
            mode = os.stat(full).st_mode
            os.chmod(full, mode | stat.S_IWUSR)


@argh.arg("project_name", help="the project's Python package name")
@argh.arg("project_dir", help="directory to create it in (default: project_name)")
@command(default_settings={"LOG_ENABLED": False}, help="Create new project")
def startproject(project_name, project_dir=None, *, settings=None):
    """Create ``project_dir`` (default ``project_name``) from the project template.

    Exit status 1 when ``project_dir`` already holds a ``crawlfw.cfg`` or the name is
    not valid (see :func:`name_error`).
    """
    _run(settings, project_name, project_dir, templates_dir(settings, "project"))


def _run(settings, project_name, project_dir, template_dir):
    """startproject's work, from the project template in ``template_dir``."""
    project_dir = project_dir or project_name
    if exists(join(project_dir, "crawlfw.cfg")):
        fail(f"Error: crawlfw.cfg already exists in {abspath(project_dir)}")
    error = name_error(project_name)
    if error:
        fail(error)
    if exists(join(project_dir, project_name)):
        fail(f"Error: {abspath(join(project_dir, project_name))} already exists")
    shutil.copytree(template_dir, abspath(project_dir), ignore=IGNORE, dirs_exist_ok=True)
    shutil.move(join(project_dir, "module"), join(project_dir, project_name))
    _make_writable(project_dir)
    for paths in TEMPLATES_TO_RENDER:
        path = join(*paths)
        tplfile = join(project_dir,
                       string.Template(path).substitute(project_name=project_name))
        render_templatefile(tplfile, project_name=project_name,
                            ProjectName=string_camelcase(project_name))
    print(f"New crawlfw project {project_name!r}, using template directory "
          f"{template_dir!r}, created in:")
    print(f"    {abspath(project_dir)}\n")
    print("You can start your first spider with:")
    print(f"    cd {project_dir}")
    print("    crawlfw genspider example example.com")


class Command(ScrapyCommand):
    """``crawlfw startproject <project_name> [project_dir]`` (Scrapy 1.2's command)."""

    requires_project = False
    default_settings = {"LOG_ENABLED": False}

    def syntax(self):
        return "<project_name> [project_dir]"

    def short_desc(self):
        return "Create new project"

    @property
    def templates_dir(self) -> str:
        """The project template's directory (``TEMPLATES_DIR/project``; Scrapy 2's
        property): a subclass overriding it makes ``startproject`` copy its own."""
        return templates_dir(self.settings, "project")

    def run(self, args, opts):
        if len(args) not in (1, 2):
            raise UsageError()
        project_name, project_dir = ([*args] + [None])[:2]
        delegate(self, _run, self.settings, project_name, project_dir, self.templates_dir)
