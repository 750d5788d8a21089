"""The reference environment benchmarks compare crawlfw against: Scrapy (and parsel,
which it brings) installed in a separate virtualenv, never imported by crawlfw.

``reference_python()`` creates the virtualenv once at ``benchmarks/.venv-scrapy``
(gitignored), runs ``pip install scrapy`` in it, and returns the path of its python;
later calls reuse it. Benchmarks run their reference half as a subprocess of that
python with an inline script.

Set ``CRAWLFW_REFENV_SKIP=1`` to skip the reference runs; ``CRAWLFW_REFENV_SPEC`` to
install another requirement than ``scrapy`` (e.g. ``scrapy==2.11.2``).
"""

import os
import subprocess
import sys
import venv
from pathlib import Path

__all__ = ["reference_python", "VENV_DIR"]

#: Where the reference virtualenv lives.
VENV_DIR = Path(__file__).resolve().parent / ".venv-scrapy"
_MARKER = ".crawlfw-refenv-ok"
_CHECK = "import scrapy, parsel; print(scrapy.__version__, parsel.__version__)"


def _python_path(venv_dir: Path) -> Path:
    if os.name == "nt":
        return venv_dir / "Scripts" / "python.exe"
    return venv_dir / "bin" / "python"


def _works(python: Path) -> bool:
    try:
        subprocess.run([str(python), "-c", _CHECK], check=True, capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return False
    return True


def reference_python() -> str | None:
    """Return the python of a virtualenv with Scrapy and parsel installed.

    Creates ``benchmarks/.venv-scrapy`` and installs ``scrapy`` into it on first use
    (this needs the package index; it takes a minute or two), then reuses it.

    Returns:
        The absolute path of the virtualenv's python (``str``), or None when it cannot
        be made (the reason is printed to stderr) or ``CRAWLFW_REFENV_SKIP`` is set.
    """
    if os.environ.get("CRAWLFW_REFENV_SKIP"):
        print("reference environment skipped (CRAWLFW_REFENV_SKIP is set)", file=sys.stderr)
        return None
    python = _python_path(VENV_DIR)
    if (VENV_DIR / _MARKER).exists() and _works(python):
        return str(python)
    spec = os.environ.get("CRAWLFW_REFENV_SPEC", "scrapy")
    print(f"creating the reference environment {VENV_DIR} (pip install {spec}) ...", file=sys.stderr)
    try:
        if not python.exists():
            venv.EnvBuilder(with_pip=True, clear=True).create(VENV_DIR)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", spec],
            check=True,
            timeout=1800,
            capture_output=True,
            text=True,
        )
    except subprocess.CalledProcessError as exc:
        tail = "\n".join((exc.stdout + exc.stderr).strip().splitlines()[-5:])
        print(f"reference environment unavailable: pip install {spec} failed:\n{tail}", file=sys.stderr)
        return None
    except (OSError, subprocess.SubprocessError) as exc:
        print(f"reference environment unavailable: could not install {spec}: {exc}", file=sys.stderr)
        return None
    if not _works(python):
        print(f"reference environment unavailable: {python} cannot import scrapy and parsel", file=sys.stderr)
        return None
    (VENV_DIR / _MARKER).write_text(spec + "\n")
    return str(python)


if __name__ == "__main__":
    print(reference_python())
