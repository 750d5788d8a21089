"""SettingsAttribute.__deepcopy__ (#20, start-up): a settings copy is what the generic
``copy.deepcopy`` makes (values equal, priorities kept, mutable values copied, shared
ones shared in the copy too), on a table of values."""

import copy

import pytest

from crawlfw.settings import BaseSettings, Settings, SettingsAttribute

_SHARED = ["shared", {"x": 1}]

_VALUES = [
    None, True, 0, 3.5, 2j, "text", b"bytes", (1, "a"), (1, [2]), [1, [2, 3]], {"a": {"b": [1]}},
    {1, 2}, frozenset({3}), _SHARED, BaseSettings({"k": [1]}, priority=20), Settings, len,
]


def _generic_deepcopy(attribute: SettingsAttribute, memo: dict) -> SettingsAttribute:
    # what copy.deepcopy did before the shortcut: __reduce_ex__ state, deep-copied
    new = object.__new__(SettingsAttribute)
    new.value = copy.deepcopy(attribute.value, memo)
    new.priority = attribute.priority
    return new


@pytest.mark.parametrize("value", _VALUES, ids=repr)
def test_a_copied_attribute_is_the_generic_deepcopy(value):
    attribute = SettingsAttribute(value, 10)
    fast = copy.deepcopy(attribute)
    generic = _generic_deepcopy(attribute, {})
    assert type(fast) is SettingsAttribute
    assert fast.priority == generic.priority
    if isinstance(value, BaseSettings):
        assert fast.value.copy_to_dict() == generic.value.copy_to_dict()
        assert fast.value is not value
    else:
        assert fast.value == generic.value
        # immutable atoms are shared by both; anything deepcopy copies is copied
        assert (fast.value is value) == (generic.value is value)


def test_settings_copy_keeps_shared_values_shared_and_apart_from_the_original():
    settings = Settings({"A": _SHARED, "B": _SHARED, "C": "c"}, priority="cmdline")
    settings.set("D", [1, 2], priority="spider")
    copied = settings.copy()
    assert copied.getpriority("D") == settings.getpriority("D")
    assert copied["A"] is copied["B"]
    assert copied["A"] is not _SHARED and copied["A"] == _SHARED
    copied["D"].append(3)
    assert settings["D"] == [1, 2]
    assert copied.copy_to_dict() == {**settings.copy_to_dict(), "D": [1, 2, 3]}
