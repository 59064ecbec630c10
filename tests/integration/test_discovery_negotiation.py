"""Discovery with negotiation against the real Neo4j and the fake_messages Messages API: a member's
negotiation mode on the profile; each kept candidate stored negotiating and negotiated at once
(system turns in-process, a personal member's turn parked for its agent); the outcome moves the
opportunity (pending with the agreed roles, rejected, stalled at the cap); a rediscovery keeps the
negotiation it has; without negotiation the opportunities stay latent."""

from __future__ import annotations

import re
from typing import Any

import pytest
from maxy.community import MemberView, add_member, community_writer, create_network, get_profile, upsert_profile
from maxy.community.discovery import discover_opportunities
from maxy.community.negotiation import Negotiations
from maxy.community.negotiation.parked import respond_as_member
from maxy.community.opportunities import get_opportunity
from maxy.errors import ValidationError
from maxy.graph.guards import Caller

from tests.fake_anthropic import FakeAnthropic


@pytest.fixture()
def writer(db, account, embedder):
    return community_writer(db, account, embedder, Caller(account.account_id), created_by="test")


def _evaluate(request: dict[str, Any], prompt: str) -> dict[str, Any]:
    found = re.findall(r'<candidate n="(\d+)">\n<profile>\nname: (\w+)', prompt)
    return {
        "evaluations": [
            {"candidate": int(n), "score": 88 if name == "Bob" else 30, "reasoning": f"{name} fits", "role": "agent"}
            for n, name in found
        ]
    }


@pytest.fixture()
def pair(writer, nokey, fake_messages):
    """ada and bob share network "builders"; the evaluator keeps bob (88, should-meet)."""
    upsert_profile(writer, "ada", name="Ada", bio="Founder building a React app", model=False, settings=nokey)
    upsert_profile(writer, "bob", name="Bob", bio="React engineer and co-founder", model=False, settings=nokey)
    network = create_network(writer, "ada", name="builders")["networkId"]
    add_member(writer, None, network, "bob")
    fake_messages.tool_inputs["evaluate_opportunities"] = _evaluate
    return network


def _script(fake_messages: FakeAnthropic, actions: list[str]) -> list[str]:
    """The system negotiator answers with ``actions`` in order; returns the sides it spoke for."""
    queue, sides = list(actions), []

    def answer(request: dict[str, Any], prompt: str) -> dict[str, Any]:
        sides.append(re.search(r"You speak for the (\w+) side", prompt).group(1))  # type: ignore[union-attr]
        action = queue.pop(0) if queue else "counter"
        own = "patient" if sides[-1] == "source" else "agent"
        other = "agent" if own == "patient" else "patient"
        return {"action": action, "reasoning": f"model says {action}", "ownUser": own, "otherUser": other}

    fake_messages.tool_inputs["negotiation_turn"] = answer
    return sides


def _discover(writer, settings, **kwargs: Any) -> dict[str, Any]:
    return discover_opportunities(
        writer, MemberView(writer.caller, "ada"), settings, target_member_id="bob", query="a React co-founder", **kwargs
    )


def test_the_negotiation_mode_is_on_the_profile(writer, db, nokey):
    made = upsert_profile(writer, "ada", name="Ada", model=False, settings=nokey)
    assert made["negotiationMode"] == "system"
    upsert_profile(writer, "ada", name="Ada", negotiation_mode="personal", model=False, settings=nokey)
    again = upsert_profile(writer, "ada", name="Ada Lovelace", model=False, settings=nokey)  # kept when not given
    assert again["negotiationMode"] == "personal"
    assert get_profile(db, MemberView(writer.caller, "ada"), "ada")["negotiationMode"] == "personal"
    upsert_profile(writer, "ada", name="Ada", negotiation_mode="system", model=False, settings=nokey)
    assert get_profile(db, MemberView(writer.caller), "ada")["negotiationMode"] == "system"
    with pytest.raises(ValidationError, match="^negotiationMode: system .* personal .* got 'robot'"):
        upsert_profile(writer, "ada", name="Ada", negotiation_mode="robot", model=False, settings=nokey)


