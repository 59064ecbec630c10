"""Discovery's negotiate step: each kept candidate's opportunity is settled by a negotiation
between the two members' agents before anyone is asked to accept it.

The opportunity is stored ``negotiating`` first (so it is visible at once), then a negotiation
starts on it with the evaluator's assessment as its seed; each side is ``personal`` when its
member's profile says their own agent takes the turns, else ``system``. System turns run here
and now, until the negotiation ends or parks a personal agent's turn for pickup. The outcome
moves the opportunity (pending with the agreed roles, rejected, or stalled); a parked one stays
``negotiating`` until the personal agent answers or the fallback takes its turn.

The call negotiates for ``MAXY_DISCOVERY_NEGOTIATE_S`` seconds at most (the orchestrator's park
window): once they are spent, each negotiation still needing a system turn (the one under way and
every one started after it) is left ``working`` for the negotiation sweep (``maxy serve``'s loop,
or ``maxy negotiations sweep``), and its summary says ``continuing``.

A rediscovered opportunity keeps its negotiation (it is reported, not started again); a latent
or draft one found again is negotiated now; a finished one (pending, accepted, rejected,
stalled, expired) is reported as it is.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ...config import Settings
from ...graph.write import GraphWriter
from ..members import negotiation_mode_of
from ..negotiation import Negotiations
from ..opportunities import get_opportunity
from ..view import MemberView
from .ranking import Ranked

NEGOTIABLE = frozenset({"latent", "draft", "negotiating"})
_SUMMARY = ("negotiationId", "state", "sourceKind", "candidateKind", "turnCount", "waitingMemberId", "outcome")


def seed_of(r: Ranked) -> dict[str, Any]:
    """The evaluator's assessment a negotiation starts from (the candidate plays ``valencyRole``)."""
    e = r.evaluation
    return {
        "score": e.score,
        "band": e.band,
        "reasoning": e.reasoning,
        "valencyRole": e.candidate_role,
        "sourceRole": r.source_role,
        "candidateRole": e.candidate_role,
    }


def _summary(described: dict[str, Any]) -> dict[str, Any]:
    out = {k: described[k] for k in _SUMMARY if described.get(k) is not None}
    if described["state"] == "working":  # left for the sweep: the budget ran out before its next turn
        out["continuing"] = True
    return out


def budget(seconds: float) -> Callable[[], bool]:
    """True once ``seconds`` have passed since this was called."""
    deadline = time.monotonic() + seconds
    return lambda: time.monotonic() >= deadline


def negotiate_kept(
    writer: GraphWriter,
    settings: Settings,
    ranked: list[Ranked],
    opportunities: dict[str, dict[str, Any]],
    *,
    trigger: str,
    query: str | None,
) -> dict[str, dict[str, Any]]:
    """Per candidate member: ``{"opportunity": as it stands now, "negotiation": its summary or
    None}``, each kept candidate's negotiation started (or found) and run as far as it goes
    within the ``MAXY_DISCOVERY_NEGOTIATE_S`` budget."""
    spent = budget(settings.MAXY_DISCOVERY_NEGOTIATE_S)
    admin = MemberView(writer.caller)
    engine = Negotiations(writer.db, writer.account, settings, embedder=writer.embedder)
    out: dict[str, dict[str, Any]] = {}
    for r in ranked:
        member = r.candidate.candidate_member_id
        opp = opportunities[member]
        oid = opp["opportunityId"]
        if opp.get("negotiationId"):
            described: dict[str, Any] | None = engine.describe(engine.load(opp["negotiationId"]))
        elif opp["status"] in NEGOTIABLE:
            described = engine.start(
                oid,
                seed=seed_of(r),
                source_kind=negotiation_mode_of(writer.db, admin, opp["sourceMemberId"]),
                candidate_kind=negotiation_mode_of(writer.db, admin, opp["candidateMemberId"]),
                trigger=trigger,
                discovery_query=query,
                out_of_time=spent,
            )
        else:
            described = None
        now = get_opportunity(writer.db, admin, oid) or opp
        out[member] = {
            "opportunity": {**now, "deduplicated": bool(opp.get("deduplicated"))},
            "negotiation": None if described is None else _summary(described),
        }
    return out
