"""The community's story end to end, with real MCP clients over both transports, against the real
Neo4j and the fake Messages API (tests/fake_anthropic.py):

Ada's agent is a stdio server pinned to her (``MEMBER_ID=ada``); Bob's personal agent talks to
``maxy serve`` over HTTP with an API key bound to him (``--member bob``). Each writes a profile
(Bob's says his own agent negotiates: ``negotiationMode: personal``), Ada opens a network and Bob
joins it, each records an intent (Ada seeking, Bob offering), and Ada discovers from her intent:
Bob is found, evaluated and kept, and the opportunity is negotiated at once - Ada's side by the
system negotiator (it proposes), Bob's turn parked for his agent. Bob's agent polls
``POST /api/agents/{keyId}/negotiations/pickup``, gets the turn, and answers it with
``respond_to_negotiation``: the negotiation ends accepted, the opportunity is pending with the
agreed roles, and Bob accepts it. Every step's trace events come back in the tool results
(``trace``) and as ``[trace]`` log lines of the server that ran them.
"""

from __future__ import annotations

import importlib
import json
import logging
import re
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from maxy.config import load_settings
from maxy.plugins.discovery import discover_plugins
from maxy.serving.app import create_app
from maxy.serving.keys import create_api_key
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.fake_anthropic import FakeAnthropic
from tests.local_http import serve_app
from tests.mcp.inprocess import stdio_inprocess
from tests.plugins_fixture.helpers import CLI, REPO, child_env, text

SEEKING = {"description": "Looking for a React engineer to co-found a gardening app", "type": "seeking"}
OFFERING = {"description": "I offer React engineering as a co-founder", "type": "offering"}


def _evaluate(request: dict[str, Any], prompt: str) -> dict[str, Any]:
    """The evaluator keeps Bob (should-meet, he can do this for Ada) and nobody else."""
    found = re.findall(r'<candidate n="(\d+)">\n<profile>\nname: (\w+)', prompt)
    return {
        "evaluations": [
            {"candidate": int(n), "score": 88 if name == "Bob" else 20, "reasoning": f"{name} builds", "role": "agent"}
            for n, name in found
        ]
    }


def _ada_turn(request: dict[str, Any], prompt: str) -> dict[str, Any]:
    """Ada's system negotiator opens: Bob would build (agent) what Ada needs (patient)."""
    return {"action": "propose", "reasoning": "Bob builds what Ada needs", "ownUser": "patient", "otherUser": "agent"}


def _types(trace: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in trace]


@pytest.fixture()
def fake(monkeypatch):
    importlib.import_module("anthropic")
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        fake.tool_inputs |= {"evaluate_opportunities": _evaluate, "negotiation_turn": _ada_turn}
        yield fake


