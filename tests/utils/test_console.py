"""crawlfw.utils.console: console choice and the standard console fallback."""

import io
import threading

from crawlfw.utils import console


def test_python_without_a_terminal(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO())
    assert console.get_shell_embed_func(["ptpython", "python"]) is \
        console._embed_standard_shell
    assert console.get_shell_embed_func(["ptpython"]) is None


def test_first_available_console_on_a_terminal(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr("sys.stdin", Tty())
    assert console.get_shell_embed_func(["nosuch", "ptpython", "python"]) is \
        console._embed_ptpython_shell
    assert console.get_shell_embed_func([" Python "]) is console._embed_standard_shell
    known = {"mine": ("no_such_module_for_a_console", print), "python": (None, len)}
    assert console.get_shell_embed_func(["mine", "python"], known_shells=known) is len
    # off the main thread, only the standard console
    found = []
    thread = threading.Thread(
        target=lambda: found.append(console.get_shell_embed_func(["ptpython", "python"])))
    thread.start()
    thread.join(10)
    assert found == [console._embed_standard_shell]


def test_start_python_console_runs_the_input(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("x = y * 2\nprint('x is', x)\nexit()\n"))
    namespace = {"y": 21}
    console.start_python_console(namespace, banner="BANNER", shells=["ptpython"])
    out, err = capsys.readouterr()
    assert namespace["x"] == 42
    assert "x is 42" in out
    assert "BANNER" in err
