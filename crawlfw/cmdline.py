"""The ``crawlfw`` command-line tool (argh), entry point :func:`execute`.

Commands are plain functions in ``crawlfw/commands/`` (one module each). Outside a
project (no ``crawlfw.cfg`` found upwards), project-only commands are not offered, as in
Scrapy 1.2. Exit status: 0 on success, 1 when a crawl could not start, 2 on usage errors.
"""

import importlib
import sys

import argh

import crawlfw
from crawlfw.commands import REQUIRES_PROJECT
from crawlfw.utils.project import inside_project

__all__ = ["execute", "COMMAND_MODULES"]

#: Every command module, in ``crawlfw -h`` order; each defines a function of its name.
COMMAND_MODULES = [
    "bench", "check", "crawl", "edit", "fetch", "genspider", "list", "parse", "runspider",
    "settings", "shell", "startproject", "version", "view",
]


def _commands(in_project: bool):
    functions = []
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"crawlfw.commands.{name}")
        except ModuleNotFoundError as e:
            if e.name == f"crawlfw.commands.{name}":
                continue  # not written yet
            raise
        func = getattr(module, name.rstrip("_"), None) or getattr(module, f"{name}_")
        if REQUIRES_PROJECT.get(func.__name__.rstrip("_")) and not in_project:
            continue
        functions.append(func)
    return functions


def execute(argv=None) -> None:
    """Run the ``crawlfw`` command line.

    Args:
        argv: the arguments, without the program name (default ``sys.argv[1:]``).
    """
    if argv is None:
        argv = sys.argv[1:]
    in_project = inside_project()
    parser = argh.ArghParser(
        prog="crawlfw",
        description=f"crawlfw {crawlfw.__version__} - "
        + ("active project" if in_project else "no active project"),
    )
    # BY_NAME_IF_KWONLY: keyword-only parameters are options, positional ones with a
    # default are optional positional arguments (``startproject <name> [dir]``).
    parser.add_commands(
        _commands(in_project),
        name_mapping_policy=argh.assembling.NameMappingPolicy.BY_NAME_IF_KWONLY,
    )
    if argv and REQUIRES_PROJECT.get(argv[0]) and not in_project:
        print(f"Unknown command: {argv[0]}\n\n"
              f"The {argv[0]} command only works inside a project (a directory with a "
              "crawlfw.cfg, or CRAWLFW_SETTINGS_MODULE set).\n"
              'Use "crawlfw -h" to see available commands', file=sys.stderr)
        sys.exit(2)
    try:
        parser.dispatch(argv=argv)
    except argh.CommandError as e:
        print(f"Usage error: {e}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    execute()
