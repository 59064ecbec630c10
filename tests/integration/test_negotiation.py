"""Negotiations against the real Neo4j and the fake Messages API (tests/fake_anthropic.py): the
outcome of every cap and terminal action, the conservative rule without a key, parked turns
picked up by two agents at once (exactly one wins), claim expiry, the fallback takeover, the
24-hour timeout, and a restart in the middle (nothing lost, nothing done twice)."""

from __future__ import annotations

import importlib
import json
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from maxy.community import trace
from maxy.community.negotiation import Negotiations, TurnConflict, pickup, respond, sweep
from maxy.community.opportunities import create_opportunity, get_opportunity
from maxy.community.view import MemberView
from maxy.config import load_settings
from maxy.errors import ValidationError
from maxy.graph.guards import Caller
from maxy.taskstore import TaskStore

from tests.cli_inprocess import maxy
from tests.fake_anthropic import FakeAnthropic
from tests.integration.negotiation_setup import SEED, ada_and_bob, opportunity


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture()
def llm(monkeypatch):
    importlib.import_module("anthropic")
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        yield fake


@pytest.fixture()
def clock() -> Clock:
    return Clock()


def _setup(db, account, embedder, clock, *, key: str = "test-key", **settings: Any) -> tuple[Negotiations, str]:
    opp_id = opportunity(db, account, embedder)
    negotiations = Negotiations(
        db, account, load_settings(ANTHROPIC_API_KEY=key, **settings), embedder=embedder, clock=clock
    )
    return negotiations, opp_id


def _script(fake: FakeAnthropic, actions: list[str]) -> None:
    """The model answers the system turns with ``actions`` in order."""
    queue = list(actions)

    def answer(request: dict[str, Any], prompt: str) -> dict[str, Any]:
        action = queue.pop(0)
        return {"action": action, "reasoning": f"model says {action}", "ownUser": "peer", "otherUser": "agent"}

    fake.tool_inputs["negotiation_turn"] = answer


def _task(db, account, task_id: str) -> dict[str, Any]:
    return TaskStore(db, Caller(account.account_id), account, None, community=True).get(task_id)


def _messages(db, account, session_id: str) -> list[dict[str, Any]]:
    return db.read(
        "MATCH (m:Message {accountId: $acc, sessionId: $sid}) RETURN m.messageId AS id, m.content AS content ORDER BY m.seq",
        acc=account.account_id,
        sid=session_id,
    )


def _agreed(outcome: dict[str, Any]) -> dict[str, str]:
    return {r["memberId"]: r["role"] for r in outcome["agreedRoles"]}


# ---------------------------------------------------------------------------------------
# system vs system: every terminal action and the cap
def test_system_accept_moves_the_opportunity_to_pending_with_the_agreed_roles(
    db, account, embedder, clock, llm
) -> None:
    negotiations, opp_id = _setup(db, account, embedder, clock)
    queue = [("propose", "patient", "agent"), ("counter", "agent", "patient"), ("accept", "peer", "peer")]

    def answer(request: dict[str, Any], prompt: str) -> dict[str, Any]:
        action, own, other = queue.pop(0)
        return {"action": action, "reasoning": f"because {action}", "ownUser": own, "otherUser": other}

    llm.tool_inputs["negotiation_turn"] = answer
    with trace.collecting() as events:
        out = negotiations.start(opp_id, seed=SEED)
    assert out["state"] == "completed"
    assert [t["action"] for t in out["turns"]] == ["propose", "counter", "accept"]
    assert [t["side"] for t in out["turns"]] == ["source", "candidate", "source"]
    # each side's ownUser from its own last turn: the source's accept, the candidate's counter
    assert out["outcome"]["hasOpportunity"] is True and out["outcome"]["turnCount"] == 3
    assert _agreed(out["outcome"]) == {"ada": "peer", "bob": "agent"}
    opp = get_opportunity(db, MemberView(Caller(account.account_id)), opp_id)
    assert opp is not None and opp["status"] == "pending" and opp["agreedRoles"] == out["outcome"]["agreedRoles"]
    # every turn a message of the negotiation's conversation; the outcome an artifact of its task
    messages = _messages(db, account, out["conversationSessionId"])
    assert [m["id"] for m in messages] == ["turn-1", "turn-2", "turn-3"]
    assert json.loads(messages[2]["content"].split(": ", 1)[1])["data"]["action"] == "accept"
    task = _task(db, account, out["taskId"])
    assert task["phase"] == "completed" and task["kind"] == "negotiation"
    assert [(a["kind"], a["ref"]) for a in task["artifacts"]] == [("negotiation-outcome", out["negotiationId"])]
    kinds = [e["type"] for e in events if e["type"].startswith("negotiation_")]
    assert kinds == [
        "negotiation_session_start",
        "negotiation_turn",
        "negotiation_turn",
        "negotiation_turn",
        "negotiation_outcome",
        "negotiation_session_end",
    ]
    assert [e["action"] for e in events if e["type"] == "negotiation_turn"] == ["propose", "counter", "accept"]


