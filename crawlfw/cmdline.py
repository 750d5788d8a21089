"""The ``crawlfw`` command-line tool (argh), entry point :func:`execute`.

Commands are plain functions in ``crawlfw/commands/`` (one module each). Outside a
project (no ``crawlfw.cfg`` found upwards), project-only commands are not offered, as in
Scrapy 1.2. ``crawlfw`` alone (or ``crawlfw -h``) prints Scrapy 1.2's listing: the
active project or ``no active project``, then one line per command. Exit status: 0 on success, 1 when a crawl could not start, 2 on usage errors.

Class-based commands (:class:`crawlfw.commands.ScrapyCommand` subclasses, Scrapy 1.2's
API) are added from the ``COMMANDS_MODULE`` project setting and the ``crawlfw.commands``
entry-point group (see :mod:`crawlfw.commands._custom`); one with the name of a built-in
command replaces it, as in Scrapy 1.2. Their exit status is their ``exitcode``.
"""

import gc

# Start-up makes objects that live as long as the process (modules, classes, settings):
# execute() collects once and freezes them before the command runs. Automatic
# collections before that would only traverse them again (~7 M instructions, 1 % of a
# one-request crawl), so they are held off while this module's imports run and in
# execute() until the freeze. A collector someone else disabled stays disabled.
_gc_was_enabled = gc.isenabled()
gc.disable()
try:
    import argparse
    import importlib
    import sys

    import argh

    import crawlfw
    from crawlfw.commands import _GIVEN_SETTINGS, REQUIRES_PROJECT
    from crawlfw.commands._custom import ScrapyArgumentParser, argh_function, get_commands_dict
    from crawlfw.utils.project import get_project_settings, inside_project
finally:
    if _gc_was_enabled:
        gc.enable()
    del _gc_was_enabled

__all__ = ["execute", "COMMAND_MODULES", "ScrapyArgumentParser"]

_DEFAULT_GC_THRESHOLD0 = 700  # CPython's
_CRAWL_GC_THRESHOLD0 = 7000

#: Every command module, in ``crawlfw -h`` order; each defines a function of its name.
COMMAND_MODULES = [
    "bench", "check", "crawl", "edit", "fetch", "genspider", "list", "parse", "runspider",
    "settings", "shell", "startproject", "version", "view",
    "ps", "status", "pause", "resume", "stop", "schedule", "dashboard",  # the running crawls
    "port",
]

#: Commands that never read a project: ``port`` runs in the Scrapy project it ports, whose
#: settings and ``COMMANDS_MODULE`` import Scrapy.
WITHOUT_PROJECT = frozenset({"port"})


def _commands(in_project: bool, names=COMMAND_MODULES):
    """The built-in command functions of ``names`` (modules of ``crawlfw/commands/``),
    those that need a project left out when ``in_project`` is false."""
    functions = []
    for name in names:
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


