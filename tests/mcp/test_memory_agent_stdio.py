"""The memory-agent plugin over stdio MCP, driven by the SDK's client against the real Neo4j:
its five tools and three prompts are listed, a prompt's text is the plugin's file, and a
memory is written and read back through the tools (entries linked to the turns
``conversation-append`` stored, versioned contexts, the barrier). A vaultId other than the
server's account is refused like any other widening."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import anyio
from jsonschema import Draft202012Validator
from maxy.memoryagent import PROMPT_NAMES, load_prompts
from mcp import Client, StdioServerParameters

from tests.mcp.inprocess import stdio_inprocess
from tests.plugins_fixture.helpers import CLI, REPO, child_env, text

TOOLS = {"add_entry", "list_entries", "get_context", "put_context", "await_consistency"}


def _odd_arguments() -> list[tuple[str, str, dict[str, Any]]]:
    """(the field its one-line refusal names, tool, arguments)."""
    entry = {"memoryId": "ada", "summary": "s", "rawEntry": "r"}
    return [
        ("summary", "add_entry", {**entry, "summary": "s" * 4_001}),
        ("summary", "add_entry", {**entry, "summary": "   "}),
        ("tags.n", "add_entry", {**entry, "tags": {"n": 5}}),
        ("tags.n", "add_entry", {**entry, "tags": {"n": ["a"]}}),
        ("tags[0]", "add_entry", {**entry, "tags": ["a\nb"]}),
        ("limit", "list_entries", {"memoryId": "ada", "limit": 0}),
        ("limit", "list_entries", {"memoryId": "ada", "limit": -5}),
        ("limit", "list_entries", {"memoryId": "ada", "limit": 10**12}),
        ("memoryId", "list_entries", {"memoryId": "Zoë"}),
        ("memoryId", "get_context", {"memoryId": "ada\u0007"}),
        ("memoryId", "get_context", {"memoryId": "x" * 129}),
        ("timeoutS", "await_consistency", {"memoryId": "ada", "timeoutS": -1}),
        ("content", "put_context", {"memoryId": "ada", "content": "x" * 100_001}),
    ]


async def _drive(params: StdioServerParameters, log: Path, account_id: str, other_account: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with log.open("w") as errlog:
        async with Client(stdio_inprocess(params, errlog=errlog)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            out["tools"] = tools
            out["prompts"] = {p.name: p for p in (await client.list_prompts()).prompts}
            out["prompt"] = await client.get_prompt("context_prompt")

            async def ok(tool: str, args: dict[str, Any]) -> dict[str, Any]:
                result = await client.call_tool(tool, args)
                assert not result.is_error, f"{tool}: {text(result)}"
                answer = result.structured_content or {}
                errors = list(Draft202012Validator(tools[tool].output_schema).iter_errors(answer))
                assert not errors, f"{tool}: {errors[0].message}"
                return answer

            out["turn"] = await ok(
                "conversation-append",
                {"content": "I adopted a greyhound called Pixel", "messageId": "m1", "speaker": "Ada"},
            )
            out["entry"] = await ok(
                "add_entry",
                {
                    "memoryId": "ada",
                    "summary": "Ada adopted a greyhound called Pixel",
                    "rawEntry": "I adopted a greyhound called Pixel",
                    "tags": ["pet", "pixel"],
                    "role": "user",
                    "messageId": "m1",
                    "vaultId": account_id,
                },
            )
            out["again"] = await ok(
                "add_entry",
                {
                    "memoryId": "ada",
                    "summary": "Ada adopted Pixel, a greyhound",
                    "rawEntry": "I adopted a greyhound called Pixel",
                    "messageId": "m1",
                },
            )
            out["second"] = await ok(
                "add_entry",
                {"memoryId": "ada", "summary": "Ada asked about dog food", "rawEntry": "What should Pixel eat?"},
            )
            out["list"] = await ok("list_entries", {"memoryId": "ada", "limit": 5})
            out["none"] = await ok("get_context", {"memoryId": "ada"})
            out["v1"] = await ok("put_context", {"memoryId": "ada", "content": "Ada has a greyhound, Pixel."})
            out["v2"] = await ok(
                "put_context", {"memoryId": "ada", "content": "Ada has a greyhound, Pixel; she asked about food."}
            )
            out["context"] = await ok("get_context", {"memoryId": "ada"})
            out["barrier"] = await ok("await_consistency", {"memoryId": "ada", "timeoutS": 20})
            out["search"] = await client.call_tool(
                "memory-search", {"query": "greyhound Pixel", "labels": ["MemoryEntry"], "minRelevance": 0}
            )
            out["vault"] = await client.call_tool("list_entries", {"memoryId": "ada", "vaultId": "someone-else"})
            out["vaults"] = [
                text(await client.call_tool(tool, {**args, "vaultId": vault}))
                for vault in (other_account, "no-such-account")
                for tool, args in (("get_context", {"memoryId": "ada"}), ("list_entries", {"memoryId": "ada"}))
            ]
            out["odd"] = [await client.call_tool(tool, args) for _, tool, args in _odd_arguments()]
            out["bad"] = await client.call_tool("list_entries", {"memoryId": "ada/../x"})
    return out


def test_memory_agent_tools_and_prompts_over_stdio(db, account, make_account, data_root: Path, tmp_path: Path) -> None:
    session = f"chat-{uuid.uuid4().hex[:8]}"
    env = child_env(data_root, ACCOUNT_ID=account.account_id, SESSION_ID=session)
    params = StdioServerParameters(
        command=CLI[0], args=[*CLI[1:], "mcp", "serve", "memory", "memory-agent"], env=env, cwd=str(REPO)
    )
    out = anyio.run(_drive, params, tmp_path / "server.log", account.account_id, make_account("other").account_id)

    tools = out["tools"]
    assert TOOLS <= set(tools)
    assert tools["list_entries"].annotations.read_only_hint and tools["get_context"].annotations.read_only_hint
    assert not tools["add_entry"].annotations.read_only_hint
    prompts = out["prompts"]
    assert set(prompts) == set(PROMPT_NAMES)
    assert all(p.description for p in prompts.values())
    [message] = out["prompt"].messages
    assert message.content.text == load_prompts()["context_prompt"]  # the agent reads what clients get

    entry, again, second = out["entry"], out["again"], out["second"]
    assert entry["created"] and entry["embedded"] and entry["seq"] == 0
    assert entry["message"] == out["turn"]["nodeId"]  # linked to the turn the server stored
    assert (again["entryId"], again["seq"], again["created"]) == (entry["entryId"], 0, False)
    assert second["seq"] == 1 and second["message"] is None
    rows = out["list"]["entries"]
    assert [r["seq"] for r in rows] == [1, 0]
    assert rows[1]["summary"] == "Ada adopted Pixel, a greyhound" and rows[1]["sessionId"] == session
    assert rows[1]["tags"] == []  # the re-added entry replaced the first one's fields

    assert out["none"] == {"memory": "ada", "found": False}
    assert (out["v1"]["version"], out["v2"]["version"]) == (1, 2)
    context = out["context"]
    assert context["found"] and context["version"] == 2 and "food" in context["content"]
    assert out["barrier"]["consistent"] and out["barrier"]["entries"] == 2
    assert entry["entryId"] in text(out["search"])

    assert out["vault"].is_error and text(out["vault"]).startswith("vaultId: ACCOUNT_ID is pinned")
    assert out["bad"].is_error and text(out["bad"]).startswith("memoryId: '/' is not allowed in a memory name")
    # another account's vault and one that does not exist get the same answer: nothing tells them apart
    assert len(set(out["vaults"])) == 1 and out["vaults"][0].startswith("vaultId: ACCOUNT_ID is pinned")
    for (field, tool, _), result in zip(_odd_arguments(), out["odd"], strict=True):
        answer = text(result)
        assert result.is_error and "\n" not in answer and f"{field}:" in answer, (tool, field, answer)
    stored = db.read(
        "MATCH (s:MemorySpace {accountId: $acc})-[:HAS_CONTEXT]->(c:MemoryContext) RETURN count(c) AS n",
        acc=account.account_id,
    )
    assert stored[0]["n"] == 2  # the old version is kept
