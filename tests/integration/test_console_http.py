"""The console over plain HTTP (no browser): the one-time login, the session cookie, the headers
on every response, CSRF, revocation, and what each page shows to an admin key and to pinned
keys. `maxy serve`'s app on a free port, seeded by the real MCP tools, the real Neo4j."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import httpx
import pytest
from maxy.serving.keys import create_api_key, revoke_api_key
from maxy.webconsole.login import mint_login
from maxy.webconsole.views import CSP

from tests.console_site import (
    ADMIN_MARKER,
    IMG_NAME,
    PUBLIC_NAME,
    SCRIPT_NAME,
    SESSION,
    Site,
    open_link,
    served_console,
)

PAGES = [
    "/console/search",
    "/console/search?q=Globex",
    "/console/documents",
    "/console/conversations",
    "/console/conversations?q=Globex",
    "/console/reports",
    "/console/tasks",
    "/console/audit",
    "/console/status",
]


@pytest.fixture(scope="module")
def site(db, tmp_path_factory) -> Iterator[Site]:
    yield from served_console(db, tmp_path_factory)


@contextmanager
def _client(site: Site, key=None) -> Iterator[httpx.Client]:
    """A client logged in with ``key`` (default: the admin key)."""
    with httpx.Client(base_url=site.base, timeout=60) as client:
        response = open_link(client, site.login_url(key or site.admin))
        assert response.status_code == 303 and response.headers["location"] == "/console/search"
        yield client


def _text(response: httpx.Response) -> str:
    """The page's text as a person reads it (tags dropped, entities decoded)."""
    return html.unescape(re.sub(r"<[^>]+>", " ", response.text))


def test_login_link_opens_once_and_sets_a_strict_session_cookie(site: Site) -> None:
    url = site.login_url(site.admin)
    token = url.split("token=")[1]
    with httpx.Client(base_url=site.base) as client:
        assert client.get("/console/search").status_code == 401
        assert client.head(url).status_code == 200 and client.get(url).status_code == 200  # a preview uses nothing up
        forged = client.post("/console/login", data={"token": token}, headers={"origin": "http://evil.example"})
        assert forged.status_code == 401 and "set-cookie" not in forged.headers  # and the token is still good
        first = open_link(client, url)
        assert first.status_code == 303
        cookie = first.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/console" in cookie
        assert client.get("/console/search").status_code == 200
        earlier = client.cookies["maxy_console"]
        assert open_link(client, site.login_url(site.admin)).status_code == 303  # logging in again
        client.cookies.set("maxy_console", earlier, path="/console")
        assert client.get("/console/search").status_code == 401  # ended the earlier session
    with httpx.Client(base_url=site.base) as other:
        again = other.post("/console/login", data={"token": token}, headers={"origin": site.base})
        assert again.status_code == 401 and "set-cookie" not in again.headers
        assert "maxy console" in again.text
        assert other.get("/console/search").status_code == 401
        assert other.get("/console/login?token=' OR 1=1 --").status_code == 401
        assert other.get("/console/login").status_code == 401
        before = _logins(site)
        for _ in range(3):  # unknown tokens of the right shape write nothing
            refused = other.post("/console/login", data={"token": "A" * 43}, headers={"origin": site.base})
            assert refused.status_code == 401
        assert _logins(site) == before
        assert before and not any(token in str(value) for row in before for value in row.values())  # digests only


def _logins(site: Site) -> list[dict]:
    """Every stored login link of the site's account, as stored."""
    rows = site.db.read(
        "MATCH (l:ConsoleLogin {accountId: $acc}) RETURN properties(l) AS p ORDER BY l.digest",
        acc=site.account.account_id,
    )
    return [r["p"] for r in rows]


def test_an_expired_link_and_a_link_for_a_revoked_key_open_nothing(site: Site) -> None:
    expired = mint_login(site.db, site.account.account_id, site.admin.key_id, ttl=timedelta(seconds=-1))
    _, doomed = create_api_key(site.data_root, site.account.account_id, role="admin")
    link = site.login_url(doomed)
    revoke_api_key(site.data_root, doomed.key_id)
    with httpx.Client(base_url=site.base) as client:
        assert open_link(client, f"{site.base}/console/login?token={expired}").status_code == 401
        assert open_link(client, link).status_code == 401


def test_revoking_the_key_ends_its_sessions(site: Site) -> None:
    _, key = create_api_key(site.data_root, site.account.account_id, role="admin")
    with _client(site, key) as client:
        assert client.get("/console/status").status_code == 200
        assert revoke_api_key(site.data_root, key.key_id)
        assert client.get("/console/status").status_code == 401