def test_two_members_agents_from_intents_to_an_accepted_opportunity(
    db, account, data_root: Path, tmp_path: Path, fake, caplog
) -> None:
    caplog.set_level(logging.INFO, logger="maxy")
    bob_key, bob_record = create_api_key(data_root, account.account_id, role="admin", member_id="bob")
    settings = load_settings(DATA_ROOT=data_root, ANTHROPIC_API_KEY="test-key")
    ada_env = child_env(
        data_root,
        ACCOUNT_ID=account.account_id,
        MEMBER_ID="ada",
        ANTHROPIC_API_KEY="test-key",
        ANTHROPIC_BASE_URL=fake.url,
    )
    ada_params = StdioServerParameters(
        command=CLI[0], args=[*CLI[1:], "mcp", "serve", "community"], env=ada_env, cwd=str(REPO)
    )
    ada_log = tmp_path / "ada-server.log"
    steps: dict[str, Any] = {}

    async def story(base: str) -> None:
        async with AsyncExitStack() as stack:
            errlog = stack.enter_context(ada_log.open("w"))
            ada = await stack.enter_async_context(Client(stdio_inprocess(ada_params, errlog=errlog), mode="legacy"))
            http = await stack.enter_async_context(
                httpx2.AsyncClient(headers={"Authorization": f"Bearer {bob_key}"}, timeout=httpx2.Timeout(30, read=120))
            )
            bob = await stack.enter_async_context(
                Client(streamable_http_client(base + "/mcp", http_client=http), mode="legacy")
            )

            async def call(client: Client, name: str, args: dict[str, Any]) -> dict[str, Any]:
                result = await client.call_tool(name, args)
                assert not result.is_error, f"{name}: {text(result)}"
                return result.structured_content or json.loads(text(result))

            steps["adaProfile"] = await call(
                ada, "create_user_profile", {"name": "Ada", "bio": "Founder of a gardening app", "skills": ["product"]}
            )
            steps["bobProfile"] = await call(
                bob,
                "create_user_profile",
                {"name": "Bob", "bio": "React engineer and serial co-founder", "negotiationMode": "personal"},
            )
            network = await call(ada, "create_network", {"name": "Builders", "joinPolicy": "anyone"})
            steps["network"] = network
            steps["joined"] = await call(bob, "join_network", {"networkId": network["networkId"]})
            steps["bobIntent"] = await call(bob, "create_intent", {"intents": [OFFERING], "discover": False})
            steps["adaIntent"] = await call(ada, "create_intent", {"intents": [SEEKING], "discover": False})
            (intent,) = steps["adaIntent"]["created"]
            steps["discovered"] = await call(ada, "discover_opportunities", {"intentId": intent["intentId"]})
            steps["bobWaiting"] = await call(bob, "list_negotiations", {"status": "waiting_for_agent"})

            pickup = f"{base}/api/agents/{bob_record.key_id}/negotiations/pickup"
            got = await http.post(pickup)
            steps["pickup"] = (got.status_code, got.json())
            again = await http.post(pickup)
            steps["pickupAgain"] = again.status_code
            nid = steps["pickup"][1]["negotiationId"]
            steps["answered"] = await call(
                bob,
                "respond_to_negotiation",
                {
                    "negotiationId": nid,
                    "action": "accept",
                    "reasoning": "Ada's app needs exactly the React work Bob offers",
                    "ownUser": "agent",
                    "otherUser": "patient",
                    "message": "Happy to talk",
                },
            )
            opp_id = steps["answered"]["opportunityId"]
            steps["adaSees"] = await call(ada, "get_opportunity", {"opportunityId": opp_id})
            steps["accepted"] = await call(bob, "accept_opportunity", {"opportunityId": opp_id})
            steps["acceptedAgain"] = await call(bob, "accept_opportunity", {"opportunityId": opp_id})
            steps["adaList"] = await call(ada, "list_opportunities", {"status": "accepted"})
            steps["negotiation"] = await call(ada, "get_negotiation", {"negotiationId": nid})

    with serve_app(create_app(discover_plugins(["community"]), settings)) as base:
        anyio.run(story, base)

    # profiles: Ada's system-negotiated, Bob's personal; the network both are in
    assert steps["adaProfile"]["memberId"] == "ada" and steps["bobProfile"]["memberId"] == "bob"
    assert steps["bobProfile"]["negotiationMode"] == "personal"
    assert steps["joined"]["memberId"] == "bob" and steps["joined"]["status"] == "active"
    assert [i["type"] for i in steps["bobIntent"]["created"]] == ["offering"]

    # discovery from Ada's intent finds Bob in the shared network and negotiates at once
    (found,) = steps["discovered"]["opportunities"]
    opportunity, waiting = found["opportunity"], found["negotiation"]
    assert (opportunity["sourceMemberId"], opportunity["candidateMemberId"]) == ("ada", "bob")
    assert opportunity["networkId"] == steps["network"]["networkId"] and opportunity["score"] == 88
    assert opportunity["status"] == "negotiating"
    assert (waiting["state"], waiting["waitingMemberId"]) == ("waiting_for_agent", "bob")
    assert (waiting["sourceKind"], waiting["candidateKind"]) == ("system", "personal")
    discovery_trace = _types(steps["discovered"]["trace"])
    for kind in ("graph_start", "graph_end", "negotiation_session_start", "negotiation_turn", "negotiation_outcome"):
        assert kind in discovery_trace, kind
    parked = [e for e in steps["discovered"]["trace"] if e["type"] == "negotiation_outcome"]
    assert parked[-1]["outcome"] == "waiting_for_agent"
    assert [n["negotiationId"] for n in steps["bobWaiting"]["negotiations"]] == [waiting["negotiationId"]]

    # Bob's personal agent picks the turn up over HTTP (nothing else waits), then answers it
    status, turn = steps["pickup"]
    assert status == 200 and turn["negotiationId"] == waiting["negotiationId"]
    assert (turn["turnNumber"], turn["side"], turn["counterpartyAction"]) == (2, "candidate", "propose")
    assert turn["ownUser"]["name"] == "Bob" and turn["otherUser"]["name"] == "Ada"
    assert steps["pickupAgain"] == 204
    answered = steps["answered"]
    assert answered["state"] == "completed" and answered["turnCount"] == 2
    assert [t["action"] for t in answered["turns"]] == ["propose", "accept"]
    assert answered["turns"][1]["by"] == "personal" and answered["turns"][1]["message"] == "Happy to talk"
    outcome = answered["outcome"]
    assert outcome["hasOpportunity"] is True and outcome["status"] == "pending"
    assert {r["memberId"]: r["role"] for r in outcome["agreedRoles"]} == {"ada": "patient", "bob": "agent"}
    assert _types(answered["trace"]) == ["negotiation_turn", "negotiation_outcome", "negotiation_session_end"]
    assert answered["trace"][1]["outcome"] == "accepted"

    # the opportunity: pending with the agreed roles, then accepted by Bob (a repeat changes nothing)
    assert steps["adaSees"]["status"] == "pending" and steps["adaSees"]["negotiationId"] == waiting["negotiationId"]
    assert steps["accepted"]["status"] == "accepted" and steps["accepted"]["changed"] is True
    assert steps["acceptedAgain"]["changed"] is False
    assert [o["opportunityId"] for o in steps["adaList"]["opportunities"]] == [opportunity["opportunityId"]]
    assert steps["negotiation"]["state"] == "completed" and steps["negotiation"]["outcome"] == outcome

    # the log lines: Ada's stdio server ran the discovery and her side; maxy serve ran Bob's
    ada_lines = ada_log.read_text()
    for line in (
        "[trace] type=negotiation_session_start",
        "[trace] type=negotiation_turn",
        "[trace] type=negotiation_outcome",
        "[negotiation] op=park",
    ):
        assert line in ada_lines, line
    assert "Traceback" not in ada_lines
    served = caplog.text
    assert f"[negotiation] op=pickup member=bob agent={bob_record.key_id[:8]}" in served
    for line in ("[trace] type=negotiation_turn", "outcome=accepted", "[trace] type=negotiation_session_end"):
        assert line in served, line
