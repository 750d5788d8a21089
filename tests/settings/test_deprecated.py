"""check_deprecated_settings warns once, listing each deprecated setting in use."""

import re
import warnings

import pytest

from crawlfw.exceptions import CrawlfwDeprecationWarning
from crawlfw.settings import Settings
from crawlfw.settings.deprecated import DEPRECATED_SETTINGS, check_deprecated_settings


def test_no_warning_for_default_settings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_deprecated_settings(Settings())


def test_lists_every_deprecated_setting_in_use():
    settings = Settings({"TRACK_REFS": True, "SQLITE_DB": "x.db", "BOT_NAME": "fine"})
    with pytest.warns(CrawlfwDeprecationWarning) as record:
        check_deprecated_settings(settings)
    assert len(record) == 1
    message = str(record[0].message)
    assert "TRACK_REFS: no longer needed" in message
    assert "SQLITE_DB: no longer supported" in message
    assert "BOT_NAME" not in message


@pytest.mark.parametrize("name, advice", DEPRECATED_SETTINGS)
def test_each_setting(name, advice):
    with pytest.warns(CrawlfwDeprecationWarning, match=re.escape(f"{name}: {advice}")):
        check_deprecated_settings(Settings({name: 1}))
