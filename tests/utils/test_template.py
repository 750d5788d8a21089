"""crawlfw.utils.template: rendering template files and CamelCase names."""

import pytest

from crawlfw.utils.template import render_templatefile, string_camelcase


@pytest.mark.parametrize("text, kwargs, rendered", [
    ("name = '$name'\n", {"name": "quotes"}, "name = 'quotes'\n"),
    ("${project_name}.settings", {"project_name": "shop"}, "shop.settings"),
    ("class ${ProjectName}Item:", {"ProjectName": "MyShop"}, "class MyShopItem:"),
    ("cost: $$5 for $who", {"who": "you"}, "cost: $5 for you"),
    ("no placeholders", {}, "no placeholders"),
    ("unused kwargs are fine", {"x": "y"}, "unused kwargs are fine"),
    ("ünïcode $v", {"v": "é"}, "ünïcode é"),
])
def test_render_tmpl_file(tmp_path, text, kwargs, rendered):
    path = tmp_path / "file.py.tmpl"
    path.write_text(text, encoding="utf-8")
    result = render_templatefile(str(path), **kwargs)
    assert result == str(tmp_path / "file.py")
    assert not path.exists()
    assert (tmp_path / "file.py").read_text(encoding="utf-8") == rendered


def test_render_other_file_in_place(tmp_path):
    path = tmp_path / "crawlfw.cfg"
    path.write_text("default = ${project_name}.settings\n")
    assert render_templatefile(str(path), project_name="p") == str(path)
    assert path.read_text() == "default = p.settings\n"


def test_missing_placeholder(tmp_path):
    path = tmp_path / "x.tmpl"
    path.write_text("$missing")
    with pytest.raises(KeyError, match="missing"):
        render_templatefile(str(path))
    assert path.exists()


def test_lone_dollar(tmp_path):
    path = tmp_path / "x.tmpl"
    path.write_text("price $ 5")
    with pytest.raises(ValueError):
        render_templatefile(str(path))


@pytest.mark.parametrize("word, camel", [
    ("lost-pound", "LostPound"),
    ("missing_images", "MissingImages"),
    ("testproj", "Testproj"),
    ("my.shop", "MyShop"),
    ("a b", "AB"),
    ("x2y", "X2Y"),
    ("ALLCAPS", "Allcaps"),
    ("", ""),
])
def test_string_camelcase(word, camel):
    assert string_camelcase(word) == camel


@pytest.mark.parametrize("text, cleaned", [
    ("lost-pound", "lostpound"),
    ("a_b c.d", "abcd"),
    ("Ünïcode9", "ncode9"),
    ("", ""),
])
def test_camelcase_invalid_chars(text, cleaned):
    from crawlfw.utils.template import CAMELCASE_INVALID_CHARS

    assert CAMELCASE_INVALID_CHARS.sub("", text) == cleaned
