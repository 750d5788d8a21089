"""The wheel carries what the runtime reads from disk (conf/ schemas, templates)."""

import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_wheel_contains_message_schemas_and_templates(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path), str(REPO)],
        check=True, timeout=300, capture_output=True,
    )
    (wheel,) = tmp_path.glob("crawlfw-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "crawlfw/conf/schemas/messages.json" in names
    assert "crawlfw/actors/supervisor.py" in names
    templates = {
        str(p.relative_to(REPO)) for p in (REPO / "crawlfw" / "templates").rglob("*") if p.is_file()
    }
    assert templates <= names