def test_every_console_response_carries_the_security_headers(site: Site) -> None:
    with _client(site) as client:
        responses = [client.get(p) for p in [*PAGES, "/console/node/no-such-node", "/console/static/console.css"]]
        responses.append(httpx.get(site.base + "/console/search"))  # signed out
        for response in responses:
            assert response.headers["content-security-policy"] == CSP, response.url
            assert response.headers["x-content-type-options"] == "nosniff"
            assert response.headers["referrer-policy"] == "same-origin"
            assert response.headers["x-frame-options"] == "DENY"
        for response in responses[:-2]:
            assert "<script>" not in response.text and " on" + "click=" not in response.text
            assert "style=" not in response.text
    assert "content-security-policy" not in httpx.get(site.base + "/health/live").headers


def test_logout_needs_the_csrf_token_and_a_same_origin_post(site: Site) -> None:
    with _client(site) as client:
        page = client.get("/console/status").text
        csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
        assert client.post("/console/logout", data={"csrf": "wrong"}, headers={"origin": site.base}).status_code == 403
        foreign = client.post("/console/logout", data={"csrf": csrf}, headers={"origin": "http://evil.example"})
        assert foreign.status_code == 403
        assert client.post("/console/logout", data={"csrf": csrf}).status_code == 403  # neither Origin nor Referer
        assert client.get("/console/status").status_code == 200  # still signed in
        assert client.post("/console/logout", data={"csrf": csrf}, headers={"origin": site.base}).status_code == 200
        assert client.get("/console/status").status_code == 401


def test_search_shows_relevance_explain_and_related_nodes(site: Site) -> None:
    with _client(site) as client:
        page = client.get("/console/search", params={"q": "Who works at Globex?", "explain": "1", "minRelevance": "0"})
        assert page.status_code == 200
        assert f'href="/console/node/{site.ids["ada"]}"' in page.text
        text = _text(page)
        for column in ("vector", "BM25", "fused", "boost", "final"):
            assert column in text
        assert "WORKS_FOR" in text  # the hit's related node
        bm25 = client.get("/console/search", params={"q": "Globex Corporation", "fusion": "bm25", "minRelevance": "0"})
        assert "mode bm25" in _text(bm25) and site.ids["globex"] in bm25.text
        bad = client.get("/console/search", params={"q": "Globex", "fusion": "loudest"})
        assert bad.status_code == 400 and "fusion: one of weighted, rrf, vector, bm25" in _text(bad)
        narrowed = client.get("/console/search", params={"q": "Widget", "scope": "public", "minRelevance": "0"})
        assert site.ids["public"] in narrowed.text and site.ids["marker"] not in narrowed.text
    with _client(site, site.public) as client:
        widened = client.get("/console/search", params={"q": "Widget", "scope": "admin"})
        assert widened.status_code == 400 and "cannot be widened" in _text(widened)


def test_node_page_shows_history_provenance_and_its_neighbourhood(site: Site) -> None:
    with _client(site) as client:
        fact = _text(client.get(f"/console/node/{site.ids['fact_new']}"))
        assert "Ada leads research at Globex" in fact and "earlier (1)" in fact and "Ada is an analyst" in fact
        ada = client.get(f"/console/node/{site.ids['ada']}")
        text = _text(ada)
        assert "Research Globex" in text and "completed" in text  # the Task that produced it
        assert "memory-write" in text  # a tool call that named it
        assert f'href="/console/node/{site.ids["globex"]}"' in ada.text
        graph = client.get(f"/console/node/{site.ids['ada']}/graph.json", params={"hops": "2"}).json()
        ids = {n["id"] for n in graph["nodes"]}
        assert {site.ids["ada"], site.ids["globex"], site.ids["task"]} <= ids
        assert {"source": site.ids["ada"], "target": site.ids["globex"], "type": "WORKS_FOR"} in graph["edges"]
        assert [n["id"] for n in graph["nodes"] if n["center"]] == [site.ids["ada"]]
        assert client.get(f"/console/node/{site.ids['ada']}", params={"hops": "4"}).status_code == 400
        assert client.get(f"/console/node/{site.ids['ada']}/graph.json", params={"hops": "x"}).status_code == 400


def test_names_that_look_like_markup_are_shown_as_text(site: Site) -> None:
    with _client(site) as client:
        for page in (
            client.get(f"/console/node/{site.ids['script']}"),
            client.get("/console/search", params={"q": "window xss", "minRelevance": "0"}),
            client.get(f"/console/node/{site.ids['public']}"),
        ):
            assert page.status_code == 200
            assert SCRIPT_NAME not in page.text and IMG_NAME not in page.text
            assert html.escape(SCRIPT_NAME, quote=False) in page.text


