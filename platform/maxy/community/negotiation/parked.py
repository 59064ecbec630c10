"""Parked turns: a member's personal agent picks up its turn and answers it.

- ``pickup`` claims the member's longest-waiting turn: a compare-and-set from
  ``waiting_for_agent`` to ``claimed`` for the calling agent (its key id), cancelling the
  fallback timer and setting the 6-hour claim timer, in one transaction. Of two agents picking
  up at once exactly one gets a given turn; the other gets the next one, or nothing.
- ``respond`` records the agent's turn: a compare-and-set from ``claimed`` (by this agent) to
  ``working``, cancelling the claim timer; the negotiation then goes on (finalizes, runs the
  system side, or parks the other member's turn).
"""

from __future__ import annotations

from typing import Any

from ...errors import ValidationError
from ...logs import log_line, short
from ..view import MemberView
from . import state as st
from .engine import Negotiations
from .timers import due_at
from .turns import check_turn, next_side

MAX_TRIES = 8


class TurnConflict(ValidationError):
    """The negotiation is visible to the member but its state refuses the call (a 409): no turn of
    it is claimed by this agent, or it kept changing under every try."""


def _member_view(negotiations: Negotiations, member_id: str) -> MemberView:
    return MemberView(negotiations.caller, member_id)


def _claim(negotiations: Negotiations, n: st.Negotiation, agent_id: str) -> st.Negotiation:
    """Claim ``n``'s waiting turn for ``agent_id``: the fallback timer cancelled, the claim timer
    set (``st.Stale`` when it no longer waits)."""
    deadline = due_at(negotiations.now(), "claim")
    props = {
        "state": "claimed",
        "claimedBy": agent_id,
        "claimedAt": negotiations.now().isoformat(),
        "claimDeadline": deadline,
    }
    timers: dict[str, dict[str, Any]] = {
        "fallback": {"state": "cancelled"},
        "claim": {"state": "scheduled", "dueAt": deadline, "version": n.version + 1},
    }
    return st.change(negotiations.writer, n, states=frozenset({"waiting_for_agent"}), props=props, timers=timers)


def turn_context(negotiations: Negotiations, n: st.Negotiation) -> dict[str, Any]:
    """What the agent deliberates with: the turn, its deadline, the other side's last action,
    the history, both members' context and the seed assessment."""
    side = next_side(n.turns)
    other = "candidate" if side == "source" else "source"
    turns = n.turns
    return {
        "negotiationId": n.id,
        "opportunityId": n["opportunityId"],
        "turnNumber": len(turns) + 1,
        "side": side,
        "deadline": n["claimDeadline"],
        "counterpartyAction": turns[-1].action if turns else None,
        "history": [{"turn": i + 1, **t.as_dict()} for i, t in enumerate(turns)],
        "ownUser": negotiations._profile(n.members[side]),
        "otherUser": negotiations._profile(n.members[other]),
        "seedAssessment": n.seed,
        "networkId": n["networkId"],
        "discoveryQuery": n["discoveryQuery"],
        "turnCap": n.cap,
    }


def pickup(negotiations: Negotiations, member_id: str, agent_id: str) -> dict[str, Any] | None:
    """Claim the member's longest-waiting turn for ``agent_id``; None when none waits."""
    view = _member_view(negotiations, member_id)
    for _ in range(MAX_TRIES):
        waiting = st.oldest_waiting(negotiations.db, view, member_id)
        if not waiting:
            log_line("negotiation", op="pickup", member=member_id, agent=short(agent_id), claimed=None)
            return None
        for n in waiting:
            try:
                claimed = _claim(negotiations, n, agent_id)
            except st.Stale:
                continue  # another agent took it first: try the next one
            log_line("negotiation", op="pickup", member=member_id, agent=short(agent_id), claimed=short(n.id))
            negotiations._progress(claimed)
            return turn_context(negotiations, claimed)
    return None


def respond(
    negotiations: Negotiations, member_id: str, agent_id: str, negotiation_id: str, payload: dict[str, Any]
) -> dict[str, Any]:
    """Record the claiming agent's turn and go on; returns the negotiation's view."""
    view = _member_view(negotiations, member_id)
    for _ in range(MAX_TRIES):
        n = negotiations.load(negotiation_id, view)
        if n.state != "claimed" or n["claimedBy"] != agent_id or n["waitingMemberId"] != member_id:
            raise TurnConflict(
                "negotiationId",
                f"no turn of negotiation {negotiation_id!r} is claimed by this agent (it is {n.state}): "
                "pick one up first (POST /api/agents/<id>/negotiations/pickup)",
            )
        side = next_side(n.turns)
        turn = check_turn(
            payload,
            side=side,
            turn_index=len(n.turns),
            personal=True,
            by="personal",
            at=negotiations.now().isoformat(),
        )
        try:
            n = negotiations._record(
                n,
                turn,
                states=frozenset({"claimed"}),
                claimed_by=agent_id,
                timers={"claim": {"state": "cancelled"}},
            )
        except st.Stale:
            continue
        return negotiations.describe(negotiations.advance(n.id))
    raise TurnConflict("negotiationId", "the negotiation keeps changing under this call: read it again")


def respond_as_member(
    negotiations: Negotiations, member_id: str, negotiation_id: str, payload: dict[str, Any]
) -> dict[str, Any]:
    """The member's own MCP server answering its turn (``respond_to_negotiation``): a turn one of
    the member's agents claimed is answered for that claim; a turn still waiting is claimed for
    the server (``member:<id>``) and answered in the same call."""
    view = _member_view(negotiations, member_id)
    n = negotiations.load(negotiation_id, view)
    if n.state == "waiting_for_agent" and n["waitingMemberId"] == member_id:
        try:
            n = _claim(negotiations, n, f"member:{member_id}")
        except st.Stale:
            n = negotiations.load(negotiation_id, view)
    return respond(negotiations, member_id, str(n["claimedBy"] or ""), negotiation_id, payload)
