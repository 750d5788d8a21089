"""crawlfw.utils.display: pformat/pprint, highlighted only on a terminal."""

import io
import pprint as std_pprint

import pytest

from crawlfw.utils import display

VALUE = {"b": [1, 2, 3], "a": "text" * 30}


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_plain_when_not_a_terminal(monkeypatch):
    monkeypatch.setattr("sys.stdout", io.StringIO())
    assert display.pformat(VALUE) == std_pprint.pformat(VALUE)


def test_colours_on_a_terminal(monkeypatch):
    pytest.importorskip("pygments")
    monkeypatch.setattr("sys.stdout", _Terminal())
    coloured = display.pformat(VALUE)
    assert "\x1b[" in coloured
    assert display.pformat(VALUE, colorize=False) == std_pprint.pformat(VALUE)


def test_pformat_arguments(monkeypatch):
    monkeypatch.setattr("sys.stdout", io.StringIO())
    assert display.pformat(VALUE, width=20) == std_pprint.pformat(VALUE, width=20)


def test_pprint(capsys):
    display.pprint([{"a": 1}])
    assert capsys.readouterr().out == "[{'a': 1}]\n"