@pytest.mark.parametrize("which", ["public", "scoped_admin"])
def test_a_pinned_key_sees_no_admin_node_anywhere(site: Site, which: str) -> None:
    key = getattr(site, which)
    hidden = [site.ids[k] for k in ("ada", "globex", "fact_new", "fact_old", "marker", "task")]
    with _client(site, key) as client:
        pages = [client.get(p) for p in PAGES]
        pages.append(client.get("/console/search", params={"q": "strategy for the widget market", "minRelevance": "0"}))
        pages.append(client.get("/console/search", params={"q": "Ada Lovelace Globex", "minRelevance": "0"}))
        pages.append(client.get(f"/console/node/{site.ids['public']}", params={"hops": "3"}))
        for page in pages:
            assert page.status_code == 200, page.url
            assert ADMIN_MARKER not in page.text
            if which == "public":  # unscoped nodes (the admin's chat turns) pass a scope pin without an agent pin
                assert "Globex" not in _text(page).replace("q=Globex", "")
            assert not any(node_id in page.text for node_id in hidden), page.url
        assert PUBLIC_NAME in _text(client.get("/console/search", params={"q": "Widget", "minRelevance": "0"}))
        assert "Counts are shown to keys that see the whole account" in _text(client.get("/console/status"))
        for node_id in hidden:
            assert client.get(f"/console/node/{node_id}").status_code == 404
            assert client.get(f"/console/node/{node_id}/graph.json").status_code == 404
        absent = client.get("/console/node/no-such-node")
        assert absent.status_code == 404 and _text(absent) == _text(client.get(f"/console/node/{site.ids['marker']}"))


def test_status_shows_the_account_counts_to_an_unpinned_admin(site: Site) -> None:
    with _client(site) as client:
        text = _text(client.get("/console/status"))
    assert "This account" in text and "Person" in text and "missing embeddings" in text
    assert re.search(r"nodes\s+\d+", text)


def _form(action: str, csrf: str | None = None, attachment: str = "handbook") -> dict[str, str]:
    return {"action": action, "attachmentId": attachment, **({"csrf": csrf} if csrf else {})}


