"""The vendored graph library draws in a real chromium under the console's strict
Content-Security-Policy, with no inline script or style and no violation in the console."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from maxy.webconsole import vendor

from tests.browser.conftest import console_errors
from tests.local_http import LocalServer

CSP = "default-src 'none'; script-src 'self'; style-src 'self'"

# cytoscape adds <style id="__________cytoscape_stylesheet"> to <head> unless an element with that
# id is already there; under style-src 'self' that inline style is a violation, so the page links
# the same rule from a stylesheet of its own origin under that id.
PAGE = b"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>graph</title>
<link rel="stylesheet" id="__________cytoscape_stylesheet" href="/graph-test.css">
<script src="/vendor/cytoscape.min.js" defer></script>
<script src="/graph-test.js" defer></script>
</head>
<body>
<div id="graph"></div>
</body>
</html>
"""
STYLE = b"""#graph { width: 800px; height: 500px; }
.__________cytoscape_container { position: relative; }
"""
SCRIPT = b"""window.cy = cytoscape({
  container: document.getElementById("graph"),
  elements: [
    { data: { id: "a", label: "Ada" } },
    { data: { id: "b", label: "Babbage" } },
    { data: { id: "c", label: "Engine" } },
    { data: { id: "ab", source: "a", target: "b" } },
    { data: { id: "bc", source: "b", target: "c" } }
  ],
  style: [
    { selector: "node", style: { label: "data(label)", "background-color": "#3b6ea5" } },
    { selector: "edge", style: { width: 2, "line-color": "#999" } }
  ],
  layout: { name: "cose", animate: false }
});
document.body.dataset.graph = "drawn";
"""


class GraphPageServer(LocalServer):
    """The test page, its script and stylesheet, and the package's static files, all under ``CSP``."""

    def __init__(self, static: Path) -> None:
        self.static = static
        self._stop = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> GraphPageServer:
        static = self.static.resolve()
        pages = {
            "/": (PAGE, "text/html; charset=utf-8"),
            "/graph-test.css": (STYLE, "text/css; charset=utf-8"),
            "/graph-test.js": (SCRIPT, "text/javascript; charset=utf-8"),
        }

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                return

            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                if path in pages:
                    body, kind = pages[path]
                    self._send(200, body, kind)
                    return
                target = (static / path.lstrip("/")).resolve()
                if static in target.parents and target.is_file() and target.suffix == ".js":
                    self._send(200, target.read_bytes(), "text/javascript; charset=utf-8")
                else:
                    self._send(404, b"not found", "text/plain; charset=utf-8")

            def _send(self, status: int, body: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Content-Security-Policy", CSP)
                self.send_header("X-Content-Type-Options", "nosniff")
                self.end_headers()
                self.wfile.write(body)

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self


@pytest.fixture(scope="module")
def graph_page() -> Any:
    vendor.fetch_graph_library()  # a no-op after setup.sh; fails with its one-line error without npm
    assert vendor.graph_library_ready()
    with GraphPageServer(vendor.static_dir()) as server:
        yield server


def test_cytoscape_draws_under_the_console_csp(browser: Any, graph_page: GraphPageServer) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    console_errors(browser)  # drain what earlier tests left
    browser.get(graph_page.url + "/")
    WebDriverWait(browser, 15).until(lambda d: d.execute_script("return document.body.dataset.graph") == "drawn")
    assert browser.find_elements(By.CSS_SELECTOR, "#graph canvas"), "cytoscape drew no canvas"
    assert browser.execute_script("return cy.nodes().length") == 3
    assert browser.execute_script("return cy.edges().length") == 2
    # the page's own stylesheet stands in for the one cytoscape would inject inline
    assert browser.execute_script("return document.querySelectorAll('style').length") == 0
    position = browser.execute_script(
        "return getComputedStyle(document.querySelector('.__________cytoscape_container')).position"
    )
    assert position == "relative"
    errors = console_errors(browser)
    assert not [e for e in errors if "Content Security Policy" in e], errors
    assert errors == []


def test_without_the_stylesheet_link_cytoscape_violates_the_csp(browser: Any, graph_page: GraphPageServer) -> None:
    """Why the console's page needs the link: without it cytoscape's inline <style> is refused."""
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(graph_page.url + "/")
    WebDriverWait(browser, 15).until(lambda d: d.execute_script("return document.body.dataset.graph") == "drawn")
    console_errors(browser)
    browser.execute_script(
        "document.getElementById('__________cytoscape_stylesheet').remove();"
        "const box = document.createElement('div'); box.style.width = '200px'; box.style.height = '200px';"
        "document.body.appendChild(box); window.cy2 = cytoscape({container: box, elements: [{data: {id: 'x'}}]});"
    )
    WebDriverWait(browser, 5).until(lambda d: d.execute_script("return document.querySelectorAll('style').length") > 0)
    errors = console_errors(browser)
    assert any("Content Security Policy" in e and "style" in e for e in errors), errors


def test_without_javascript_nothing_is_drawn(browser_nojs: Any, graph_page: GraphPageServer) -> None:
    """``browser_nojs`` really runs no page script: the page stays as the server sent it."""
    from selenium.webdriver.common.by import By

    browser_nojs.get(graph_page.url + "/")
    assert browser_nojs.find_elements(By.ID, "graph")
    assert browser_nojs.find_elements(By.CSS_SELECTOR, "canvas") == []
    assert browser_nojs.find_element(By.TAG_NAME, "body").get_attribute("data-graph") is None