def test_system_reject_moves_the_opportunity_to_rejected(db, account, embedder, clock, llm) -> None:
    negotiations, opp_id = _setup(db, account, embedder, clock)
    _script(llm, ["propose", "reject"])
    out = negotiations.start(opp_id, seed=SEED)
    assert (out["outcome"]["hasOpportunity"], out["outcome"]["status"], out["outcome"]["turnCount"]) == (
        False,
        "rejected",
        2,
    )
    assert "reason" not in out["outcome"] and out["outcome"]["reasoning"] == "model says reject"
    assert get_opportunity(db, MemberView(Caller(account.account_id)), opp_id)["status"] == "rejected"  # type: ignore[index]


def test_system_vs_system_stalls_at_six_turns(db, account, embedder, clock, llm) -> None:
    negotiations, opp_id = _setup(db, account, embedder, clock)
    _script(llm, ["propose"] + ["counter"] * 5)
    out = negotiations.start(opp_id, seed=SEED)
    assert out["turnCount"] == 6 and out["outcome"]["reason"] == "turn_cap" and out["outcome"]["status"] == "stalled"
    assert len(llm.requests) == 6
    assert get_opportunity(db, MemberView(Caller(account.account_id)), opp_id)["status"] == "stalled"  # type: ignore[index]


def test_without_a_key_the_rule_decides_and_says_so(db, account, embedder, clock, monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    negotiations, opp_id = _setup(db, account, embedder, clock, key="")
    out = negotiations.start(opp_id, seed=SEED)  # 84: below must-meet, so the rule rejects
    assert [t["action"] for t in out["turns"]] == ["propose", "reject"]
    assert all(t["degraded"] == {"reason": "no-key"} for t in out["turns"])
    assert out["outcome"]["status"] == "rejected"


def test_a_model_answer_outside_the_rules_falls_back_to_the_rule(db, account, embedder, clock, llm) -> None:
    negotiations, opp_id = _setup(db, account, embedder, clock)
    llm.tool_inputs["negotiation_turn"] = lambda r, p: {
        "action": "question",
        "reasoning": "?",
        "ownUser": "peer",
        "otherUser": "peer",
    }
    out = negotiations.start(opp_id, seed={**SEED, "score": 95})
    assert [t["action"] for t in out["turns"]] == ["propose", "accept"]  # the rule: must-meet accepts
    assert out["turns"][1]["degraded"]["reason"] == "unreadable-answer"


# ---------------------------------------------------------------------------------------
# mixed: a personal candidate
def test_mixed_parks_the_personal_turn_and_the_claiming_agent_answers(db, account, embedder, clock, llm) -> None:
    negotiations, opp_id = _setup(db, account, embedder, clock)
    _script(llm, ["propose", "counter", "counter", "counter"])
    out = negotiations.start(opp_id, seed=SEED, candidate_kind="personal")
    assert out["state"] == "waiting_for_agent" and out["waitingMemberId"] == "bob" and out["turnCap"] == 8
    assert pickup(negotiations, "ada", "key-ada") is None  # not ada's turn
    turn = pickup(negotiations, "bob", "key-bob")
    assert turn is not None and (turn["turnNumber"], turn["counterpartyAction"], turn["side"]) == (
        2,
        "propose",
        "candidate",
    )
    assert turn["ownUser"]["name"] == "Bob" and turn["otherUser"]["name"] == "Ada" and turn["seedAssessment"] == SEED
    assert turn["deadline"] == (clock.now + timedelta(hours=6)).isoformat()
    assert pickup(negotiations, "bob", "key-bob-2") is None  # claimed: nothing else waits
    answer = {
        "action": "counter",
        "assessment": {"reasoning": "need dates", "suggestedRoles": {"ownUser": "agent", "otherUser": "patient"}},
    }
    with pytest.raises(TurnConflict, match="^negotiationId: no turn of negotiation .* is claimed by this agent"):
        respond(negotiations, "bob", "key-bob-2", out["negotiationId"], answer)
    with pytest.raises(ValidationError, match="^negotiationId: no negotiation"):
        respond(negotiations, "carol", "key-carol", out["negotiationId"], answer)
    with pytest.raises(ValidationError, match="^action: 'propose' is not open here"):
        respond(negotiations, "bob", "key-bob", out["negotiationId"], {**answer, "action": "propose"})
    after = respond(negotiations, "bob", "key-bob", out["negotiationId"], answer)
    assert after["state"] == "waiting_for_agent" and after["turnCount"] == 3  # the system countered, bob again
    for _ in range(2):  # bob counters, the system counters ... the cap of 8
        assert pickup(negotiations, "bob", "key-bob") is not None
        after = respond(negotiations, "bob", "key-bob", out["negotiationId"], answer)
    assert after["turnCount"] == 7 and after["state"] == "waiting_for_agent"
    assert pickup(negotiations, "bob", "key-bob") is not None
    final = respond(negotiations, "bob", "key-bob", out["negotiationId"], {**answer, "action": "question"})
    assert final["state"] == "completed" and final["outcome"]["reason"] == "turn_cap" and final["turnCount"] == 8
    assert [t["by"] for t in final["turns"]] == ["system", "personal"] * 4


def test_a_turn_that_keeps_changing_under_every_try_is_a_conflict(
    db, account, embedder, clock, llm, monkeypatch
) -> None:
    """A negotiation whose every write goes stale (another writer each time) is refused as a 409,
    never as the 404 of a negotiation the member cannot see."""
    from types import SimpleNamespace

    from maxy.community.negotiation import http as negotiation_http
    from maxy.community.negotiation import state as st

    negotiations, opp_id = _setup(db, account, embedder, clock)
    _script(llm, ["propose"])
    out = negotiations.start(opp_id, seed=SEED, candidate_kind="personal")
    assert pickup(negotiations, "bob", "key-bob") is not None

    def always_stale(*args: Any, **kwargs: Any) -> Any:
        raise st.Stale("moved")

    monkeypatch.setattr(negotiations, "_record", always_stale)
    body = {
        "action": "counter",
        "assessment": {"reasoning": "r", "suggestedRoles": {"ownUser": "agent", "otherUser": "patient"}},
    }
    record = SimpleNamespace(member_id="bob", key_id="key-bob")
    status, answer = negotiation_http.answer(negotiations, record, out["negotiationId"], json.dumps(body).encode())
    assert (status, answer) == (
        409,
        {"error": "negotiationId: the negotiation keeps changing under this call: read it again"},
    )
    assert negotiations.load(out["negotiationId"], MemberView(negotiations.caller, "bob")).state == "claimed"


def test_personal_accept_gives_the_opportunity(db, account, embedder, clock, llm) -> None:
    negotiations, opp_id = _setup(db, account, embedder, clock)
    _script(llm, ["propose"])
    out = negotiations.start(opp_id, seed=SEED, candidate_kind="personal")
    pickup(negotiations, "bob", "key-bob")
    accept = {
        "action": "accept",
        "assessment": {"reasoning": "yes", "suggestedRoles": {"ownUser": "agent", "otherUser": "patient"}},
        "message": "Happy to help",
    }
    final = respond(negotiations, "bob", "key-bob", out["negotiationId"], accept)
    assert final["outcome"]["hasOpportunity"] is True and _agreed(final["outcome"]) == {"ada": "peer", "bob": "agent"}
    assert final["turns"][1]["message"] == "Happy to help"


def test_two_agents_picking_up_at_once_exactly_one_wins(db, account, embedder, clock, llm) -> None:
    negotiations, opp_id = _setup(db, account, embedder, clock)
    _script(llm, ["propose"])
    out = negotiations.start(opp_id, seed=SEED, candidate_kind="personal")
    for round_ in range(3):
        barrier = threading.Barrier(2)
        results: dict[str, Any] = {}

        def agent(name: str, barrier: threading.Barrier = barrier, results: dict[str, Any] = results) -> None:
            other = Negotiations(db, account, negotiations.settings, embedder=embedder, clock=clock)
            barrier.wait()
            results[name] = pickup(other, "bob", name)

        threads = [threading.Thread(target=agent, args=(f"key-{round_}-{i}",)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        winners = [k for k, v in results.items() if v is not None]
        assert len(winners) == 1, results
        n = negotiations.load(out["negotiationId"])
        assert n.state == "claimed" and n["claimedBy"] == winners[0]
        clock.advance(hours=6, seconds=1)  # the claim expires: back in the queue for the next round
        sweep(negotiations)


# ---------------------------------------------------------------------------------------
# timers
def test_an_expired_claim_returns_to_the_queue_and_the_fallback_takes_the_turn(
    db, account, embedder, clock, llm
) -> None:
    negotiations, opp_id = _setup(db, account, embedder, clock)
    _script(llm, ["propose", "accept"])
    out = negotiations.start(opp_id, seed=SEED, candidate_kind="personal")
    nid = out["negotiationId"]
    assert pickup(negotiations, "bob", "key-bob") is not None
    clock.advance(hours=5, minutes=59)
    assert sweep(negotiations)["fired"] == []
    clock.advance(minutes=2)
    assert sweep(negotiations)["fired"] == [{"negotiationId": nid, "kind": "claim"}]
    n = negotiations.load(nid)
    assert n.state == "waiting_for_agent" and n["claimedBy"] is None
    late = {
        "action": "accept",
        "assessment": {"reasoning": "late", "suggestedRoles": {"ownUser": "agent", "otherUser": "patient"}},
    }
    with pytest.raises(TurnConflict):
        respond(negotiations, "bob", "key-bob", nid, late)  # the expired claim no longer answers
    clock.advance(hours=18)  # 24 hours after the turn was first parked: the system takes it
    result = sweep(negotiations)
    assert result["fired"] == [{"negotiationId": nid, "kind": "fallback"}]
    final = negotiations.describe(negotiations.load(nid))
    assert final["state"] == "completed" and [t["by"] for t in final["turns"]] == ["system", "fallback"]
    assert final["outcome"]["hasOpportunity"] is True
    assert sweep(negotiations)["fired"] == []  # nothing fires twice


def test_personal_vs_personal_has_no_cap_and_times_out_after_24_hours(db, account, embedder, clock, llm) -> None:
    negotiations, opp_id = _setup(db, account, embedder, clock)
    out = negotiations.start(opp_id, seed=SEED, source_kind="personal", candidate_kind="personal")
    nid = out["negotiationId"]
    assert out["turnCap"] is None and out["waitingMemberId"] == "ada" and llm.requests == []
    propose = {
        "action": "propose",
        "assessment": {"reasoning": "let's", "suggestedRoles": {"ownUser": "patient", "otherUser": "agent"}},
    }
    counter = {
        "action": "counter",
        "assessment": {"reasoning": "hm", "suggestedRoles": {"ownUser": "peer", "otherUser": "peer"}},
    }
    pickup(negotiations, "ada", "key-ada")
    respond(negotiations, "ada", "key-ada", nid, propose)
    for i in range(9):  # past any cap
        member = "bob" if i % 2 == 0 else "ada"
        assert pickup(negotiations, member, f"key-{member}") is not None
        state = respond(negotiations, member, f"key-{member}", nid, counter)
        clock.advance(hours=2)
    assert state["state"] == "waiting_for_agent" and state["turnCount"] == 10
    clock.advance(hours=6)  # 24 hours after the start
    assert {"negotiationId": nid, "kind": "timeout"} in sweep(negotiations)["fired"]
    final = negotiations.describe(negotiations.load(nid))
    assert final["outcome"]["reason"] == "timeout" and final["outcome"]["status"] == "stalled"
    assert get_opportunity(db, MemberView(Caller(account.account_id)), opp_id)["status"] == "stalled"  # type: ignore[index]


def test_a_restart_in_the_middle_loses_nothing_and_does_nothing_twice(
    db, account, embedder, clock, llm, monkeypatch
) -> None:
    negotiations, opp_id = _setup(db, account, embedder, clock)
    _script(llm, ["propose"])
    out = negotiations.start(opp_id, seed=SEED, candidate_kind="personal")
    nid = out["negotiationId"]
    assert pickup(negotiations, "bob", "key-bob") is not None
    del negotiations  # the process goes away with the turn claimed

    # a new process: the claimed turn is still there, and its agent answers it; the process dies
    # after recording the outcome, before updating the opportunity and the task
    restarted = Negotiations(db, account, load_settings(ANTHROPIC_API_KEY="test-key"), embedder=embedder, clock=clock)
    from maxy.community.negotiation import engine

    def crash(self: Any, n: Any) -> Any:
        raise RuntimeError("killed")

    monkeypatch.setattr(engine.Negotiations, "_finish", crash)
    accept = {
        "action": "accept",
        "assessment": {"reasoning": "ok", "suggestedRoles": {"ownUser": "agent", "otherUser": "patient"}},
    }
    with pytest.raises(RuntimeError):
        respond(restarted, "bob", "key-bob", nid, accept)
    monkeypatch.undo()
    n = restarted.load(nid)
    assert n.state == "finalizing" and len(n.turns) == 2
    assert get_opportunity(db, MemberView(Caller(account.account_id)), opp_id)["status"] == "negotiating"  # type: ignore[index]

    # a third process sweeps once the lease has lapsed: it finishes exactly once
    third = Negotiations(db, account, load_settings(ANTHROPIC_API_KEY="test-key"), embedder=embedder, clock=clock)
    assert sweep(third)["resumed"] == []  # still within the lease
    clock.advance(minutes=6)
    assert sweep(third)["resumed"] == [nid]
    assert sweep(third)["resumed"] == []
    final = third.describe(third.load(nid))
    assert final["state"] == "completed" and final["outcome"]["hasOpportunity"] is True
    assert [m["id"] for m in _messages(db, account, final["conversationSessionId"])] == ["turn-1", "turn-2"]
    task = _task(db, account, final["taskId"])
    assert task["phase"] == "completed" and len(task["artifacts"]) == 1 and len(task["attempts"]) == 1
    assert get_opportunity(db, MemberView(Caller(account.account_id)), opp_id)["status"] == "pending"  # type: ignore[index]
    assert len(llm.requests) == 1  # no turn was taken twice


def test_a_member_sees_only_negotiations_naming_them(db, account, embedder, clock, llm) -> None:
    negotiations, opp_id = _setup(db, account, embedder, clock)
    _script(llm, ["propose"])
    out = negotiations.start(opp_id, seed=SEED, candidate_kind="personal")
    caller = Caller(account.account_id)
    assert [n["negotiationId"] for n in negotiations.list(MemberView(caller, "bob"), waiting_only=True)] == [
        out["negotiationId"]
    ]
    assert negotiations.list(MemberView(caller, "ada"), waiting_only=True) == []
    assert negotiations.list(MemberView(caller, "carol")) == []
    with pytest.raises(ValidationError, match="^negotiationId: no negotiation"):
        negotiations.load(out["negotiationId"], MemberView(caller, "carol"))


def test_maxy_negotiations_sweep_fires_what_is_due_by_the_wall_clock(
    db, account, embedder, clock, llm, data_root
) -> None:
    """The timers were set by a clock months ago: the command, on the real clock, finds the claim
    expired and the fallback due, and the system negotiator finishes the turn."""

    from tests.plugins_fixture.helpers import child_env

    negotiations, opp_id = _setup(db, account, embedder, clock)
    _script(llm, ["propose", "accept"])
    out = negotiations.start(opp_id, seed=SEED, candidate_kind="personal")
    assert pickup(negotiations, "bob", "key-bob") is not None
    env = child_env(data_root, ACCOUNT_ID=account.account_id, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=llm.url)
    proc = maxy(["--quiet", "negotiations", "sweep", "--json"], env)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    nid = out["negotiationId"]
    assert summary["fired"] == [{"negotiationId": nid, "kind": "claim"}, {"negotiationId": nid, "kind": "fallback"}]
    final = negotiations.describe(negotiations.load(nid))
    assert final["state"] == "completed" and [t["by"] for t in final["turns"]] == ["system", "fallback"]


def test_a_members_own_server_answers_its_waiting_turn(db, account, embedder, clock, llm) -> None:
    from maxy.community.negotiation.parked import respond_as_member

    negotiations, opp_id = _setup(db, account, embedder, clock)
    _script(llm, ["propose"])
    nid = negotiations.start(opp_id, seed=SEED, candidate_kind="personal")["negotiationId"]
    reject = {
        "action": "reject",
        "assessment": {"reasoning": "no", "suggestedRoles": {"ownUser": "peer", "otherUser": "peer"}},
    }
    with pytest.raises(TurnConflict):
        respond_as_member(negotiations, "ada", nid, reject)  # not ada's turn
    out = respond_as_member(negotiations, "bob", nid, reject)
    assert out["outcome"]["status"] == "rejected" and out["turns"][1]["by"] == "personal"


def test_opportunities_send_accept_and_dedupe_against_an_accepted_pair(db, account, embedder) -> None:
    from maxy.community.opportunities import decide_opportunity, send_opportunity

    writer = ada_and_bob(db, account, embedder)
    args = {
        "source_member_id": "ada",
        "candidate_member_id": "bob",
        "network_id": "net-1",
        "score": 91,
        "reasoning": "fit",
        "source_role": "patient",
        "candidate_role": "agent",
    }
    opp = create_opportunity(writer, **args)
    assert opp["status"] == "latent" and opp["deduplicated"] is False
    assert create_opportunity(writer, **args)["opportunityId"] == opp["opportunityId"]  # the open one is reported
    caller = Caller(account.account_id)
    with pytest.raises(ValidationError, match="^opportunityId: only the member it was found for sends"):
        send_opportunity(writer, MemberView(caller, "bob"), opp["opportunityId"])
    with pytest.raises(ValidationError, match="^opportunityId: no opportunity"):
        send_opportunity(writer, MemberView(caller, "carol"), opp["opportunityId"])
    assert send_opportunity(writer, MemberView(caller, "ada"), opp["opportunityId"])["status"] == "pending"
    assert decide_opportunity(writer, MemberView(caller, "bob"), opp["opportunityId"], "accept")["status"] == "accepted"
    assert decide_opportunity(writer, MemberView(caller, "bob"), opp["opportunityId"], "accept")["changed"] is False
    again = create_opportunity(
        writer, **{**args, "source_member_id": "bob", "candidate_member_id": "ada", "network_id": "net-2"}
    )
    assert (
        again["deduplicated"] is True
        and again["opportunityId"] == opp["opportunityId"]
        and again["status"] == "accepted"
    )
