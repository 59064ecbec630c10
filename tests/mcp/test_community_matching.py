"""From an intent to a negotiated opportunity through the community tools alone, over stdio with
real MCP clients and the fake Messages API: a member sets their negotiation mode on the profile,
create_intent matches the fresh intent at once (latent, not negotiated; discover=false records
only), discover_opportunities negotiates by default (the personal member's turn parked for its
agent), and that member's server answers the turn: the opportunity is pending."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
from maxy.community import MemberView, add_member, community_writer, create_network, upsert_profile
from maxy.community.intents import create_intents
from maxy.community.opportunities import get_opportunity
from maxy.config import load_settings
from maxy.graph.guards import Caller
from mcp import ClientSession, StdioServerParameters

from tests.fake_anthropic import FakeAnthropic
from tests.mcp.inprocess import stdio_inprocess
from tests.plugins_fixture.helpers import CLI, REPO, child_env, text


def _data(result: Any) -> dict[str, Any]:
    assert not result.is_error, text(result)
    return json.loads(text(result))


async def _calls(env: dict[str, str], errlog: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", "serve", "community"], env=env, cwd=str(REPO))
    with errlog.open("a") as err:
        async with stdio_inprocess(params, errlog=err) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return [_data(await s.call_tool(name, args)) for name, args in calls]


def _evaluate(request: dict, prompt: str) -> dict:
    found = re.findall(r'<candidate n="(\d+)">\n<profile>\nname: (\w+)', prompt)
    return {
        "evaluations": [
            {"candidate": int(n), "score": 86 if name == "Bob" else 20, "reasoning": f"{name} builds", "role": "agent"}
            for n, name in found
        ]
    }


def _turn(request: dict, prompt: str) -> dict:
    return {"action": "propose", "reasoning": "Bob builds what Ada needs", "ownUser": "patient", "otherUser": "agent"}


def test_an_intent_becomes_a_negotiated_opportunity_through_the_tools(
    db, account, embedder, data_root: Path, tmp_path: Path
) -> None:
    nokey = load_settings(ANTHROPIC_API_KEY="")
    w = community_writer(db, account, embedder, Caller(account.account_id), created_by="test")
    upsert_profile(w, "ada", name="Ada", bio="Founder of a gardening app", model=False, settings=nokey)
    upsert_profile(w, "bob", name="Bob", bio="React engineer and serial co-founder", model=False, settings=nokey)
    network = create_network(w, "ada", name="builders")["networkId"]
    add_member(w, None, network, "bob")
    offer = [{"description": "I offer React engineering as a co-founder", "type": "offering"}]
    create_intents(w, MemberView(w.caller, "bob"), nokey, intents=offer)
    log = tmp_path / "servers.log"
    with FakeAnthropic() as fake:
        fake.tool_inputs |= {"evaluate_opportunities": _evaluate, "negotiation_turn": _turn}
        keyed = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.url}
        bob_env = child_env(data_root, ACCOUNT_ID=account.account_id, MEMBER_ID="bob", **keyed)
        ada_env = child_env(data_root, ACCOUNT_ID=account.account_id, MEMBER_ID="ada", **keyed)
        (mode,) = anyio.run(_calls, bob_env, log, [("update_user_profile", {"negotiationMode": "personal"})])
        seeking = {"description": "Looking for a React co-founder", "type": "seeking"}
        made, quiet = anyio.run(
            _calls,
            ada_env,
            log,
            [
                ("create_intent", {"intents": [seeking]}),
                (
                    "create_intent",
                    {"intents": [{"description": "Seeking a gardener", "type": "seeking"}], "discover": False},
                ),
            ],
        )
        before = len(fake.requests)
        (intent,) = made["created"]
        (discovered,) = anyio.run(_calls, ada_env, log, [("discover_opportunities", {"intentId": intent["intentId"]})])
        turns = [r for r in fake.requests[before:] if r["body"]["tool_choice"]["name"] == "negotiation_turn"]
        waiting = discovered["opportunities"][0]["negotiation"]
        bob_turn = {
            "negotiationId": waiting["negotiationId"],
            "action": "accept",
            "reasoning": "Ada's app needs exactly this",
            "ownUser": "agent",
            "otherUser": "patient",
        }
        (answered,) = anyio.run(_calls, bob_env, log, [("respond_to_negotiation", bob_turn)])
    assert mode["negotiationMode"] == "personal" and mode["name"] == "Bob"
    # create_intent matched the fresh intent at once: bob, stored latent, not negotiated
    (matched,) = made["discovery"]
    assert matched["intentId"] == intent["intentId"]
    assert [(o["candidateMemberId"], o["score"], o["status"]) for o in matched["opportunities"]] == [
        ("bob", 86, "latent")
    ]
    assert "discovery" not in quiet and len(quiet["created"]) == 1
    # discover_opportunities negotiates by default: ada's system side proposed, bob's turn waits
    (found,) = discovered["opportunities"]
    assert found["opportunity"]["opportunityId"] == matched["opportunities"][0]["opportunityId"]
    assert found["opportunity"]["status"] == "negotiating" and len(turns) == 1
    assert (waiting["state"], waiting["waitingMemberId"], waiting["candidateKind"]) == (
        "waiting_for_agent",
        "bob",
        "personal",
    )
    assert answered["state"] == "completed" and answered["outcome"]["hasOpportunity"]
    pending = get_opportunity(db, MemberView(w.caller, "ada"), found["opportunity"]["opportunityId"])
    assert pending["status"] == "pending" and {r["memberId"]: r["role"] for r in pending["agreedRoles"]} == {
        "ada": "patient",
        "bob": "agent",
    }
