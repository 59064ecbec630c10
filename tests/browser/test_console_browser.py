"""The console in a real browser (Debian's chromium, headless): an operator logs in with the link
`maxy console` prints, finds a node by search, walks its neighbourhood picture and its
provenance; the picture degrades to a table without JavaScript; names that look like markup
stay text; a form posted from another origin changes nothing; a pinned key sees no admin node
on any page. `maxy serve`'s app on a free port, seeded by the real MCP tools, the real Neo4j."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from tests.browser.conftest import console_errors, save_screenshot
from tests.console_site import ADMIN_MARKER, PUBLIC_NAME, SCRIPT_NAME, SESSION, Site, served_console
from tests.local_http import serve_app

WAIT_S = 60


@pytest.fixture(scope="module")
def site(db, tmp_path_factory) -> Iterator[Site]:
    yield from served_console(db, tmp_path_factory)


def _open_link(driver: Any, link: str) -> None:
    """Open a login link and press Log in, as a person does."""
    driver.get(link)
    driver.find_element(By.CSS_SELECTOR, "form.login button").click()


def _login(driver: Any, site: Site, key: Any = None) -> None:
    _open_link(driver, site.login_url(key or site.admin))
    WebDriverWait(driver, WAIT_S).until(ec.url_contains("/console/search"))
    console_errors(driver)  # start each page with an empty log


def _heading(driver: Any) -> str:
    """The page's heading, read in one script call; empty while a page is being replaced (the old
    page's elements then belong to no document, and chromedriver says so in several ways)."""
    try:
        text = driver.execute_script("const h = document.querySelector('h1'); return h ? h.textContent : '';")
    except WebDriverException:
        return ""
    return text if isinstance(text, str) else ""


def _heading_says(driver: Any, words: str) -> None:
    """Wait for the page after a post to carry its heading."""
    WebDriverWait(driver, WAIT_S).until(lambda d: words in _heading(d))


def _graph_drawn(driver: Any) -> int:
    box = WebDriverWait(driver, WAIT_S).until(
        lambda d: (lambda b: b if b.get_attribute("data-count") else None)(d.find_element(By.ID, "graph"))
    )
    return int(box.get_attribute("data-count"))


def test_an_operator_finds_a_node_by_search_and_walks_its_neighbourhood_and_provenance(browser, site: Site) -> None:
    _login(browser, site)
    box = browser.find_element(By.NAME, "q")
    box.send_keys("Who works at Globex?")
    box.submit()
    link = WebDriverWait(browser, WAIT_S).until(
        ec.element_to_be_clickable((By.CSS_SELECTOR, f'li.hit a[href="/console/node/{site.ids["ada"]}"]'))
    )
    save_screenshot(browser, "search")
    link.click()
    WebDriverWait(browser, WAIT_S).until(ec.url_contains(site.ids["ada"]))
    assert _graph_drawn(browser) >= 2  # Ada and Globex at least
    canvas = browser.find_elements(By.CSS_SELECTOR, "#graph canvas")
    assert canvas and canvas[0].size["width"] > 100
    assert "Research Globex" in browser.find_element(By.TAG_NAME, "main").text  # provenance: the Task
    save_screenshot(browser, "node")
    browser.execute_script("document.getElementById('graph').scrollIntoView()")
    save_screenshot(browser, "graph")
    assert console_errors(browser) == []

    # click to walk: a tap on Globex in the picture opens Globex's page
    browser.execute_script("window.maxyGraph.getElementById(arguments[0]).emit('tap')", site.ids["globex"])
    WebDriverWait(browser, WAIT_S).until(ec.url_contains(site.ids["globex"]))
    one_hop = _graph_drawn(browser)
    browser.find_element(By.CSS_SELECTOR, 'select[name="hops"] option[value="3"]').click()
    browser.find_element(By.CSS_SELECTOR, "form.hops button").click()
    WebDriverWait(browser, WAIT_S).until(ec.url_contains("hops=3"))
    assert _graph_drawn(browser) > one_hop  # three hops reach the Task and the conversation behind it

    # provenance: from Ada's page to the Task that produced her
    browser.get(f"{site.base}/console/node/{site.ids['ada']}")
    browser.find_element(By.CSS_SELECTOR, f'.provenance a[href="/console/node/{site.ids["task"]}"]').click()
    WebDriverWait(browser, WAIT_S).until(ec.url_contains(site.ids["task"]))
    assert "company-research" in browser.find_element(By.TAG_NAME, "main").text
    assert console_errors(browser) == []


def test_a_login_link_opens_once(browser, site: Site) -> None:
    link = site.login_url(site.admin)
    _open_link(browser, link)
    WebDriverWait(browser, WAIT_S).until(ec.url_contains("/console/search"))
    browser.delete_all_cookies()
    _open_link(browser, link)
    _heading_says(browser, "Not signed in")  # the link's own page is also under /console/login
    browser.get(f"{site.base}/console/status")
    assert "Not signed in" in browser.find_element(By.TAG_NAME, "h1").text
    console_errors(browser)  # the 401s are logged as failed loads


def test_without_javascript_the_neighbourhood_is_a_table(browser_nojs, site: Site) -> None:
    _login(browser_nojs, site)
    browser_nojs.get(f"{site.base}/console/node/{site.ids['ada']}")
    rows = browser_nojs.find_elements(By.CSS_SELECTOR, "table.neighbours tr")
    assert len(rows) >= 2 and "Globex Corporation" in rows[1].text + rows[-1].text
    assert not browser_nojs.find_element(By.ID, "graph").is_displayed()
    browser_nojs.get(f"{site.base}/console/search?q=Globex&minRelevance=0")  # a plain GET form
    assert browser_nojs.find_elements(By.CSS_SELECTOR, "li.hit")