def _custom_commands(settings, in_project):
    try:
        return get_commands_dict(settings, in_project)
    except (ImportError, TypeError) as e:
        print(f"Cannot load the custom commands (COMMANDS_MODULE = "
              f"{settings['COMMANDS_MODULE']!r}, entry points "
              f"'crawlfw.commands'): {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)


def _name(func) -> str:
    return getattr(func, "argh_name", None) or func.__name__.rstrip("_")


def _print_commands(settings, in_project: bool, functions) -> None:
    """Print the command listing of Scrapy 1.2's ``scrapy`` with no arguments: a first
    line naming the active project (its ``BOT_NAME``) or saying ``no active project``,
    the usage, one line per available command, and a hint."""
    if in_project:
        print(f"crawlfw {crawlfw.__version__} - project: {settings['BOT_NAME']}\n")
    else:
        print(f"crawlfw {crawlfw.__version__} - no active project\n")
    print("Usage:\n  crawlfw <command> [options] [args]\n")
    print("Available commands:")
    for func in sorted(functions, key=_name):
        doc = (func.__doc__ or "").strip().splitlines()
        print(f"  {_name(func):<13} {doc[0] if doc else ''}".rstrip())
    if not in_project:
        print()
        print("  [ more ]      More commands available when run from project directory")
    print()
    print('Use "crawlfw <command> -h" to see more info about a command')


_OUTPUT_OPTIONS = frozenset({"-o", "-O", "--output", "--overwrite-output"})


def _join_output_values(argv: list) -> list:
    """``-o -:jl`` / ``-O -:jl`` (Scrapy 2: standard output, JSON Lines) as
    ``--output=-:jl``: argparse would take a value that starts with ``-`` for an
    option."""
    joined = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            joined += argv[i:]
            break
        if arg in _OUTPUT_OPTIONS and i + 1 < len(argv) and argv[i + 1].startswith("-:"):
            long = "--overwrite-output" if arg in ("-O", "--overwrite-output") else "--output"
            joined.append(f"{long}={argv[i + 1]}")
            i += 2
            continue
        joined.append(arg)
        i += 1
    return joined


def execute(argv=None, settings=None) -> None:
    """Run the ``crawlfw`` command line (Scrapy's ``scrapy.cmdline.execute``).

    Args:
        argv: the command line, program name first, as Scrapy's (``["crawlfw",
            "crawl", "quotes"]``; a project's ``execute(["scrapy", "checkall"])``
            ported); default ``sys.argv``. The program name is not read.
        settings: the :class:`~crawlfw.settings.Settings` to run the command with
            (changed by its options); default: the project's
            (:func:`~crawlfw.utils.project.get_project_settings`).

    Raises:
        SystemExit: always, as Scrapy's: the command's exit status, 0 when it ends
            normally, 2 on a usage error.
    """
    if argv is None:
        argv = sys.argv
    argv = [*argv][1:]
    token = _GIVEN_SETTINGS.set(settings)
    try:
        _execute(argv)
    finally:
        _GIVEN_SETTINGS.reset(token)
    sys.exit(0)


def _execute(argv: list) -> None:
    gc_was_enabled = gc.isenabled()
    gc.disable()  # no automatic collection before the freeze (see the module's start)
    try:
        parser, argv = _command_line(argv)
        # The objects made so far (modules, classes, settings: tens of thousands) live
        # as long as the process; moved out of the collector's generations (after a
        # collection, so no garbage is kept), they are not traversed again by every full
        # collection during the crawl.
        gc.collect()
        gc.freeze()
    finally:
        if gc_was_enabled:
            gc.enable()
    # A crawl keeps thousands of requests in flight between threads: with CPython's
    # default first threshold (700 allocations) most survive a young collection and are
    # traversed again by older ones (12 % of the CPU of a 20,000-page crawl; 6 % with
    # 7000, for ~15 MiB more peak memory). A threshold someone else set is kept.
    if gc.get_threshold()[0] == _DEFAULT_GC_THRESHOLD0:
        gc.set_threshold(_CRAWL_GC_THRESHOLD0, *gc.get_threshold()[1:])
    argv = _join_output_values(argv)
    try:
        parser.dispatch(argv=argv)
    except argh.CommandError as e:
        print(f"Usage error: {e}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)


def _command_line(argv):
    """The command line's parser with every command it offers, and the arguments to
    dispatch (``argv``: the arguments after the program name). Prints the listing and
    exits 0 for no command or ``-h``; exits 2 for a project-only command outside one."""
    argv = [*argv]
    if argv and argv[0] in WITHOUT_PROJECT:
        from crawlfw.settings import Settings

        in_project, settings, custom, hidden = False, Settings(), {}, set()
    else:
        in_project = inside_project()
        settings = _GIVEN_SETTINGS.get()
        if settings is None:
            settings = get_project_settings()
        custom, hidden = _custom_commands(settings, in_project)
    parser = argh.ArghParser(
        prog="crawlfw",
        description=f"crawlfw {crawlfw.__version__} - "
        + ("active project" if in_project else "no active project"),
    )
    # BY_NAME_IF_KWONLY: keyword-only parameters are options, positional ones with a
    # default are optional positional arguments (``startproject <name> [dir]``).
    listing = not argv or argv in (["-h"], ["--help"])
    if not listing and argv[0] in COMMAND_MODULES and argv[0] not in custom:
        # a built-in command is named: only its module is imported and only its parser
        # built (the others' imports, e.g. unittest for check, cost start-up time)
        names = [argv[0]]
    else:
        names = COMMAND_MODULES
    builtin = [f for f in _commands(in_project, names) if _name(f) not in custom]
    customs = [argh_function(name, cmd, settings) for name, cmd in sorted(custom.items())]
    if listing:
        _print_commands(settings, in_project, builtin + customs)
        sys.exit(0)
    # argh's default formatter appends "(default: ...)" to every option's help; the help
    # texts say their defaults themselves, as Scrapy's do
    formatter = {"formatter_class": argparse.RawDescriptionHelpFormatter}
    parser.add_commands(
        builtin,
        name_mapping_policy=argh.assembling.NameMappingPolicy.BY_NAME_IF_KWONLY,
        func_kwargs=formatter,
    )
    if custom:
        # no argh -h for them: "crawlfw <name> -h" prints the command's own help
        parser.add_commands(
            customs,
            name_mapping_policy=argh.assembling.NameMappingPolicy.BY_NAME_IF_KWONLY,
            func_kwargs={"add_help": False, **formatter},
        )
    if argv and argv[0] in custom:
        # argparse.REMAINDER takes options only after a "--"
        argv.insert(1, "--")
    elif argv and not in_project and (
            REQUIRES_PROJECT.get(argv[0])
            or (argv[0] in hidden and argv[0] not in REQUIRES_PROJECT)):
        print(f"Unknown command: {argv[0]}\n\n"
              f"The {argv[0]} command only works inside a project (a directory with a "
              "crawlfw.cfg, or CRAWLFW_SETTINGS_MODULE set).\n"
              'Use "crawlfw -h" to see available commands', file=sys.stderr)
        sys.exit(2)
    return parser, argv


if __name__ == "__main__":
    execute()