def _csrf(client: httpx.Client) -> str:
    page = client.get("/console/status").text
    return re.search(r'name="csrf" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]


def test_documents_delete_and_restore_with_csrf_and_an_audit_entry(site: Site) -> None:
    with _client(site) as client:
        listing = client.get("/console/documents")
        assert 'href="/console/documents/handbook"' in listing.text
        outline = _text(client.get("/console/documents/handbook"))
        assert "Console handbook" in outline and "can be restored by an operator" in outline
        csrf = _csrf(client)
        same = {"origin": site.base}
        assert client.post("/console/documents", data=_form("delete"), headers=same).status_code == 403  # no token
        assert client.post("/console/documents", data=_form("delete", csrf)).status_code == 403  # no origin
        purge = client.post("/console/documents", data=_form("purge", csrf), headers=same)
        assert purge.status_code == 400 and "action: delete or restore" in _text(purge)
        assert 'href="/console/documents/handbook"' in client.get("/console/documents").text  # still live

        deleted = client.post("/console/documents", data=_form("delete", csrf), headers=same)
        assert deleted.status_code == 303 and deleted.headers["location"] == "/console/documents?deleted=1&done=deleted"
        assert 'href="/console/documents/handbook"' not in client.get("/console/documents").text
        trash = client.get("/console/documents", params={"deleted": "1", "done": "deleted"})
        assert 'href="/console/documents/handbook?deleted=1"' in trash.text and "Document deleted." in _text(trash)
        assert client.get("/console/documents/handbook").status_code == 404
        hits = client.get("/console/search", params={"q": "restored by an operator", "minRelevance": "0"})
        assert "Console handbook" not in _text(hits)
        restored = client.post("/console/documents", data=_form("restore", csrf), headers=same)
        assert restored.status_code == 303
        again = client.post("/console/documents", data=_form("restore", csrf), headers=same)
        assert again.status_code == 403 and "attachmentId: no deleted document 'handbook'" in _text(again)
        assert 'href="/console/documents/handbook"' in client.get("/console/documents").text
        hits = client.get("/console/search", params={"q": "restored by an operator", "minRelevance": "0"})
        assert "Console handbook" in _text(hits)
        audit = _text(client.get("/console/audit", params={"tool": "console-document-delete"}))
        assert "console-document-delete" in audit and "handbook" in audit and "1 tool call " in audit


def test_a_public_key_cannot_delete_or_see_the_trash(site: Site) -> None:
    with _client(site, site.public) as client:
        csrf = _csrf(client)
        refused = client.post("/console/documents", data=_form("delete", csrf), headers={"origin": site.base})
        assert refused.status_code == 403 and "read-only" in _text(refused)
        trash = client.get("/console/documents", params={"deleted": "1"})
        assert trash.status_code == 400 and "deleted" in _text(trash)
        assert "Deleted, awaiting purge" not in client.get("/console/documents").text
    with _client(site) as client:
        assert 'href="/console/documents/handbook"' in client.get("/console/documents").text


def test_conversations_reports_tasks_and_audit_pages(site: Site) -> None:
    with _client(site) as client:
        listing = client.get("/console/conversations")
        assert f'href="/console/conversations/{SESSION}"' in listing.text
        messages = _text(client.get(f"/console/conversations/{SESSION}"))
        assert messages.index("Who runs Globex?") < messages.index("Let me research it.")
        found = _text(client.get("/console/conversations", params={"q": "who runs Globex"}))
        assert "Who runs Globex?" in found
        assert client.get("/console/conversations/no-such-session").status_code == 404
        reports = client.get("/console/reports", params={"keyword": "briefing"})
        assert f'href="/console/node/{site.ids["report"]}"' in reports.text
        assert "No report in this view" in _text(client.get("/console/reports", params={"keyword": "nothing-tagged"}))
        tasks = client.get("/console/tasks", params={"status": "completed"})
        assert "Research Globex" in _text(tasks) and "reading the annual report" in _text(tasks)
        assert f'href="/console/node/{site.ids["ada"]}"' in tasks.text  # what it produced
        assert client.get("/console/tasks", params={"status": "finished"}).status_code == 400
        audit = client.get("/console/audit", params={"tool": "work-create"})
        assert "1 tool call " in _text(audit) and "company-research" in _text(audit)
        assert "No tool call in this view matches" in _text(
            client.get("/console/audit", params={"outcome": "error", "tool": "work-create"})
        )
        bad = client.get("/console/audit", params={"after": "yesterday"})
        assert bad.status_code == 400 and "after" in _text(bad)
        assert client.get("/console/tasks", params={"page": "0"}).status_code == 400


def test_odd_input_answers_one_line_never_a_bare_500(site: Site) -> None:
    with _client(site) as client:
        for url, field in [
            ("/console/documents?page=%C2%B2", "page"),
            ("/console/tasks?page=99999999999999999999999", "page"),
            (f"/console/node/{site.ids['ada']}?hops=%E2%91%A1", "hops"),
            ("/console/audit?after=9999-12-31T23:59:59-01:00", "after"),
            ("/console/search?q=x&after=9999-12-31T23:59:59-01:00", "after"),
            ("/console/search?q=x&minRelevance=lots", "minRelevance"),
        ]:
            page = client.get(url)
            assert page.status_code == 400, url
            assert page.headers["content-security-policy"] == CSP
            assert re.search(rf"\b{field}: ", _text(page)), (url, _text(page)[-300:])
        bogus = client.get("/console/documents", params={"done": "deleted. Sign in again at evil.example"})
        assert "evil.example" not in bogus.text


def test_ids_with_url_characters_are_links_to_themselves(site: Site, tmp_path) -> None:
    from maxy.config import load_settings
    from maxy.db import Database
    from maxy.embeddings import get_embedder
    from maxy.graph.write import GraphWriter
    from maxy.ingest import ingest_record

    odd = "team/notes?draft#1 %41"
    settings = load_settings(DATA_ROOT=site.data_root)
    with Database(settings) as db:
        writer = GraphWriter(db, site.account, get_embedder(settings), created_by="test")
        ingest_record(writer, odd, "Odd notes", "Notes kept under an odd attachment id.")
    with _client(site) as client:
        listing = client.get("/console/documents")
        href = re.search(r'href="(/console/documents/team[^"]*)"', listing.text).group(1)  # type: ignore[union-attr]
        assert "/" not in href.removeprefix("/console/documents/") and "?" not in href and "#" not in href
        outline = client.get(html.unescape(href))
        assert outline.status_code == 200 and "Notes kept under an odd attachment id." in _text(outline)
        csrf = _csrf(client)
        gone = client.post("/console/documents", data=_form("delete", csrf, odd), headers={"origin": site.base})
        assert gone.status_code == 303
        assert client.get(html.unescape(href)).status_code == 404
        assert client.get("/console/documents/team").status_code == 404


def test_a_public_key_whose_record_lost_its_pins_is_no_key(site: Site) -> None:
    import json as jsonlib

    from maxy.serving.keys import create_api_key as make_key

    _, key = make_key(site.data_root, site.account.account_id, role="public", agent_slug="concierge")
    path = site.data_root / "accounts" / site.account.account_id / "api-keys.json"
    with _client(site, key) as client:
        assert client.get("/console/status").status_code == 200
        data = jsonlib.loads(path.read_text())
        for record in data["keys"]:
            if record["keyId"] == key.key_id:
                record["scopes"] = []  # a hand edit that would widen it to every scope
        path.write_text(jsonlib.dumps(data))
        assert client.get("/console/status").status_code == 401
        assert client.get("/console/documents", params={"deleted": "1"}).status_code == 401
