"""A misspelled setting, given with ``-s`` or in the project's settings, gets one WARNING
naming the likely setting; a project's own settings get none (issue 29)."""

import pytest

from tests.commands.conftest import write

pytestmark = pytest.mark.slow

IDLE = """
    import crawlfw


    class IdleSpider(crawlfw.Spider):
        name = "idle"

        def start_requests(self):
            return []
"""


def test_one_warning_per_misspelled_name(crawlfw, project):
    write(project / "testproj" / "spiders" / "idle.py", IDLE)
    settings = project / "testproj" / "settings.py"
    settings.write_text(settings.read_text()
                        + "\nDOWNLOAD_DEALY = 1\nMY_SETTING = 1\nMONGO_URI = 'x'\n")
    result = crawlfw("crawl", "idle", "-s", "CONCURENT_REQUESTS=3", "-s", "OWN_THING=1",
                     "-L", "WARNING", cwd=project)
    assert result.returncode == 0, result.stderr
    warnings = [line.split(" ", 2)[2] for line in result.stderr.splitlines()
                if "WARNING" in line]
    assert warnings == [
        "[crawlfw.settings] WARNING: Setting 'CONCURENT_REQUESTS' (set with -s on the "
        "command line) is not a known setting: did you mean 'CONCURRENT_REQUESTS'? "
        "(it is ignored)",
        "[crawlfw.settings] WARNING: Setting 'DOWNLOAD_DEALY' (set in the project's "
        "settings) is not a known setting: did you mean 'DOWNLOAD_DELAY'? (it is ignored)",
    ]
