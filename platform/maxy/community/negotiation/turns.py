"""Turns, caps and outcomes of a negotiation: pure functions over plain data.

A turn is one side's action (``propose`` first, then ``counter``, ``accept``, ``reject`` or,
for a personal agent, ``question``) with an assessment (reasoning, suggested roles for its own
member and the other one) and an optional message. ``accept`` and ``reject`` end the
negotiation; ``counter`` and ``question`` hand the turn to the other side. The cap on turns
depends on who negotiates: 6 between two system negotiators, 8 when one side is a member's
personal agent, none between two personal agents (a 24-hour timeout instead).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...errors import ValidationError

ACTIONS: tuple[str, ...] = ("propose", "counter", "accept", "reject", "question")
TERMINAL: frozenset[str] = frozenset({"accept", "reject"})
ROLES: tuple[str, ...] = ("agent", "patient", "peer")  # the evaluator's valency roles
KINDS: tuple[str, ...] = ("system", "personal")
SIDES: tuple[str, ...] = ("source", "candidate")
MAX_REASONING = 4_000
MAX_MESSAGE = 4_000
TIMEOUT_S = 24 * 3600  # personal vs personal: the safety valve instead of a cap
# The reverse of a valency role: the source of an opportunity whose candidate is the agent is its patient.
INVERSE_ROLE = {"agent": "patient", "patient": "agent", "peer": "peer"}


@dataclass(frozen=True)
class Turn:
    side: str  # source | candidate
    action: str
    reasoning: str
    own_role: str  # assessment.suggestedRoles.ownUser
    other_role: str  # assessment.suggestedRoles.otherUser
    message: str | None = None
    by: str = "system"  # system | personal | fallback (the system taking a personal agent's turn)
    degraded: dict[str, Any] | None = None  # the system negotiator without a model: {"reason": ...}
    at: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "side": self.side,
            "action": self.action,
            "assessment": {
                "reasoning": self.reasoning,
                "suggestedRoles": {"ownUser": self.own_role, "otherUser": self.other_role},
            },
            "by": self.by,
        }
        if self.message is not None:
            out["message"] = self.message
        if self.degraded is not None:
            out["degraded"] = self.degraded
        if self.at is not None:
            out["at"] = self.at
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Turn:
        roles = data["assessment"]["suggestedRoles"]
        return cls(
            side=data["side"],
            action=data["action"],
            reasoning=data["assessment"]["reasoning"],
            own_role=roles["ownUser"],
            other_role=roles["otherUser"],
            message=data.get("message"),
            by=data.get("by", "system"),
            degraded=data.get("degraded"),
            at=data.get("at"),
        )


def other_side(side: str) -> str:
    return "candidate" if side == "source" else "source"


def turn_cap(source_kind: str, candidate_kind: str) -> int | None:
    """6 system vs system, 8 mixed, None (no cap: the timeout) personal vs personal."""
    kinds = {check_kind(source_kind, "sourceKind"), check_kind(candidate_kind, "candidateKind")}
    if kinds == {"system"}:
        return 6
    if kinds == {"personal"}:
        return None
    return 8


def check_kind(value: object, field: str) -> str:
    if value not in KINDS:
        raise ValidationError(field, f"one of {', '.join(KINDS)} (got {value!r})")
    return str(value)


def allowed_actions(turn_index: int, personal: bool) -> tuple[str, ...]:
    """The actions open at ``turn_index`` (0-based): propose first and only first; question only
    for a personal agent."""
    if turn_index == 0:
        return ("propose",)
    return ("counter", "accept", "reject", "question") if personal else ("counter", "accept", "reject")


def _text(value: object, field: str, limit: int, *, required: bool) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(field, "a non-empty text is required" if required else "a non-empty text, or omit it")
    if len(value) > limit:
        raise ValidationError(field, f"at most {limit} characters (got {len(value)})")
    return value.strip()


def _role(value: object, field: str) -> str:
    if value not in ROLES:
        raise ValidationError(field, f"one of {', '.join(ROLES)} (got {value!r})")
    return str(value)


def check_turn(
    payload: dict[str, Any], *, side: str, turn_index: int, personal: bool, by: str, at: str | None = None
) -> Turn:
    """A turn from ``{action, assessment: {reasoning, suggestedRoles: {ownUser, otherUser}}, message?}``,
    or a ValidationError naming the field."""
    if not isinstance(payload, dict):
        raise ValidationError("body", "an object {action, assessment: {reasoning, suggestedRoles}, message?}")
    unknown = sorted(set(payload) - {"action", "assessment", "message"})
    if unknown:
        raise ValidationError(unknown[0], "not a field of a turn; the fields are action, assessment, message")
    action = payload.get("action")
    open_ = allowed_actions(turn_index, personal)
    if action not in open_:
        why = "the first turn proposes" if turn_index == 0 else f"turn {turn_index + 1} may {', '.join(open_)}"
        if action == "question" and not personal:
            why = "only a personal agent asks a question"
        raise ValidationError("action", f"{action!r} is not open here: {why}")
    assessment = payload.get("assessment")
    if not isinstance(assessment, dict):
        raise ValidationError("assessment", "an object {reasoning, suggestedRoles: {ownUser, otherUser}}")
    reasoning = _text(assessment.get("reasoning"), "assessment.reasoning", MAX_REASONING, required=True)
    roles = assessment.get("suggestedRoles")
    if not isinstance(roles, dict):
        raise ValidationError("assessment.suggestedRoles", f"an object {{ownUser, otherUser}}, each {', '.join(ROLES)}")
    own = _role(roles.get("ownUser"), "assessment.suggestedRoles.ownUser")
    other = _role(roles.get("otherUser"), "assessment.suggestedRoles.otherUser")
    message = _text(payload.get("message"), "message", MAX_MESSAGE, required=False)
    return Turn(side, str(action), str(reasoning), own, other, message, by=by, at=at)


@dataclass(frozen=True)
class Outcome:
    has_opportunity: bool
    agreed_roles: list[dict[str, str]]
    reasoning: str
    turn_count: int
    reason: str | None = None  # turn_cap | timeout when no terminal action ended it
    status: str = field(default="")  # the opportunity's next status: pending | rejected | stalled

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "hasOpportunity": self.has_opportunity,
            "agreedRoles": self.agreed_roles,
            "reasoning": self.reasoning,
            "turnCount": self.turn_count,
            "status": self.status,
        }
        if self.reason is not None:
            out["reason"] = self.reason
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Outcome:
        return cls(
            data["hasOpportunity"],
            list(data["agreedRoles"]),
            data["reasoning"],
            data["turnCount"],
            data.get("reason"),
            data.get("status", ""),
        )


def agreed_roles(turns: list[Turn], members: dict[str, str]) -> list[dict[str, str]]:
    """Each side's ``suggestedRoles.ownUser`` from its own last turn (the accept and the turn
    before it), as ``[{side, memberId, role}]`` in source, candidate order."""
    last: dict[str, Turn] = {}
    for t in turns:
        last[t.side] = t
    return [{"side": s, "memberId": members[s], "role": last[s].own_role} for s in SIDES if s in last]


def outcome(turns: list[Turn], cap: int | None, members: dict[str, str], *, timed_out: bool = False) -> Outcome | None:
    """The outcome once the negotiation is over, else None: the last action accept (an
    opportunity, pending) or reject (rejected); the cap reached (stalled, turn_cap); the timeout
    (stalled, timeout)."""
    count = len(turns)
    if turns and turns[-1].action == "accept":
        return Outcome(True, agreed_roles(turns, members), turns[-1].reasoning, count, status="pending")
    if turns and turns[-1].action == "reject":
        return Outcome(False, [], turns[-1].reasoning, count, status="rejected")
    if cap is not None and count >= cap:
        why = f"{count} turns reached the cap of {cap} without an accept or a reject"
        return Outcome(False, [], why, count, reason="turn_cap", status="stalled")
    if timed_out:
        why = f"24 hours passed after {count} turn(s) without an accept or a reject"
        return Outcome(False, [], why, count, reason="timeout", status="stalled")
    return None


def next_side(turns: list[Turn]) -> str:
    """Who speaks next: the source opens, then the sides alternate."""
    return "source" if not turns else other_side(turns[-1].side)
