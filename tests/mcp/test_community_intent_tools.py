"""The intent and discovery tools over stdio with a real MCP client: a server pinned to a member
(MEMBER_ID) records that member's intents, reads them back, finds the member's opportunities in a
shared network through the fake Messages API, and refuses to act for anyone else exactly as for an
unknown member. Another member's server sees the intent only through the shared network."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
from maxy.community import add_member, community_writer, create_network, upsert_profile
from maxy.config import load_settings
from maxy.graph.guards import Caller
from mcp import ClientSession, StdioServerParameters

from tests.fake_anthropic import FakeAnthropic
from tests.mcp.inprocess import stdio_inprocess
from tests.plugins_fixture.helpers import CLI, REPO, child_env, text


def _data(result: Any) -> dict[str, Any]:
    assert not result.is_error, text(result)
    return json.loads(text(result))


async def _as_ada(env: dict[str, str], errlog: Path, network: str) -> dict[str, Any]:
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", "serve", "community"], env=env, cwd=str(REPO))
    with errlog.open("w") as err:
        async with stdio_inprocess(params, errlog=err) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            made = _data(
                await s.call_tool(
                    "create_intent",
                    {"intents": [{"description": "Looking for a React co-founder", "type": "seeking"}]},
                )
            )
            discovered = await s.call_tool(
                "discover_opportunities", {"query": "a React co-founder", "networkId": network}
            )
            return {
                "made": made,
                "read": _data(await s.call_tool("read_intents", {})),
                "discovered": _data(discovered),
                "discovered_meta": discovered.meta,
                "direct": _data(await s.call_tool("discover_opportunities", {"targetMemberId": "bob"})),
                "as_bob": await s.call_tool("create_intent", {"content": "I offer design", "memberId": "bob"}),
                "outsider": await s.call_tool("discover_opportunities", {"targetMemberId": "eve"}),
            }


async def _as(env: dict[str, str], errlog: Path, owner: str) -> dict[str, Any]:
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", "serve", "community"], env=env, cwd=str(REPO))
    with errlog.open("w") as err:
        async with stdio_inprocess(params, errlog=err) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return _data(await s.call_tool("read_intents", {"ownerMemberId": owner}))


def _evaluate(request: dict, prompt: str) -> dict:
    found = re.findall(r'<candidate n="(\d+)">\n<profile>\nname: (\w+)', prompt)
    return {
        "evaluations": [
            {
                "candidate": int(n),
                "score": 91 if name == "Bob" else 30,
                "reasoning": f"{name} builds React apps",
                "role": "agent",
            }
            for n, name in found
        ]
    }


def test_a_members_server_records_reads_and_discovers_for_that_member_only(
    db, account, embedder, data_root: Path, tmp_path: Path
) -> None:
    nokey = load_settings(ANTHROPIC_API_KEY="")
    w = community_writer(db, account, embedder, Caller(account.account_id), created_by="test")
    for member, name, bio in [
        ("ada", "Ada", "Founder of a gardening app"),
        ("bob", "Bob", "React engineer and serial co-founder"),
        ("eve", "Eve", "React engineer"),
    ]:
        upsert_profile(w, member, name=name, bio=bio, model=False, settings=nokey)
    network = create_network(w, "ada", name="builders")["networkId"]
    add_member(w, None, network, "bob")
    create_network(w, "eve", name="elsewhere")
    with FakeAnthropic() as fake:
        fake.tool_inputs["evaluate_opportunities"] = _evaluate
        env = child_env(
            data_root, ACCOUNT_ID=account.account_id, MEMBER_ID="ada", ANTHROPIC_API_KEY="", ANTHROPIC_BASE_URL=fake.url
        )
        out = anyio.run(_as_ada, env, tmp_path / "ada.log", network)
        keyed = env | {"ANTHROPIC_API_KEY": "test-key"}
        found = anyio.run(_as_ada_keyed, keyed, tmp_path / "ada-keyed.log", network)
    (made,) = out["made"]["created"]
    assert made["verified"] is False and out["made"]["degraded"] and out["made"]["memberId"] == "ada"
    assert made["networks"][0]["networkId"] == network
    assert [i["intentId"] for i in out["read"]["intents"]] == [made["intentId"]]
    assert out["discovered"]["scope"] == [network] and out["discovered"]["degraded"]
    assert {t["type"] for t in out["discovered"]["trace"]} >= {"graph_start", "graph_end"}
    # the same events in the result's MCP metadata, where a client reads them without the answer
    assert out["discovered_meta"]["maxy/trace"] == out["discovered"]["trace"]
    assert out["direct"]["path"] == "direct" and out["direct"]["considered"] == 1
    for refused in (out["as_bob"], out["outsider"]):
        assert refused.is_error and "you can see in this account" in text(refused)
    assert "no member 'bob'" in text(out["as_bob"]) and "no member 'eve'" in text(out["outsider"])
    assert [(o["candidateMemberId"], o["score"], o["band"]) for o in found["opportunities"]] == [
        ("bob", 91, "must-meet")
    ]
    # negotiated by default: the fake's unreadable turns leave the conservative rule, which
    # accepts a must-meet match, so it waits for the members' decision
    (negotiated,) = found["opportunities"]
    assert negotiated["opportunity"]["status"] == "pending" and negotiated["negotiation"]["state"] == "completed"
    assert "[discovery] op=discover member=ada" in (tmp_path / "ada.log").read_text()

    bob_env = child_env(data_root, ACCOUNT_ID=account.account_id, MEMBER_ID="bob", ANTHROPIC_API_KEY="")
    eve_env = child_env(data_root, ACCOUNT_ID=account.account_id, MEMBER_ID="eve", ANTHROPIC_API_KEY="")
    assert [i["intentId"] for i in anyio.run(_as, bob_env, tmp_path / "bob.log", "ada")["intents"]] == [
        made["intentId"]
    ]
    assert anyio.run(_as, eve_env, tmp_path / "eve.log", "ada")["intents"] == []


async def _as_ada_keyed(env: dict[str, str], errlog: Path, network: str) -> dict[str, Any]:
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", "serve", "community"], env=env, cwd=str(REPO))
    with errlog.open("w") as err:
        async with stdio_inprocess(params, errlog=err) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return _data(await s.call_tool("discover_opportunities", {"targetMemberId": "bob"}))
