"""A headless Chromium driven through selenium and chromedriver, for the dashboard's
browser tests (Debian's ``chromium`` and ``chromium-driver`` packages; ``.ci/run``
installs them).

Without Chromium, chromedriver or selenium a test using :func:`require_browser` is
skipped with the reason, except under CI (``CI=true``), where it fails saying what to
install: the browser test must run there.

The browser only reaches 127.0.0.1: every host name resolves to nothing
(``--host-resolver-rules``) and Chromium's own background traffic (updates, safe
browsing, metrics) is switched off.
"""

import os
import shutil
import tempfile
from pathlib import Path

import pytest

#: Browser and driver executables looked for on PATH, in this order.
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
DRIVERS = ("chromedriver",)

#: The window's size in CSS pixels (the screenshots' size).
WINDOW = (1280, 800)

_FLAGS = (
    "--headless=new",
    "--no-sandbox",  # root in a container has no user namespace for the sandbox
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--metrics-recording-only",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
)


def _which(names) -> str | None:
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    return None


def missing() -> str | None:
    """What the browser tests lack ("chromium is not installed ..."), or None."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    if _which(BROWSERS) is None:
        return "Chromium is not installed (apt-get install chromium chromium-driver)"
    if _which(DRIVERS) is None:
        return "chromedriver is not installed (apt-get install chromium-driver)"
    return None


def require_browser() -> None:
    """Skip the calling test when the browser is missing; fail instead under CI."""
    reason = missing()
    if reason is None:
        return
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"CI=true but the dashboard browser test cannot run: {reason}",
                    pytrace=False)
    pytest.skip(reason)


class Browser:
    """One headless Chromium (one chromedriver process and its browser).

    Args:
        window: the window's (width, height) in CSS pixels.

    Attributes:
        driver: the selenium ``WebDriver``.
    """

    def __init__(self, window: tuple[int, int] = WINDOW):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self._profile = tempfile.mkdtemp(prefix="cfw-chromium-")
        options = webdriver.ChromeOptions()
        options.binary_location = _which(BROWSERS)
        for flag in _FLAGS:
            options.add_argument(flag)
        options.add_argument(f"--window-size={window[0]},{window[1]}")
        options.add_argument(f"--user-data-dir={self._profile}")
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.window = window
        self.driver = webdriver.Chrome(options=options,
                                       service=Service(_which(DRIVERS), log_output=os.devnull))
        self.driver.set_page_load_timeout(30)
        self._viewport(*window)

    def _viewport(self, width: int, height: int) -> None:
        # --window-size counts the window's frame: the page's own area is set exactly.
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": int(width), "height": int(height), "deviceScaleFactor": 1, "mobile": False})

    def open(self, url: str) -> None:
        """Load ``url`` (waits for the load event)."""
        self.driver.get(url)

    def console(self) -> list[dict]:
        """The browser's log entries since the last call (console messages, failed loads,
        CSP violations): ``[{"level", "message", "source", "timestamp"}]``."""
        return self.driver.get_log("browser")

    def errors(self) -> list[str]:
        """The messages of the SEVERE entries since the last :meth:`console` call."""
        return [e["message"] for e in self.console() if e["level"] == "SEVERE"]

    def js(self, script: str, *args):
        """The value of ``script`` (a function body: ``return ...``) run in the page."""
        return self.driver.execute_script(script, *args)

    def text(self, element_id: str) -> str:
        """The text content of the element with that id."""
        return self.js("const e = document.getElementById(arguments[0]);"
                       " return e ? e.textContent : null;", element_id)

    def click(self, element_id: str) -> None:
        from selenium.webdriver.common.by import By

        self.driver.find_element(By.ID, element_id).click()

    def screenshot(self, path, full_page: bool = False) -> Path:
        """Save a PNG of the window (``full_page``: of the whole page, the window's width)
        to ``path`` (directories made); return the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if full_page:
            height = self.js("return document.documentElement.scrollHeight")
            self._viewport(self.window[0], max(self.window[1], int(height)))
        try:
            self.driver.save_screenshot(str(path))
        finally:
            if full_page:
                self._viewport(*self.window)
        return path

    def quit(self) -> None:
        """End the browser and its driver; remove the profile."""
        try:
            self.driver.quit()
        finally:
            shutil.rmtree(self._profile, ignore_errors=True)