def test_both_systems_agree_and_the_opportunity_is_pending_with_the_agreed_roles(
    writer, db, pair, keyed, fake_messages
):
    sides = _script(fake_messages, ["propose", "accept"])
    out = _discover(writer, keyed, negotiate=True, trigger="orchestrator")
    assert out["negotiated"] and sides == ["source", "candidate"]
    (found,) = out["opportunities"]
    opp, negotiation = found["opportunity"], found["negotiation"]
    assert (opp["status"], opp["negotiationId"]) == ("pending", negotiation["negotiationId"])
    assert {r["memberId"]: r["role"] for r in opp["agreedRoles"]} == {"ada": "patient", "bob": "agent"}
    assert (negotiation["state"], negotiation["sourceKind"], negotiation["candidateKind"]) == (
        "completed",
        "system",
        "system",
    )
    assert negotiation["outcome"]["hasOpportunity"] and negotiation["turnCount"] == 2
    stored = Negotiations(db, writer.account, keyed).load(negotiation["negotiationId"])
    assert stored.seed["score"] == 88 and stored.seed["valencyRole"] == "agent" and stored["trigger"] == "orchestrator"
    assert stored["discoveryQuery"] == "a React co-founder"
    # the same discovery again reports the same negotiation; nothing is negotiated twice
    before = len(fake_messages.requests)
    again = _discover(writer, keyed, negotiate=True)
    (repeat,) = again["opportunities"]
    assert repeat["negotiation"]["negotiationId"] == negotiation["negotiationId"]
    assert repeat["opportunity"]["deduplicated"] and repeat["opportunity"]["status"] == "pending"
    assert [r["body"]["tool_choice"]["name"] for r in fake_messages.requests[before:]] == ["evaluate_opportunities"]


def test_a_rejection_and_a_stall_at_the_cap_move_the_opportunity(writer, db, pair, keyed, fake_messages):
    _script(fake_messages, ["propose", "reject"])
    (rejected,) = _discover(writer, keyed, negotiate=True)["opportunities"]
    assert rejected["opportunity"]["status"] == "rejected"
    assert rejected["negotiation"]["outcome"]["hasOpportunity"] is False
    assert get_opportunity(db, MemberView(writer.caller, "bob"), rejected["opportunity"]["opportunityId"])[
        "status"
    ] == ("rejected")

    # a fresh pair in another network: the two systems counter until the cap of 6
    upsert_profile(writer, "cyd", name="Bob", bio="Another React engineer", model=False)
    other = create_network(writer, "ada", name="second")["networkId"]
    add_member(writer, None, other, "cyd")
    _script(fake_messages, ["propose"])
    out = discover_opportunities(
        writer, MemberView(writer.caller, "ada"), keyed, target_member_id="cyd", query="x", negotiate=True
    )
    (stalled,) = out["opportunities"]
    assert stalled["opportunity"]["status"] == "stalled"
    assert stalled["negotiation"]["turnCount"] == 6 and stalled["negotiation"]["outcome"]["reason"] == "turn_cap"


def test_a_personal_members_turn_is_parked_for_its_agent(writer, db, pair, keyed, fake_messages, nokey):
    upsert_profile(
        writer, "bob", name="Bob", bio="React engineer and co-founder", negotiation_mode="personal", model=False
    )
    sides = _script(fake_messages, ["propose"])
    (found,) = _discover(writer, keyed, negotiate=True)["opportunities"]
    negotiation = found["negotiation"]
    assert sides == ["source"]  # only ada's system turn ran; bob's waits for his agent
    assert (negotiation["state"], negotiation["waitingMemberId"], negotiation["candidateKind"]) == (
        "waiting_for_agent",
        "bob",
        "personal",
    )
    assert found["opportunity"]["status"] == "negotiating" and negotiation["turnCount"] == 1
    engine = Negotiations(db, writer.account, keyed)
    answered = respond_as_member(
        engine,
        "bob",
        negotiation["negotiationId"],
        {
            "action": "accept",
            "assessment": {"reasoning": "fits", "suggestedRoles": {"ownUser": "agent", "otherUser": "patient"}},
        },
    )
    assert answered["state"] == "completed"
    assert (
        get_opportunity(db, MemberView(writer.caller, "ada"), found["opportunity"]["opportunityId"])["status"]
        == "pending"
    )


def test_without_negotiation_they_stay_latent_and_a_later_negotiation_takes_them(writer, pair, keyed, fake_messages):
    (latent,) = _discover(writer, keyed, trigger="orchestrator")["opportunities"]
    assert latent["opportunity"]["status"] == "latent" and "negotiation" not in latent
    _script(fake_messages, ["propose", "accept"])
    (negotiated,) = _discover(writer, keyed, negotiate=True)["opportunities"]
    assert negotiated["opportunity"]["opportunityId"] == latent["opportunity"]["opportunityId"]
    assert negotiated["opportunity"]["status"] == "pending" and negotiated["negotiation"]["state"] == "completed"
    with pytest.raises(ValidationError, match="^negotiate: "):
        _discover(writer, keyed, negotiate=True, persist=False)
