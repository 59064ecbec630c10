"""The negotiation's pure rules: caps by who negotiates, turn validation, outcomes and agreed
roles as the design determines them, the conservative rule without a model, timers' due logic,
and the opportunity status table."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from maxy.community.negotiation.negotiator import Seat, rule_turn, seed_roles
from maxy.community.negotiation.timers import Timer, due, due_at
from maxy.community.negotiation.turns import Turn, check_turn, next_side, outcome, turn_cap
from maxy.community.opportunities.statuses import STATUSES, TRANSITIONS, allowed, check_transition
from maxy.errors import ValidationError

MEMBERS = {"source": "ada", "candidate": "bob"}


def _turn(side: str, action: str, own: str = "peer", other: str = "peer") -> Turn:
    return Turn(side, action, f"{side} {action}", own, other)


def _payload(action: str, own: str = "agent", other: str = "patient", **extra: object) -> dict:
    return {
        "action": action,
        "assessment": {"reasoning": "why", "suggestedRoles": {"ownUser": own, "otherUser": other}},
        **extra,
    }


def test_caps_by_who_negotiates() -> None:
    assert turn_cap("system", "system") == 6
    assert turn_cap("system", "personal") == 8
    assert turn_cap("personal", "system") == 8
    assert turn_cap("personal", "personal") is None
    with pytest.raises(ValidationError, match="^sourceKind: one of system, personal"):
        turn_cap("human", "system")


def test_turn_validation_names_the_field() -> None:
    t = check_turn(_payload("propose", message="hi"), side="source", turn_index=0, personal=False, by="system")
    assert (t.action, t.own_role, t.other_role, t.message) == ("propose", "agent", "patient", "hi")
    with pytest.raises(ValidationError, match="^action: 'counter' is not open here: the first turn proposes"):
        check_turn(_payload("counter"), side="source", turn_index=0, personal=True, by="personal")
    with pytest.raises(ValidationError, match="^action: 'propose' is not open here"):
        check_turn(_payload("propose"), side="candidate", turn_index=1, personal=True, by="personal")
    with pytest.raises(ValidationError, match="^action: 'question' is not open here: only a personal agent"):
        check_turn(_payload("question"), side="candidate", turn_index=1, personal=False, by="system")
    assert (
        check_turn(_payload("question"), side="candidate", turn_index=1, personal=True, by="personal").action
        == "question"
    )
    with pytest.raises(ValidationError, match="^assessment.suggestedRoles.ownUser: one of agent, patient, peer"):
        check_turn(_payload("accept", own="boss"), side="candidate", turn_index=1, personal=True, by="personal")
    with pytest.raises(ValidationError, match="^assessment.reasoning: a non-empty text is required"):
        bad = _payload("accept")
        bad["assessment"]["reasoning"] = " "
        check_turn(bad, side="candidate", turn_index=1, personal=True, by="personal")
    with pytest.raises(ValidationError, match="^score: not a field of a turn"):
        check_turn({**_payload("accept"), "score": 3}, side="candidate", turn_index=1, personal=True, by="personal")


def test_outcome_accept_takes_each_sides_own_role_from_its_last_turn() -> None:
    turns = [
        _turn("source", "propose", "patient", "agent"),
        _turn("candidate", "counter", "peer", "peer"),
        _turn("source", "counter", "peer", "agent"),
        _turn("candidate", "accept", "agent", "patient"),
    ]
    out = outcome(turns, 6, MEMBERS)
    assert out is not None
    assert out.as_dict() == {
        "hasOpportunity": True,
        "agreedRoles": [
            {"side": "source", "memberId": "ada", "role": "peer"},
            {"side": "candidate", "memberId": "bob", "role": "agent"},
        ],
        "reasoning": "candidate accept",
        "turnCount": 4,
        "status": "pending",
    }


def test_outcome_reject_cap_timeout_and_open() -> None:
    rejected = outcome([_turn("source", "propose"), _turn("candidate", "reject")], 6, MEMBERS)
    assert rejected is not None and (rejected.has_opportunity, rejected.status, rejected.reason) == (
        False,
        "rejected",
        None,
    )
    counters = [_turn("source", "propose")] + [_turn(s, "counter") for s in ["candidate", "source"] * 3]
    assert outcome(counters[:5], 6, MEMBERS) is None
    capped = outcome(counters[:6], 6, MEMBERS)
    assert capped is not None and (capped.status, capped.reason, capped.turn_count) == ("stalled", "turn_cap", 6)
    assert outcome(counters[:7], 8, MEMBERS) is None
    assert outcome(counters, None, MEMBERS) is None  # personal vs personal: no cap
    timed = outcome(counters, None, MEMBERS, timed_out=True)
    assert timed is not None and (timed.status, timed.reason) == ("stalled", "timeout")
    # an accept on the capping turn is an accept
    assert outcome([*counters[:5], _turn("source", "accept")], 6, MEMBERS).status == "pending"  # type: ignore[union-attr]


def test_sides_alternate() -> None:
    assert next_side([]) == "source"
    assert next_side([_turn("source", "propose")]) == "candidate"


def test_the_rule_without_a_model_is_conservative_and_says_so() -> None:
    seed = {"score": 92, "reasoning": "both build compilers", "valencyRole": "agent"}
    assert seed_roles("source", seed) == ("patient", "agent") and seed_roles("candidate", seed) == ("agent", "patient")
    first = rule_turn(Seat("source", {}, {}, seed, [], False), "no-key")
    assert (first.action, first.degraded, first.own_role) == ("propose", {"reason": "no-key"}, "patient")
    assert "no model answered (no-key)" in first.reasoning
    assert rule_turn(Seat("candidate", {}, {}, seed, [first], False), "no-key").action == "accept"
    weak = {**seed, "score": 75}
    assert rule_turn(Seat("candidate", {}, {}, weak, [first], False), "no-key").action == "reject"
    countered = [first, _turn("candidate", "counter")]
    assert rule_turn(Seat("source", {}, {}, seed, countered, False), "timeout").action == "reject"


def test_timers_fall_due_by_the_clock_they_are_given() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    fallback = Timer("n1", "fallback", "scheduled", due_at(now, "fallback"), 3)
    claim = Timer("n2", "claim", "scheduled", due_at(now, "claim"), 4)
    idle = Timer("n3", "timeout", "idle", None, None)
    cancelled = Timer("n4", "fallback", "cancelled", due_at(now, "claim"), 1)
    timers = [fallback, claim, idle, cancelled]
    assert due(timers, now + timedelta(hours=5, minutes=59)) == []
    assert due(timers, now + timedelta(hours=6)) == [claim]
    assert due(timers, now + timedelta(hours=24)) == [claim, fallback]


def test_opportunity_status_table() -> None:
    assert set(TRANSITIONS) == set(STATUSES)
    assert allowed("latent", "pending") and allowed("draft", "pending") and allowed("negotiating", "stalled")
    assert not allowed("accepted", "pending") and not allowed("latent", "accepted")
    with pytest.raises(
        ValidationError, match="^status: an opportunity cannot move from accepted to pending: accepted is final"
    ):
        check_transition("accepted", "pending")
    with pytest.raises(ValidationError, match="from latent it may move to draft, pending, negotiating, expired"):
        check_transition("latent", "accepted")
