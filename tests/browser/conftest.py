"""The browser the console's tests drive: Debian's chromium through its own chromedriver, headless,
one per test session (``browser``) plus one with JavaScript turned off (``browser_nojs``).

Selenium Manager is never asked for anything (the driver's path is given and ``SE_OFFLINE`` is
set), so the tests reach no host but the local servers they start. ``installer/browser.sh``
installs the two programs."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
REPO = Path(__file__).resolve().parents[2]
SCREENSHOT_DIR = REPO / "docs" / "console"
SCREENSHOTS_ENV = "MAXY_CONSOLE_SCREENSHOTS"
WINDOW = (1280, 900)
PAGE_LOAD_TIMEOUT_S = 30


def _require_browser() -> None:
    missing = [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not os.access(path, os.X_OK)]
    if missing:
        pytest.fail(
            f"error: the browser tests cannot start chromium, {' and '.join(missing)} missing, "
            "run `sudo bash installer/browser.sh` (it installs Debian's chromium and chromium-driver)",
            pytrace=False,
        )


def _options(profile: Path, *, javascript: bool) -> Any:
    from selenium.webdriver import ChromeOptions

    options = ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
        f"--window-size={WINDOW[0]},{WINDOW[1]}",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    if not javascript:
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    return options


def _start(*, javascript: bool) -> Iterator[Any]:
    _require_browser()
    os.environ["SE_OFFLINE"] = "true"  # never let Selenium Manager fetch a browser or a driver
    from selenium import webdriver
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.chrome.service import Service

    profile = Path(tempfile.mkdtemp(prefix="maxy-chromium-"))
    try:
        try:
            driver = webdriver.Chrome(
                service=Service(executable_path=str(CHROMEDRIVER)),
                options=_options(profile, javascript=javascript),
            )
        except WebDriverException as exc:
            reason = " ".join(str(exc.msg or exc).split())[:300]
            pytest.fail(
                f"error: chromium did not start under {CHROMEDRIVER} ({reason}), "
                "check that `chromium --version` and `chromedriver --version` print the same version "
                "(reinstall both with `apt-get install chromium chromium-driver`)",
                pytrace=False,
            )
        driver.set_page_load_timeout(PAGE_LOAD_TIMEOUT_S)
        try:
            yield driver
        finally:
            driver.quit()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """A headless chromium WebDriver with JavaScript on; its console is read by ``console_errors``."""
    yield from _start(javascript=True)


@pytest.fixture(scope="session")
def browser_nojs() -> Iterator[Any]:
    """A headless chromium WebDriver with JavaScript turned off (what a page shows without scripts)."""
    yield from _start(javascript=False)


def console_errors(driver: Any) -> list[str]:
    """The SEVERE entries of the browser's console since the last call (each call drains the log):
    script errors, failed loads, and Content-Security-Policy violations."""
    return [str(entry.get("message", "")) for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]


def save_screenshot(driver: Any, name: str) -> Path | None:
    """Write ``docs/console/<name>.png`` when ``MAXY_CONSOLE_SCREENSHOTS=1``; otherwise do nothing."""
    if os.environ.get(SCREENSHOTS_ENV) != "1":
        return None
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOT_DIR / f"{name}.png"
    if not driver.save_screenshot(str(path)):
        raise AssertionError(
            f"error: the screenshot {path} was not written, chromium returned no image, rerun the test"
        )
    return path
