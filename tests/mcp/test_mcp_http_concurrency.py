"""Many agents on one account at once over streamable HTTP: the real app under uvicorn and the
SDK's client, eight sessions calling memory-write and memory-search side by side against the
real Neo4j. No call fails, every acknowledged write reads back through memory-get, and the
agents that name the same person at once leave one node for it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx2
from maxy.config import load_settings
from maxy.plugins.discovery import discover_plugins
from maxy.serving.app import create_app
from maxy.serving.keys import create_api_key
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.local_http import serve_app

CLIENTS = 8
ROUNDS = 3


async def _agent(url: str, key: str, number: int) -> tuple[list[str], list[str]]:
    """(nodeIds this agent's writes were acknowledged with, errors it saw)."""
    written: list[str] = []
    errors: list[str] = []
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=httpx2.Timeout(60, read=120)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for i in range(ROUNDS):
            calls = [
                (
                    "memory-write",
                    {"labels": ["Fact"], "properties": {"text": f"agent {number} saw the boiler in week {i}"}},
                ),
                ("memory-write", {"labels": ["Person"], "properties": {"name": "Grace Hopper", f"seenBy{number}": i}}),
                ("memory-search", {"query": "boiler week", "limit": 5}),
            ]
            for tool, arguments in calls:
                result = await session.call_tool(tool, arguments)
                if result.is_error:
                    errors.append(f"{tool}: {result.content[0].text}")
                elif tool == "memory-write":
                    written.append(result.structured_content["nodeId"])
    return written, errors


async def _read_back(url: str, key: str, ids: list[str]) -> set[str]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=httpx2.Timeout(60, read=120)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        result = await session.call_tool("memory-get", {"nodeIds": ids, "hops": 0})
        assert not result.is_error, result.content[0].text
        return {n["nodeId"] for n in result.structured_content["nodes"]}


async def _agents(url: str, key: str) -> list[tuple[list[str], list[str]]]:
    return await asyncio.gather(*(_agent(url, key, n) for n in range(CLIENTS)))


def test_concurrent_agents_lose_no_write_and_share_one_entity(db, account, data_root: Path) -> None:
    key, _ = create_api_key(data_root, account.account_id, role="admin")
    app = create_app(discover_plugins(["memory"]), load_settings(DATA_ROOT=data_root))
    with serve_app(app) as base:
        url = base + "/mcp"
        outcomes = asyncio.run(_agents(url, key))
        written = sorted({node_id for ids, _ in outcomes for node_id in ids})
        found = asyncio.run(_read_back(url, key, written))

    assert [e for _, errors in outcomes for e in errors] == []
    assert sum(len(ids) for ids, _ in outcomes) == CLIENTS * ROUNDS * 2
    assert found == set(written)
    people = db.read(
        "MATCH (n:Person {accountId: $acc}) WHERE n.name = 'Grace Hopper' RETURN properties(n) AS p",
        acc=account.account_id,
    )
    assert len(people) == 1  # every agent's write merged into the one node
    assert all(f"seenBy{n}" in people[0]["p"] for n in range(CLIENTS))
    facts = db.read("MATCH (n:Fact {accountId: $acc}) RETURN count(n) AS n", acc=account.account_id)
    assert facts[0]["n"] == CLIENTS * ROUNDS
