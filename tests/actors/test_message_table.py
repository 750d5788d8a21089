"""ARCHITECTURE.md's message table is generated from the TypedDicts of
crawlfw/actors/messages/ (crawlfw.actors._doc), as the JSON Schemas are: one source."""

import pytest

from crawlfw.actors import _doc, messages
from crawlfw.actors._doc import BEGIN, END, render_table, replace_table, routes_of


def test_architecture_table_is_the_generated_one():
    # After editing a message's docstring run: python -m crawlfw.actors._doc --write
    text = _doc.architecture_path().read_text(encoding="utf-8")
    assert replace_table(text, render_table()) == text


def _row(table: str, message_type: str) -> str:
    messages_part = table.split("Replies to")[0]
    (row,) = [line for line in messages_part.splitlines()
              if line.startswith(f"| `{message_type}` |")]
    return row


def test_the_table_follows_a_change_of_sender(monkeypatch):
    before = render_table()
    assert "| `fetch` | Engine → Downloader" in _row(before, "fetch")
    monkeypatch.setattr(messages.Fetch, "__doc__",
                        "Scheduler -> Downloader: transfer ``request``.")
    after = render_table()
    assert _row(after, "fetch") == "| `fetch` | Scheduler → Downloader | transfer `request`. |"
    assert after != before


def test_every_message_and_reply_says_who_sends_it():
    for name, cls in messages.MESSAGE_TYPES.items():
        table_row = _row(render_table(), name)
        route = routes_of(cls)
        assert route.meaning and all(len(r) >= 2 for r in route.routes), name
        assert " → " in table_row
    for classes in messages.REPLY_TYPES.values():
        for cls in classes:
            assert routes_of(cls).routes


def test_routes_keep_parentheses_and_split_only_outside_them():
    class Example:
        """AutoThrottle (on the Engine's thread: a -> b) -> Downloader; Scheduler ->
        SpiderRunner -> each Exporter: the meaning: with a colon.

        Not part of it.
        """

    route = routes_of(Example)
    assert route.routes == (
        ("AutoThrottle (on the Engine's thread: a -> b)", "Downloader"),
        ("Scheduler", "SpiderRunner", "each Exporter"),
    )
    assert route.meaning == "the meaning: with a colon."


@pytest.mark.parametrize("doc", [
    "Tell the engine something.",
    "Engine: no receiver.",
    "Engine -> : no receiver.",
    "Engine -> Scheduler:",
    None,
])
def test_a_docstring_without_a_route_is_refused_naming_the_class(doc):
    class NoRoute:
        pass

    NoRoute.__doc__ = doc
    with pytest.raises(ValueError, match="NoRoute: the docstring's first paragraph"):
        routes_of(NoRoute)


def test_write_replaces_only_between_the_markers(tmp_path):
    path = tmp_path / "ARCHITECTURE.md"
    path.write_text(f"# Title\n\n{BEGIN}\nold table\n{END}\n\nAfter.\n", encoding="utf-8")
    assert _doc.write_architecture(path) is True
    text = path.read_text(encoding="utf-8")
    assert text == f"# Title\n\n{BEGIN}\n{render_table()}{END}\n\nAfter.\n"
    assert _doc.write_architecture(path) is False


@pytest.mark.parametrize("text", ["no markers", f"{END}\n{BEGIN}\n", f"{BEGIN}{BEGIN}{END}"])
def test_missing_or_misplaced_markers_are_refused(text):
    with pytest.raises(ValueError, match="messages:begin"):
        replace_table(text, "table\n")


def test_check_fails_on_a_stale_table(tmp_path, monkeypatch, capsys):
    path = tmp_path / "ARCHITECTURE.md"
    path.write_text(f"{BEGIN}\nstale\n{END}\n", encoding="utf-8")
    monkeypatch.setattr(_doc, "architecture_path", lambda: path)
    assert _doc.main(["--check"]) == 1
    assert "out of date" in capsys.readouterr().err
    assert _doc.main(["--write"]) == 0
    assert _doc.main(["--check"]) == 0
    assert _doc.main(["--bogus"]) == 2
