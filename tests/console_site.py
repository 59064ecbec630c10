"""A console to test: `maxy serve`'s app on a free port, seeded the way an admin agent fills it
(the real MCP tools over HTTP with an admin key: a conversation, a task that produced entities,
a superseded fact, public nodes for a concierge agent, nodes named like markup, an admin-only
marker, an ingested document), plus the keys that log in. Shared by the HTTP and browser tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
from maxy.accounts import ValidatedAccount
from maxy.config import load_settings
from maxy.plugins.discovery import discover_plugins
from maxy.serving.app import create_app
from maxy.serving.keys import ApiKey, create_api_key
from maxy.webconsole.login import mint_login
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.local_http import serve_app

ADMIN_MARKER = "Zebulon admin-only strategy"  # in no page a pinned key can open
PUBLIC_NAME = "Widget Public Company"
SCRIPT_NAME = "<script>window.__xss=1</script>"
IMG_NAME = '<img src="x" onerror="window.__xss=2">'
SESSION = "console-test-session"
DOCUMENT = "# Console handbook\n\n## Deleting\n\nA deleted handbook can be restored by an operator.\n"


@dataclass
class Site:
    base: str
    data_root: Path
    account: ValidatedAccount
    admin: ApiKey
    admin_secret: str
    public: ApiKey  # role public, agent concierge, scope public
    scoped_admin: ApiKey  # role admin, pinned to the public scope
    db: Any  # where the login links are kept
    ids: dict[str, str] = field(default_factory=dict)

    def login_url(self, key: ApiKey) -> str:
        return f"{self.base}/console/login?token={mint_login(self.db, key.account_id, key.key_id)}"


async def _call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, (tool, result.content)
    return result.structured_content or {}


async def _seed(url: str, secret: str, handbook: Path) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {secret}", "x-maxy-session-id": SESSION}
    ids: dict[str, str] = {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60, read=120)) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        for role, content in (("user", "Who runs Globex?"), ("assistant", "Let me research it.")):
            await _call(client, "conversation-append", {"sessionId": SESSION, "role": role, "content": content})
        task = await _call(client, "work-create", {"kind": "company-research", "title": "Research Globex"})
        ids["task"] = task["taskId"]
        step = {"taskId": task["taskId"], "status": "running", "step": "reading the annual report"}
        await _call(client, "work-update", step)
        org = await _call(
            client,
            "memory-write",
            {
                "labels": ["Organization"],
                "properties": {"name": "Globex Corporation"},
                "producedByTaskId": task["taskId"],
                "scope": "admin",
            },
        )
        ids["globex"] = org["nodeId"]
        ada = await _call(
            client,
            "memory-write",
            {
                "labels": ["Person"],
                "properties": {"name": "Ada Lovelace"},
                "edges": [{"type": "WORKS_FOR", "target": org["nodeId"], "direction": "out"}],
                "producedByTaskId": task["taskId"],
                "scope": "admin",
            },
        )
        ids["ada"] = ada["nodeId"]
        old = await _call(
            client,
            "memory-write",
            {
                "labels": ["Fact"],
                "properties": {"text": "Ada is an analyst at Globex"},
                "validFrom": "2023-01-01",
                "scope": "admin",
            },
        )
        new = await _call(
            client,
            "memory-write",
            {
                "labels": ["Fact"],
                "properties": {"text": "Ada leads research at Globex"},
                "supersede": [old["nodeId"]],
                "scope": "admin",
            },
        )
        ids["fact_old"], ids["fact_new"] = old["nodeId"], new["nodeId"]
        await _call(
            client, "work-complete", {"taskId": task["taskId"], "producedNodeIds": [org["nodeId"], ada["nodeId"]]}
        )
        public = {"scope": "public", "agents": ["concierge"]}
        widget = await _call(
            client, "memory-write", {"labels": ["Organization"], "properties": {"name": PUBLIC_NAME}, **public}
        )
        ids["public"] = widget["nodeId"]
        script = await _call(
            client,
            "memory-write",
            {
                "labels": ["Person"],
                "properties": {"name": SCRIPT_NAME, "description": IMG_NAME},
                "edges": [{"type": "WORKS_FOR", "target": widget["nodeId"], "direction": "out"}],
                "resolve": False,
                **public,
            },
        )
        ids["script"] = script["nodeId"]
        marker = await _call(
            client,
            "memory-write",
            {
                "labels": ["Fact"],
                "properties": {"text": f"{ADMIN_MARKER} for the widget market"},
                "edges": [{"type": "ABOUT", "target": widget["nodeId"], "direction": "out"}],
                "scope": "admin",
                "agents": ["concierge"],
            },
        )
        ids["marker"] = marker["nodeId"]
        await _call(client, "memory-ingest", {"paths": [str(handbook)], "attachmentId": "handbook"})
        report = await _call(
            client,
            "memory-report-write",
            {"title": "Weekly Globex briefing", "body": "Ada now leads research.", "keywords": ["briefing"]},
        )
        ids["report"] = report["reportId"]
    return ids


@contextmanager
def console_site(account: ValidatedAccount, data_root: Path, db: Any) -> Iterator[Site]:
    """The served app, seeded; the keys are made before it starts."""
    secret, admin = create_api_key(data_root, account.account_id, role="admin")
    _, public = create_api_key(data_root, account.account_id, role="public", agent_slug="concierge")
    _, scoped = create_api_key(data_root, account.account_id, role="admin", scopes=["public"])
    settings = load_settings(DATA_ROOT=data_root, ACCOUNT_ID=account.account_id)
    app = create_app(discover_plugins(None, []), settings)
    handbook = data_root.parent / "handbook.md"
    handbook.write_text(DOCUMENT, encoding="utf-8")
    with serve_app(app) as base:
        ids = anyio.run(_seed, f"{base}/mcp", secret, handbook)
        yield Site(base, data_root, account, admin, secret, public, scoped, db, ids)


def served_console(db: Any, tmp_path_factory: Any) -> Iterator[Site]:
    """The body of a module fixture: a fresh account and data root, served and seeded, purged after."""
    from maxy.accounts import create_account, validate_account

    from tests.conftest import purge_account

    root = tmp_path_factory.mktemp("console") / "data"
    root.mkdir()
    account = validate_account(root, create_account(root, "console").account_id)
    try:
        with console_site(account, root, db) as served:
            yield served
    finally:
        purge_account(db, account.account_id)


def open_link(client: Any, link: str) -> Any:
    """What a browser does with a login link: load its page, then press Log in (a same-origin
    post of the token the page holds). Returns the answer to the post."""
    import re
    from urllib.parse import urlsplit

    page = client.get(link)
    assert page.status_code == 200, page.status_code
    token = re.search(r'name="token" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
    parts = urlsplit(link)
    origin = f"{parts.scheme}://{parts.netloc}"
    return client.post(f"{origin}/console/login", data={"token": token}, headers={"origin": origin})
