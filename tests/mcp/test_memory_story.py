"""The entity-memory story an agent lives through, over stdio and streamable HTTP MCP against
the real Neo4j:
people and organisations written and found, a second spelling resolved to the first, a job
change superseding the old fact (still there as of an earlier date), forgetting, and a unique
name found first among hundreds of similar nodes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import anyio
import httpx2
from maxy.config import load_settings
from maxy.graph.write import GraphWriter, NodeSpec
from maxy.plugins.discovery import discover_plugins
from maxy.serving.app import create_app
from maxy.serving.keys import create_api_key
from mcp import ClientSession, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.local_http import serve_app
from tests.mcp.inprocess import stdio_inprocess
from tests.plugins_fixture.helpers import CLI, REPO, child_env, text

ID = re.compile(r"\(id: ([^)]+)\)")


async def _story(params: StdioServerParameters, errlog: Path) -> dict:
    with errlog.open("w") as err:
        async with stdio_inprocess(params, errlog=err) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return await _calls(s)


async def _story_http(url: str, key: str) -> dict:
    async with (
        httpx2.AsyncClient(headers={"x-api-key": key}, timeout=httpx2.Timeout(30, read=120)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as s,
    ):
        await s.initialize()
        return await _calls(s)


async def _calls(s: ClientSession) -> dict:
    async def call(name: str, args: dict) -> object:
        result = await s.call_tool(name, args)
        assert not result.is_error, f"{name}: {text(result)}"
        body = text(result)
        return json.loads(body) if name != "memory-search" else body

    out: dict = {}
    globex = await call(
        "memory-write",
        {"labels": ["Organization"], "properties": {"name": "Globex", "description": "Industrial conglomerate"}},
    )
    ada = await call(
        "memory-write",
        {
            "labels": ["Person"],
            "properties": {"name": "Ada Lovelace", "jobTitle": "analyst"},
            "edges": [{"type": "WORKS_FOR", "target": globex["nodeId"]}],
        },
    )
    out["ids"] = {"globex": globex["nodeId"], "ada": ada["nodeId"]}
    out["who"] = await call("memory-search", {"query": "Who works at Globex?", "limit": 3, "expandHops": 0})
    out["again"] = await call(
        "memory-write", {"labels": ["Organization"], "properties": {"name": "Globex Corporation"}}
    )
    old = await call(
        "memory-write",
        {
            "labels": ["Fact"],
            "properties": {"text": "Ada works at Globex as an analyst"},
            "validFrom": "2022-01-01",
            "edges": [{"type": "ABOUT", "target": ada["nodeId"]}],
        },
    )
    new = await call(
        "memory-write",
        {
            "labels": ["Fact"],
            "properties": {"text": "Ada moved to Initech as an engineer"},
            "validFrom": "2024-06-01",
            "supersede": old["nodeId"],
            "edges": [{"type": "ABOUT", "target": ada["nodeId"]}],
        },
    )
    out["facts"] = {"old": old["nodeId"], "new": new}
    query = {"query": "Where does Ada work?", "labels": ["Fact"], "expandHops": 0}
    out["now"] = await call("memory-search", query)
    out["then"] = await call("memory-search", {**query, "asOf": "2023-03-01"})
    out["history"] = await call("memory-search", {**query, "includeHistory": True})
    out["chain"] = await call("memory-get", {"nodeIds": [old["nodeId"]], "hops": 1, "includeHistory": True})
    out["forget"] = await call("memory-forget", {"nodeId": new["nodeId"]})
    out["after_forget"] = await call("memory-search", query)
    term = await call(
        "memory-write",
        {
            "labels": ["DefinedTerm"],
            "properties": {"name": "Calibration step CX-0417", "description": "Widget calibration"},
        },
    )
    out["term"] = term["nodeId"]
    out["lookup"] = await call("memory-search", {"query": "Calibration step CX-0417", "expandHops": 0})
    turns = [
        await call("conversation-append", {"sessionId": "story", "content": said, "speaker": who})
        for who, said in (("Ada", "I start at Initech on Monday"), ("Bob", "Congratulations on the new job"))
    ]
    out["turns"] = turns
    out["heard"] = await s.call_tool("conversation-search", {"query": "new job at Initech", "sessionId": "story"})
    return out


def _similar_terms(db, account, embedder) -> None:
    similar = [
        NodeSpec(["DefinedTerm"], {"name": f"Calibration step CX-{i:04d}", "description": "Widget calibration"})
        for i in range(300)
    ]
    GraphWriter(db, account, embedder, created_by="test").write_many(similar)


def test_the_entity_memory_story_over_stdio(db, account, data_root: Path, tmp_path: Path, embedder) -> None:
    _similar_terms(db, account, embedder)
    env = child_env(data_root, ACCOUNT_ID=account.account_id)
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", "serve", "memory"], env=env, cwd=str(REPO))
    _check(anyio.run(_story, params, tmp_path / "server.log"))


def test_the_entity_memory_story_over_http(db, account, data_root: Path, embedder) -> None:
    _similar_terms(db, account, embedder)
    key, _ = create_api_key(data_root, account.account_id, role="admin")
    app = create_app(discover_plugins(["memory"]), load_settings(DATA_ROOT=data_root))
    with serve_app(app) as base:
        _check(anyio.run(_story_http, base + "/mcp", key))


def _check(out: dict) -> None:
    ids = out["ids"]
    assert {ids["globex"], ids["ada"]} <= set(ID.findall(out["who"])), "the organisation and its person, top 3"
    assert out["again"]["resolved"] == ids["globex"] and out["again"]["created"] is False
    old, new = out["facts"]["old"], out["facts"]["new"]["nodeId"]
    assert out["facts"]["new"]["superseded"] == [old]
    assert ID.findall(out["now"])[0] == new and old not in ID.findall(out["now"])
    assert old in ID.findall(out["then"]) and new not in ID.findall(out["then"])
    assert {old, new} <= set(ID.findall(out["history"]))
    chain = out["chain"]["nodes"][0]
    assert chain["properties"]["validUntil"].startswith("2024-06-01")
    assert [(n["nodeId"], n["path"][0]["type"]) for n in chain["neighbours"] if n["nodeId"] == new] == [
        (new, "SUPERSEDED_BY")
    ]
    assert out["forget"]["forgotten"] is True and new not in ID.findall(out["after_forget"])
    assert ID.findall(out["lookup"])[0] == out["term"], "an exact unique name ranks first among 300 similar"
    first, second = out["turns"]
    assert first["conversationId"] is None and second["conversationId"] is not None, "created at the second turn"
    assert "new job" in text(out["heard"]) and not out["heard"].is_error
