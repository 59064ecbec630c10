"""Discovery's in-call negotiation has a time budget (MAXY_DISCOVERY_NEGOTIATE_S), against the real
Neo4j and the fake Messages API: the negotiations not over when it is spent are left working with
their lease ended, the answer lists them in ``continuing``, and the negotiation sweep carries them
to their outcome; each answer validates against discover_opportunities' output schema."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from maxy.community import MemberView, add_member, community_writer, create_network, upsert_profile
from maxy.community.discovery import discover_opportunities
from maxy.community.negotiation import Negotiations, sweep
from maxy.community.opportunities import get_opportunity
from maxy.config import load_settings
from maxy.graph.guards import Caller
from maxy_plugins.community.discovery_tools import Discovery

from tests.fake_anthropic import FakeAnthropic

SCORES = {"Bob": 92, "Cyd": 88}


@pytest.fixture()
def fake(monkeypatch):
    with FakeAnthropic(delay_s=1.0) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        yield server


@pytest.fixture()
def writer(db, account, embedder):
    return community_writer(db, account, embedder, Caller(account.account_id), created_by="test")


@pytest.fixture()
def members(writer, fake):
    """ada, bob and cyd share a network; the evaluator keeps bob (92) and cyd (88); each system
    side proposes (source) or accepts (candidate), so a negotiation takes two model calls."""
    nokey = load_settings(ANTHROPIC_API_KEY="")
    upsert_profile(writer, "ada", name="Ada", bio="Founder building a React app", model=False, settings=nokey)
    upsert_profile(writer, "bob", name="Bob", bio="React engineer and co-founder", model=False, settings=nokey)
    upsert_profile(writer, "cyd", name="Cyd", bio="React engineer, open to co-found", model=False, settings=nokey)
    network = create_network(writer, "ada", name="builders")["networkId"]
    add_member(writer, None, network, "bob")
    add_member(writer, None, network, "cyd")

    def evaluate(request: dict[str, Any], prompt: str) -> dict[str, Any]:
        found = re.findall(r'<candidate n="(\d+)">\n<profile>\nname: (\w+)', prompt)
        return {
            "evaluations": [
                {"candidate": int(n), "score": SCORES.get(name, 20), "reasoning": f"{name} fits", "role": "agent"}
                for n, name in found
            ]
        }

    def turn(request: dict[str, Any], prompt: str) -> dict[str, Any]:
        source = "You speak for the source side" in prompt
        return {
            "action": "propose" if source else "accept",
            "reasoning": "it serves both",
            "ownUser": "patient" if source else "agent",
            "otherUser": "agent" if source else "patient",
        }

    fake.tool_inputs["evaluate_opportunities"] = evaluate
    fake.tool_inputs["negotiation_turn"] = turn
    return network


def _turns(fake: FakeAnthropic) -> int:
    return sum(1 for r in fake.requests if (r["body"].get("tool_choice") or {}).get("name") == "negotiation_turn")


def _discover(writer, settings) -> dict[str, Any]:
    out = discover_opportunities(
        writer, MemberView(writer.caller, "ada"), settings, query="a React co-founder", negotiate=True
    )
    errors = list(Draft202012Validator(Discovery.model_json_schema()).iter_errors(json.loads(json.dumps(out))))
    assert not errors, errors
    return out


def _by_member(out: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {o["candidateMemberId"]: o for o in out["opportunities"]}


def test_a_spent_budget_leaves_every_negotiation_to_the_sweep(writer, db, members, fake):
    settings = load_settings(ANTHROPIC_API_KEY="test-key", MAXY_DISCOVERY_NEGOTIATE_S=0)
    out = _discover(writer, settings)
    found = _by_member(out)
    assert set(found) == {"bob", "cyd"} and _turns(fake) == 0  # nothing negotiated inside the call
    for o in found.values():
        assert o["opportunity"]["status"] == "negotiating"
        assert (o["negotiation"]["state"], o["negotiation"]["turnCount"]) == ("working", 0)
        assert o["negotiation"]["continuing"] is True
    assert sorted(out["continuing"]) == sorted(o["negotiation"]["negotiationId"] for o in found.values())

    engine = Negotiations(db, writer.account, settings)
    done = sweep(engine)
    assert sorted(done["resumed"]) == sorted(out["continuing"]) and _turns(fake) == 4
    for o in found.values():
        assert get_opportunity(db, MemberView(writer.caller, "ada"), o["opportunity"]["opportunityId"])["status"] == (
            "pending"
        )
        assert engine.load(o["negotiation"]["negotiationId"]).state == "completed"
    assert sweep(engine)["resumed"] == [] and _turns(fake) == 4  # each turn taken once


def test_the_budget_stops_before_the_next_model_call_and_the_rest_continue(writer, db, members, fake):
    settings = load_settings(ANTHROPIC_API_KEY="test-key", MAXY_DISCOVERY_NEGOTIATE_S=1.8)
    evaluate = fake.tool_inputs["evaluate_opportunities"]

    def slow_from_now(request: dict[str, Any], prompt: str) -> dict[str, Any]:
        fake.mode = "slow"  # every negotiation turn takes 1 s: bob's two fit in 1.8 s, cyd's do not
        return evaluate(request, prompt)

    fake.tool_inputs["evaluate_opportunities"] = slow_from_now
    out = _discover(writer, settings)
    found = _by_member(out)
    assert found["bob"]["negotiation"]["state"] == "completed" and found["bob"]["opportunity"]["status"] == "pending"
    assert "continuing" not in found["bob"]["negotiation"]
    cyd = found["cyd"]["negotiation"]
    assert (cyd["state"], cyd["continuing"], found["cyd"]["opportunity"]["status"]) == (
        "working",
        True,
        "negotiating",
    )
    assert out["continuing"] == [cyd["negotiationId"]] and _turns(fake) == 2

    fake.mode = "ok"
    engine = Negotiations(db, writer.account, settings)
    assert sweep(engine)["resumed"] == [cyd["negotiationId"]]
    assert engine.describe(engine.load(cyd["negotiationId"]))["outcome"]["hasOpportunity"] is True
    assert get_opportunity(db, MemberView(writer.caller, "cyd"), found["cyd"]["opportunity"]["opportunityId"])[
        "status"
    ] == ("pending")
