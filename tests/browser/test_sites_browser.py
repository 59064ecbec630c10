"""A published page in a real browser (Debian's chromium, headless), served by `maxy serve`'s
app under the sites policy: its stylesheet, images, background and web font all load, while
the page runs no script, has an origin of its own (not the one `/console` and `/mcp` share),
posts no form and shows in no frame."""

from __future__ import annotations

import shutil
import struct
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from maxy.accounts import accounts_dir, create_account
from maxy.config import load_settings
from maxy.plugins.discovery import discover_plugins
from maxy.serving.app import create_app
from maxy.sites.hosts import add_host
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.browser.conftest import console_errors
from tests.local_http import serve_app

FONT = Path("/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf")  # installer/browser.sh installs it
WAIT_S = 30
PAGE = """<!doctype html>
<html><head><title>published</title><link rel="stylesheet" href="style.css"></head>
<body>
<p id="text">Opening hours</p>
<img id="logo" src="dot.png" alt="logo">
<div id="banner"></div>
<script>document.title = "script ran"</script>
<form id="form" action="/sites/thanks.html" method="get"><button id="send">Send</button></form>
</body></html>
"""
STYLE = """@font-face { font-family: Published; src: url(brand.ttf); }
body { color: rgb(1, 2, 3); font-family: Published, monospace; }
#banner { width: 4px; height: 4px; background-image: url(dot.png); }
"""
FRAMING = '<!doctype html><title>frames</title><iframe id="inner" src="index.html"></iframe>'


def _png() -> bytes:
    """A 1x1 green PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00\x00\xff\x00"))
        + chunk(b"IEND", b"")
    )


@dataclass
class Published:
    base: str  # http://localhost:<port>/sites


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory, neo4j_ready) -> Iterator[Published]:
    if not FONT.is_file():
        pytest.fail(f"error: {FONT} is missing, run `sudo bash installer/browser.sh` (it installs fonts-liberation)")
    data_root = tmp_path_factory.mktemp("sites-browser") / "data"
    data_root.mkdir()
    account = create_account(data_root, "published")
    sites = accounts_dir(data_root) / account.account_id / "sites"
    sites.mkdir()
    (sites / "index.html").write_text(PAGE)
    (sites / "style.css").write_text(STYLE)
    (sites / "dot.png").write_bytes(_png())
    (sites / "thanks.html").write_text("<!doctype html><title>thanks</title>")
    (sites / "framing.html").write_text(FRAMING)
    shutil.copy(FONT, sites / "brand.ttf")
    add_host(data_root, "localhost", account.account_id)
    app = create_app(discover_plugins(["admin"]), load_settings(DATA_ROOT=data_root))
    with serve_app(app) as base:
        yield Published(f"http://localhost:{base.rsplit(':', 1)[1]}/sites")


def _state(driver: Any) -> dict[str, Any]:
    """What the page shows, read by WebDriver (which runs beside the page, not as it)."""
    return driver.execute_script(
        """const logo = document.getElementById('logo');
        return {
          title: document.title,
          origin: window.origin,
          color: getComputedStyle(document.getElementById('text')).color,
          logoWidth: logo.complete ? logo.naturalWidth : -1,
          banner: getComputedStyle(document.getElementById('banner')).backgroundImage,
          fonts: [...document.fonts].map(f => f.family + ':' + f.status),
        };"""
    )


def test_a_published_page_keeps_its_styles_images_and_fonts_but_runs_nothing(browser, published: Published) -> None:
    console_errors(browser)  # start with an empty log
    browser.get(f"{published.base}/")
    WebDriverWait(browser, WAIT_S).until(lambda d: all(":loading" not in f for f in _state(d)["fonts"]))
    state = _state(browser)
    assert state["color"] == "rgb(1, 2, 3)"
    assert state["logoWidth"] == 1 and state["banner"] == f'url("{published.base}/dot.png")'
    assert state["fonts"] == ["Published:loaded"]  # fetched with CORS from the page's own origin
    assert state["title"] == "published"  # the inline script never ran
    assert state["origin"] == "null"  # an origin of its own: not the host's, which /console and /mcp use
    errors = console_errors(browser)
    assert not [e for e in errors if "CORS" in e or ("Failed to load" in e and "/sites/" in e)], errors
    assert any("sandboxed" in e and "allow-scripts" in e for e in errors), errors

    browser.find_element(By.ID, "send").click()  # a form of a published page goes nowhere
    time.sleep(1)
    assert browser.current_url == f"{published.base}/" and _state(browser)["title"] == "published"


def test_a_published_page_shows_in_no_frame(browser, published: Published) -> None:
    console_errors(browser)
    browser.get(f"{published.base}/framing.html")
    WebDriverWait(browser, WAIT_S).until(lambda d: any("frame-ancestors" in e for e in console_errors(d)))
