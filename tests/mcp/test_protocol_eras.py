"""Every tool of the memory, work and session plugins, called by the SDK's client in both
protocol eras it speaks (``mode="legacy"``: the 2025-11-25 initialize handshake; ``mode="auto"``:
``server/discover``, then the stateless 2026-07-28 revision) over stdio (``maxy mcp serve``) and
streamable HTTP (``maxy serve``'s app), against the real Neo4j: each answer carries a text block
and structuredContent that validates against the tool's outputSchema."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from jsonschema import Draft202012Validator
from maxy.config import load_settings
from maxy.mcp.http import create_app
from maxy.mcp.keys import create_api_key
from maxy.plugins.discovery import discover_plugins
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.local_http import serve_app
from tests.plugins_fixture.helpers import CLI, REPO, child_env, text

PLUGINS = ["memory", "work", "session"]
ERAS = {"legacy": "2025-11-25", "auto": "2026-07-28"}
SEARCHES = {"memory-search", "conversation-search", "session-context"}  # text stays rendered, not JSON


async def _every_tool(client: Client, doc: Path, tag: str) -> dict[str, Any]:
    """Call each tool once with good arguments; returns what the checks need."""
    listed = {t.name: t for t in (await client.list_tools()).tools}
    results: list[tuple[str, Any]] = []

    async def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
        result = await client.call_tool(name, args)
        assert not result.is_error, f"{name}: {text(result)}"
        results.append((name, result))
        return result.structured_content or {}

    task = await call("work-create", {"kind": "contract-check", "title": f"Contract check {tag}", "priority": "high"})
    made = {"producedByTaskId": task["taskId"]}
    project = await call("memory-write", {"labels": "Project", "properties": {"name": f"Apollo rollout {tag}"}} | made)
    note = await call(
        "memory-write",
        {
            "labels": ["Note"],
            "properties": {"name": f"Apollo kickoff notes {tag}", "text": "The rollout starts in March."},
            "edges": [{"type": "ABOUT", "target": project["nodeId"]}],
            "scope": "admin",
        }
        | made,
    )
    await call("memory-get", {"nodeIds": project["nodeId"], "hops": 1})
    await call("memory-search", {"query": f"Apollo rollout {tag}", "limit": 5})
    await call("memory-search", {"query": "zebra quantum marmalade", "expandHops": 0})
    await call("work-update", {"taskId": task["taskId"], "step": "written the project", "status": "running"})
    await call("work-complete", {"taskId": task["taskId"], "producedNodeIds": [project["nodeId"], note["nodeId"]]})
    await call("memory-remove-relation", {"source": note["nodeId"], "type": "ABOUT", "target": project["nodeId"]})
    await call("memory-forget", {"nodeId": note["nodeId"]})
    ingested = await call("memory-ingest", {"paths": [str(doc)]})
    await call("memory-delete", {"attachmentId": ingested["documents"][0]["attachmentId"]})
    await call("memory-reindex", {"labels": ["Project"]})
    session = f"chat-{tag}"
    await call("conversation-append", {"content": "Where is the Apollo kickoff?", "sessionId": session})
    await call("conversation-append", {"content": "In room 4.", "role": "assistant", "sessionId": session})
    await call("conversation-search", {"query": "Apollo kickoff room", "sessionId": session})
    keyword = f"contract-{tag}"
    await call("memory-report-write", {"title": "Contract run", "body": "All tools answered.", "keywords": [keyword]})
    await call("memory-report-read-latest", {"keyword": keyword})
    await call("memory-report-list", {"keyword": keyword, "limit": 5})
    await call(
        "session-compact",
        {"asked": "check the tools", "done": ["called each"], "decisions": "", "workInProgress": "", "aboutUser": ""},
    )
    await call("session-context", {})
    return {
        "version": client.protocol_version,
        "instructions": client.session.instructions,
        "listed": listed,
        "results": results,
    }


def _check(out: dict[str, Any], mode: str) -> None:
    assert out["version"] == ERAS[mode]
    assert out["instructions"] and "relevance" in out["instructions"]
    listed, results = out["listed"], out["results"]
    assert {name for name, _ in results} == set(listed), "every tool was called"
    for name, result in results:
        schema = listed[name].output_schema
        errors = sorted(Draft202012Validator(schema).iter_errors(result.structured_content), key=str)
        assert not errors, f"{name}: {errors[0].message}"
        [block] = result.content
        assert block.type == "text" and block.text
        if name not in SEARCHES:
            assert json.loads(block.text) == result.structured_content, name
    searched = [r for name, r in results if name == "memory-search"]
    assert searched[0].structured_content["hits"], "the project is found"
    assert text(searched[0]).startswith("[")  # the rendered blocks, as before
    nonsense = searched[1].structured_content
    if text(searched[1]).startswith("No relevant results"):  # nothing cleared the cut: the nearest miss, as data too
        assert nonsense["hits"] == [] and nonsense["nearestMiss"]["nodeId"]
    found = [r for name, r in results if name == "conversation-search"][0].structured_content["hits"]
    assert {h["content"] for h in found} >= {"Where is the Apollo kickoff?"}


@pytest.fixture()
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "docs" / "apollo.md"
    path.parent.mkdir()
    path.write_text("# Apollo\n\n## Kickoff\n\nThe Apollo rollout kickoff is in room 4 on Monday.\n")
    return path


@pytest.mark.parametrize("mode", list(ERAS))
def test_every_tool_over_stdio(mode: str, db, account, data_root: Path, tmp_path: Path, doc: Path) -> None:
    env = child_env(data_root, ACCOUNT_ID=account.account_id, SESSION_NODE_ID=f"session-{uuid.uuid4().hex[:8]}")
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", "serve", *PLUGINS], env=env, cwd=str(REPO))
    log = tmp_path / "server.log"

    async def run() -> dict[str, Any]:
        with log.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode=mode) as client:
                return await _every_tool(client, doc, uuid.uuid4().hex[:8])

    _check(anyio.run(run), mode)
    assert "Traceback" not in log.read_text()


@contextmanager
def _http(data_root: Path) -> Iterator[str]:
    with serve_app(create_app(discover_plugins(PLUGINS), load_settings(DATA_ROOT=data_root))) as base:
        yield base + "/mcp"


@pytest.mark.parametrize("mode", list(ERAS))
def test_every_tool_over_http(mode: str, db, account, data_root: Path, doc: Path) -> None:
    key, _ = create_api_key(data_root, account.account_id, role="admin")
    headers = {"x-api-key": key, "x-maxy-session-id": f"session-{uuid.uuid4().hex[:8]}"}

    async def run(url: str) -> dict[str, Any]:
        async with (
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120)) as http,
            Client(streamable_http_client(url, http_client=http), mode=mode) as client,
        ):
            return await _every_tool(client, doc, uuid.uuid4().hex[:8])

    with _http(data_root) as url:
        _check(anyio.run(run, url), mode)
