"""The system negotiator: one side's turn taken by the model (a forced ``negotiation_turn`` tool
call), or, when no model answers, by a conservative rule that says so.

The same negotiator speaks for either side: it gets its own member's context, the other
member's, the evaluator's seed assessment and the turns so far, and advocates for its own
member. Without a model it never weighs arguments it cannot read: it proposes on the first turn
(from the seed), accepts only a proposal the evaluator put in the must-meet band (90 or more),
and otherwise rejects; each such turn carries ``degraded: {reason}``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ...config import Settings
from ...llm import LLMUnavailable, messages_with_tools
from ...logs import log_line
from .. import trace
from ..models import model_for
from .turns import INVERSE_ROLE, ROLES, Turn, allowed_actions, check_turn

MUST_MEET = 90  # the evaluator's top band: the only score the rule accepts on its own
TOOL_NAME = "negotiation_turn"

SYSTEM = (
    "You negotiate for one member of a community (your member) whether a proposed match with another "
    "member genuinely serves your member. Advocate for your member's specific goals and constraints. "
    "Be honest: do not accept a match that does not serve your member, and do not reject out of "
    "stubbornness once the objections have been answered. Use the evaluator's seed assessment as a "
    "starting point, but judge for yourself. Roles: agent (does something for the other), patient "
    "(receives something from the other), peer (symmetric collaboration). Answer with the "
    f"{TOOL_NAME} tool."
)


@dataclass(frozen=True)
class Seat:
    """What the negotiator knows when it takes ``side``'s turn."""

    side: str
    own: dict[str, Any]  # the member it speaks for: memberId, profile
    other: dict[str, Any]
    seed: dict[str, Any]  # score, reasoning, valencyRole (the candidate's role)
    turns: list[Turn]
    final_turn: bool  # the cap ends the negotiation after this turn


def seed_roles(side: str, seed: dict[str, Any]) -> tuple[str, str]:
    """(own, other) roles the seed suggests for ``side``: the candidate plays the valency role."""
    valency = seed.get("valencyRole") if seed.get("valencyRole") in ROLES else "peer"
    candidate, source = str(valency), INVERSE_ROLE[str(valency)]
    return (source, candidate) if side == "source" else (candidate, source)


def rule_turn(seat: Seat, reason: str, at: str | None = None) -> Turn:
    """The conservative turn without a model (see the module docstring)."""
    own, other = seed_roles(seat.side, seat.seed)
    score = seat.seed.get("score")
    degraded = {"reason": reason}
    note = f"no model answered ({reason}): decided by the conservative rule"
    if not seat.turns:
        text = f"{note}; proposing on the evaluator's assessment: {seat.seed.get('reasoning') or 'no reasoning given'}"
        return Turn(seat.side, "propose", text, own, other, by="system", degraded=degraded, at=at)
    last = seat.turns[-1]
    if last.action == "propose" and isinstance(score, (int, float)) and score >= MUST_MEET:
        text = f"{note}; the evaluator scored this match {score} (must-meet band), so it is accepted as proposed"
        return Turn(seat.side, "accept", text, own, other, by="system", degraded=degraded, at=at)
    if last.action in ("counter", "question"):
        why = f"the other side's {last.action} cannot be answered without a model"
    else:
        why = f"the evaluator's score {score} is below the must-meet band ({MUST_MEET})"
    return Turn(seat.side, "reject", f"{note}; {why}", own, other, by="system", degraded=degraded, at=at)


def tool_schema(actions: tuple[str, ...]) -> dict[str, Any]:
    role = {"type": "string", "enum": list(ROLES)}
    return {
        "name": TOOL_NAME,
        "description": "Take your turn in the negotiation.",
        "input_schema": {
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": list(actions)},
                "reasoning": {"type": "string", "description": "Why you take this action, for your member."},
                "ownUser": {**role, "description": "The role your member should play."},
                "otherUser": {**role, "description": "The role the other member should play."},
                "message": {"type": "string", "description": "Optional note to the other side."},
            },
            "required": ["action", "reasoning", "ownUser", "otherUser"],
        },
    }


def prompt_for(seat: Seat) -> str:
    history = [t.as_dict() for t in seat.turns]
    parts = [
        f"<your_member>{json.dumps(seat.own, default=str)}</your_member>",
        f"<other_member>{json.dumps(seat.other, default=str)}</other_member>",
        f"<seed_assessment>{json.dumps(seat.seed, default=str)}</seed_assessment>",
        f"<turns>{json.dumps(history, default=str)}</turns>",
        f"You speak for the {seat.side} side, turn {len(seat.turns) + 1}.",
    ]
    if not seat.turns:
        parts.append("This is the first turn: present the case for the match (propose).")
    if seat.final_turn:
        parts.append("This is the last turn the cap allows: accept or reject unless a counter is truly needed.")
    return "\n".join(parts)


def take_turn(settings: Settings, seat: Seat, *, at: str | None = None) -> Turn:
    """The system negotiator's turn for ``seat.side``: the model's, or the rule's when it fails."""
    setting = model_for(settings, "negotiator")
    actions = allowed_actions(len(seat.turns), personal=False)
    with trace.agent("negotiator") as span:
        try:
            answer = messages_with_tools(
                settings,
                system=SYSTEM,
                prompt=prompt_for(seat),
                tool=tool_schema(actions),
                model=setting.model,
                max_tokens=setting.max_tokens,
                timeout=setting.timeout_s,
            )
            payload = {
                "action": answer.get("action"),
                "assessment": {
                    "reasoning": answer.get("reasoning"),
                    "suggestedRoles": {"ownUser": answer.get("ownUser"), "otherUser": answer.get("otherUser")},
                },
            }
            if answer.get("message"):
                payload["message"] = answer["message"]
            try:
                turn = check_turn(
                    payload, side=seat.side, turn_index=len(seat.turns), personal=False, by="system", at=at
                )
            except Exception as err:  # an answer outside the turn's rules is no answer
                raise LLMUnavailable(f"the model's turn is not valid ({err})") from None
        except LLMUnavailable as err:
            log_line("negotiation", "degraded", side=seat.side, reason=err.reason, error=str(err)[:160])
            turn = rule_turn(seat, err.reason, at=at)
        span.summary = turn.action
    return turn