def test_names_that_look_like_markup_stay_text(browser, site: Site) -> None:
    _login(browser, site)
    browser.get(f"{site.base}/console/node/{site.ids['script']}")
    assert SCRIPT_NAME in browser.find_element(By.TAG_NAME, "h1").text
    browser.get(f"{site.base}/console/node/{site.ids['public']}")
    assert _graph_drawn(browser) >= 2  # the script-named Person is drawn as a label on the canvas
    browser.get(f"{site.base}/console/search?q=window+xss&minRelevance=0")
    assert SCRIPT_NAME in browser.find_element(By.CSS_SELECTOR, "ol.hits").text
    assert browser.execute_script("return window.__xss === undefined")
    assert browser.switch_to.active_element is not None  # no alert opened
    assert console_errors(browser) == []


def _forged_logout(target: str) -> Any:
    """Another origin's page that posts the console's logout form by itself (no CSRF token)."""
    from starlette.applications import Starlette
    from starlette.responses import HTMLResponse, Response
    from starlette.routing import Route

    page = (
        f'<form id="f" method="post" action="{target}/console/logout"><input name="csrf" value="guess"></form>'
        '<script src="/go.js"></script>'
    )

    async def home(request: Any) -> Any:
        return HTMLResponse(page)

    async def go(request: Any) -> Any:
        return Response("document.getElementById('f').submit();", media_type="text/javascript")

    return Starlette(routes=[Route("/", home), Route("/go.js", go)])


def test_a_form_posted_from_another_origin_changes_nothing(browser, site: Site) -> None:
    _login(browser, site)
    with serve_app(_forged_logout(site.base)) as evil:
        browser.get(evil)
        WebDriverWait(browser, WAIT_S).until(ec.url_contains("/console/logout"))
        assert "the form is stale" in browser.find_element(By.TAG_NAME, "main").text
    console_errors(browser)
    browser.get(f"{site.base}/console/status")
    assert "Status" in browser.find_element(By.TAG_NAME, "h1").text  # still signed in


@pytest.mark.parametrize("which", ["public", "scoped_admin"])
def test_a_pinned_key_sees_no_admin_node_on_any_page(browser, site: Site, which: str) -> None:
    _login(browser, site, getattr(site, which))
    hidden = [site.ids[k] for k in ("ada", "globex", "fact_new", "fact_old", "marker", "task")]
    urls = [
        "/console/search?q=strategy+for+the+widget+market&minRelevance=0",
        "/console/search?q=Ada+Lovelace&minRelevance=0",
        f"/console/node/{site.ids['public']}?hops=3",
        "/console/documents",
        "/console/conversations",
        f"/console/conversations/{SESSION}",
        "/console/conversations?q=Globex",
        "/console/reports",
        "/console/tasks",
        "/console/audit",
        "/console/status",
    ]
    for url in urls:
        browser.get(site.base + url)
        if "/node/" in url:
            _graph_drawn(browser)
        source = browser.page_source
        assert ADMIN_MARKER not in source and not any(i in source for i in hidden), url
        if "/node/" in url:  # nor in the picture the browser drew
            drawn = browser.execute_script("return window.maxyGraph.nodes().map(n => n.id())")
            assert not set(drawn) & set(hidden)
    browser.get(f"{site.base}/console/search?q=Widget&minRelevance=0")
    assert PUBLIC_NAME in browser.find_element(By.CSS_SELECTOR, "ol.hits").text
    for node_id in hidden:
        browser.get(f"{site.base}/console/node/{node_id}")
        assert "no node with this id in this view" in browser.find_element(By.TAG_NAME, "main").text
    console_errors(browser)


def test_every_page_loads_without_console_errors(browser, site: Site) -> None:
    _login(browser, site)
    for name, url in [
        ("search-explain", "/console/search?q=Who+leads+research+at+Globex&explain=1&minRelevance=0"),
        ("history", f"/console/node/{site.ids['fact_new']}"),
        ("documents", "/console/documents"),
        ("document", "/console/documents/handbook"),
        ("conversations", "/console/conversations"),
        ("conversation", f"/console/conversations/{SESSION}"),
        ("reports", "/console/reports"),
        ("tasks", "/console/tasks"),
        ("audit", "/console/audit"),
        ("status", "/console/status"),
    ]:
        browser.get(site.base + url)
        assert browser.find_element(By.TAG_NAME, "h1").text
        save_screenshot(browser, name)
        assert console_errors(browser) == [], url


def test_a_document_is_deleted_and_restored_from_its_page(browser, site: Site) -> None:
    _login(browser, site)
    browser.get(f"{site.base}/console/documents/handbook")
    browser.find_element(By.CSS_SELECTOR, "form.change button").click()
    WebDriverWait(browser, WAIT_S).until(ec.url_contains("done=deleted"))
    browser.find_element(By.CSS_SELECTOR, 'a[href="/console/documents/handbook?deleted=1"]').click()
    browser.find_element(By.CSS_SELECTOR, "form.change button").click()  # Restore
    WebDriverWait(browser, WAIT_S).until(ec.url_contains("done=restored"))
    assert browser.find_elements(By.CSS_SELECTOR, 'a[href="/console/documents/handbook"]')
    assert console_errors(browser) == []


def test_log_out_ends_the_session(browser, site: Site) -> None:
    _login(browser, site)
    browser.find_element(By.CSS_SELECTOR, 'form[action="/console/logout"] button').click()
    _heading_says(browser, "Not signed in")
    browser.get(f"{site.base}/console/search")
    assert "Not signed in" in browser.find_element(By.TAG_NAME, "h1").text
    console_errors(browser)  # the 401 is logged as a failed load
