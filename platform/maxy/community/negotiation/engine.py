"""The negotiation as a plain-Python state machine whose state lives in the graph (``state``).

    start -> [turn]* -> finalize
    turn:  the next side's system negotiator speaks, or a personal agent's turn is parked
           (waiting_for_agent) until it is picked up and answered (``parked``), or until the
           fallback timer hands it to the system negotiator

Every step reads the negotiation, decides from what is stored, and writes by compare-and-set,
so any process (the server, ``maxy negotiations sweep``, a restarted one) can continue any
negotiation: a turn is recorded once, its message appended once (by its turn number), the
outcome decided once, and the opportunity and the task updated once.

The conversation's messages and the task are written by the community (its writer, a community
task store), so they carry ``CommunityRecord``: no generic read (memory, search, conversations,
tasks, provenance) reaches them; ``get_negotiation`` shows the turns to the two members only.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from ...accounts import ValidatedAccount
from ...config import Settings
from ...conversations.append import append_turn
from ...db import Database
from ...embeddings.base import Embedder
from ...errors import ValidationError
from ...graph.allowlist import COMMUNITY_RECORD
from ...graph.guards import Caller, node_guard
from ...graph.write import NodeSpec
from ...logs import log_line, short
from .. import trace
from ..members import get_profile
from ..opportunities.records import LABEL as OPPORTUNITY
from ..opportunities.records import TRIGGERS, get_opportunity, move, no_opportunity
from ..opportunities.statuses import OUTCOME_STATUS
from ..view import MemberView, community_writer
from . import state as st
from .negotiator import Seat, take_turn
from .task import NegotiationTask
from .timers import Clock, due_at, system_clock
from .turns import Outcome, Turn, check_kind, next_side, outcome, turn_cap

LEASE_S = 300  # a working step not finished by then is taken over by the next sweep
MAX_STEPS = 64  # turns and retries one advance() takes at most (the caps end a negotiation long before)


class Negotiations:
    """Negotiations of one account, run by the system (the account's whole view)."""

    def __init__(
        self,
        db: Database,
        account: ValidatedAccount,
        settings: Settings,
        *,
        embedder: Embedder | None = None,
        clock: Clock = system_clock,
    ):
        self.db = db
        self.account = account
        self.settings = settings
        self.clock = clock
        self.caller = Caller(account.account_id)
        self.view = MemberView(self.caller)
        self.writer = community_writer(db, account, embedder, self.caller, created_by="negotiation")
        self.task = NegotiationTask(db, self.caller, account)

    # -- helpers ---------------------------------------------------------------------------
    def now(self) -> datetime:
        return self.clock()

    def _iso(self, delta_s: float = 0) -> str:
        return (self.now() + timedelta(seconds=delta_s)).isoformat()

    def load(self, negotiation_id: str, view: MemberView | None = None) -> st.Negotiation:
        n = st.load(self.db, view or self.view, negotiation_id)
        if n is None:
            raise st.no_negotiation(negotiation_id)
        return n

    def _profile(self, member_id: str) -> dict[str, Any]:
        return get_profile(self.db, self.view, member_id) or {"memberId": member_id}

    # -- start -----------------------------------------------------------------------------
    def start(
        self,
        opportunity_id: str,
        *,
        seed: dict[str, Any],
        source_kind: str = "system",
        candidate_kind: str = "system",
        trigger: str = "ambient",
        discovery_query: str | None = None,
        out_of_time: Callable[[], bool] | None = None,
    ) -> dict[str, Any]:
        """Open a negotiation on the opportunity (moved to negotiating) and run it as far as it
        goes without a personal agent; returns the negotiation's view.

        Idempotent per opportunity: a repeat while its negotiation is open carries on with that
        one, and a retry after a crash between the steps (opportunity moved, task made, node not
        yet written) reuses the task made for it, instead of opening a second one."""
        if trigger not in TRIGGERS:
            raise ValidationError("trigger", f"one of {', '.join(TRIGGERS)} (got {trigger!r})")
        opp = get_opportunity(self.db, self.view, opportunity_id)
        if opp is None:
            raise no_opportunity(opportunity_id)
        cap = turn_cap(check_kind(source_kind, "sourceKind"), check_kind(candidate_kind, "candidateKind"))
        if not isinstance(seed, dict):
            raise ValidationError("seed", "an object {score, reasoning, valencyRole}")
        earlier = st.for_opportunity(self.db, self.view, opportunity_id)
        if earlier and earlier[-1].state != "completed":
            last = earlier[-1]
            log_line(
                "negotiation", op="start", negotiation=short(last.id), opportunity=short(opportunity_id), reused=True
            )
            return self.describe(self.advance(last.id, out_of_time=out_of_time))
        # the n-th negotiation of an opportunity always gets the same id: a retry, or a start racing
        # this one, finds the task already made for it instead of leaving one behind
        nid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"maxy:negotiation:{opportunity_id}:{len(earlier)}"))
        source, candidate = opp["sourceMemberId"], opp["candidateMemberId"]
        moved = move(
            self.writer, self.view, opportunity_id, "negotiating", fields={"negotiationId": nid}, op="negotiate"
        )
        if moved.get("negotiationId") != nid:  # it was stored negotiating already (an orchestrator's discovery)
            self.writer.write(NodeSpec([OPPORTUNITY], {"negotiationId": nid}, node_id=opportunity_id))
        task_id, attempt_id = self.task.start(nid, opportunity_id, source, candidate)
        started = self._iso()
        props = {
            "negotiationId": nid,
            "opportunityId": opportunity_id,
            "memberIds": [source, candidate],
            "sourceMemberId": source,
            "candidateMemberId": candidate,
            "sourceKind": source_kind,
            "candidateKind": candidate_kind,
            "cap": cap,
            "state": "working",
            "version": 1,
            "turnsJson": "[]",
            "turnCount": 0,
            "seedJson": json.dumps(seed, default=str),
            "networkId": opp.get("networkId"),
            "trigger": trigger,
            "discoveryQuery": discovery_query,
            "sessionId": f"negotiation:{nid}",
            "taskId": task_id,
            "attemptId": attempt_id,
            "startedAt": started,
            "leaseUntil": self._iso(LEASE_S),
        }
        timers: dict[str, dict[str, Any]] = {}
        if cap is None:  # personal vs personal: the 24-hour safety valve
            timers["timeout"] = {"state": "scheduled", "dueAt": due_at(self.now(), "timeout"), "version": None}
        st.create(self.writer, props, timers)
        trace.event(
            "negotiation_session_start",
            opportunityId=opportunity_id,
            negotiationId=nid,
            negotiationConversationId=props["sessionId"],
            sourceMemberId=source,
            candidateMemberId=candidate,
            trigger=trigger,
            startedAt=started,
        )
        log_line("negotiation", op="start", negotiation=short(nid), opportunity=short(opportunity_id), cap=cap)
        self.advance(nid, out_of_time=out_of_time)
        return self.describe(self.load(nid))

    # -- the state machine -----------------------------------------------------------------
    def advance(self, negotiation_id: str, *, out_of_time: Callable[[], bool] | None = None) -> st.Negotiation:
        """Take every step that needs no personal agent: system turns, parking, finalizing.
        ``out_of_time`` is asked before each system turn: once true, the negotiation is left
        ``working`` with its lease ended, and the next sweep carries it on."""
        n = self.load(negotiation_id)
        for _ in range(MAX_STEPS):
            if n.state == "completed" or n.state in st.PARKED:
                return n
            if n.state == "finalizing":
                return self._finish(n)
            self._sync_messages(n)
            turns = n.turns
            done = outcome(turns, n.cap, n.members, timed_out=bool(n["timedOut"]))
            try:
                if done is not None:
                    return self._finish(self._finalize(n, done))
                side = next_side(turns)
                if n.kind(side) == "personal" and n["takeoverTurn"] != len(turns):
                    return self._park(n, side)
                if out_of_time is not None and out_of_time():
                    return self._leave_to_sweep(n)
                by = "fallback" if n.kind(side) == "personal" else "system"
                turn = self._system_turn(n, side, by)
                n = self._record(n, turn, states=frozenset({"working"}))
            except st.Stale:
                n = self.load(negotiation_id)  # another process moved it: decide again from what is stored
        return n

    def _leave_to_sweep(self, n: st.Negotiation) -> st.Negotiation:
        n = st.change(self.writer, n, states=frozenset({"working"}), props={"leaseUntil": self._iso()})
        log_line("negotiation", op="defer", negotiation=short(n.id), turn=len(n.turns) + 1)
        return n

    def _system_turn(self, n: st.Negotiation, side: str, by: str) -> Turn:
        turns = n.turns
        other = "candidate" if side == "source" else "source"
        seat = Seat(
            side,
            {"memberId": n.members[side], "profile": self._profile(n.members[side])},
            {"memberId": n.members[other], "profile": self._profile(n.members[other])},
            n.seed,
            turns,
            n.cap is not None and len(turns) + 1 >= n.cap,
        )
        turn = take_turn(self.settings, seat, at=self._iso())
        return Turn(
            turn.side,
            turn.action,
            turn.reasoning,
            turn.own_role,
            turn.other_role,
            turn.message,
            by,
            turn.degraded,
            turn.at,
        )

    def _record(
        self,
        n: st.Negotiation,
        turn: Turn,
        *,
        states: frozenset[str],
        claimed_by: str | None = None,
        timers: dict[str, dict[str, Any]] | None = None,
    ) -> st.Negotiation:
        turns = [*n.turns, turn]
        props = {
            "turnsJson": json.dumps([t.as_dict() for t in turns]),
            "turnCount": len(turns),
            "state": "working",
            "leaseUntil": self._iso(LEASE_S),
            "waitingMemberId": None,
            "claimedBy": None,
            "claimedAt": None,
            "claimDeadline": None,
        }
        n = st.change(self.writer, n, states=states, props=props, timers=timers, claimed_by=claimed_by)
        trace.event(
            "negotiation_turn",
            opportunityId=n["opportunityId"],
            negotiationId=n.id,
            turnIndex=len(turns) - 1,
            actor=turn.side,
            action=turn.action,
            by=turn.by,
            reasoning=turn.reasoning,
            message=turn.message,
            suggestedRoles={"ownUser": turn.own_role, "otherUser": turn.other_role},
        )
        log_line(
            "negotiation",
            op="turn",
            negotiation=short(n.id),
            turn=len(turns),
            side=turn.side,
            action=turn.action,
            by=turn.by,
        )
        self._sync_messages(n)
        return n

    def _sync_messages(self, n: st.Negotiation) -> None:
        """Append each recorded turn missing from the negotiation's conversation (by turn number)."""
        turns = n.turns
        if not turns:
            return
        guard = node_guard(self.caller, "m")
        rows = self.db.read(
            f"MATCH (m:Message:{COMMUNITY_RECORD} {{sessionId: $sid}}) WHERE {guard.clause} "
            "RETURN collect(m.messageId) AS ids",
            sid=n["sessionId"],
            **guard.params,
        )
        have = set(rows[0]["ids"]) if rows else set()
        for i, turn in enumerate(turns):
            mid = f"turn-{i + 1}"
            if mid in have:
                continue
            append_turn(
                self.writer,
                n["sessionId"],
                role="assistant",
                content=json.dumps({"kind": "data", "data": {"turn": i + 1, **turn.as_dict()}}),
                speaker=f"agent:{n.members[turn.side]}",
                timestamp=turn.at,
                message_id=mid,
            )

    def _park(self, n: st.Negotiation, side: str) -> st.Negotiation:
        count = len(n.turns)
        first = n["firstParkedAt"] if n["parkTurn"] == count and n["firstParkedAt"] else self._iso()
        fallback_due = (datetime.fromisoformat(first) + timedelta(seconds=24 * 3600)).isoformat()
        props = {
            "state": "waiting_for_agent",
            "waitingMemberId": n.members[side],
            "parkTurn": count,
            "parkedAt": self._iso(),
            "firstParkedAt": first,
            "leaseUntil": None,
        }
        timers = {"fallback": {"state": "scheduled", "dueAt": fallback_due, "version": n.version + 1}}
        n = st.change(self.writer, n, states=frozenset({"working"}), props=props, timers=timers)
        self._progress(n)
        trace.event(
            "negotiation_outcome",
            opportunityId=n["opportunityId"],
            negotiationId=n.id,
            outcome="waiting_for_agent",
            turnCount=count,
            waitingMemberId=n.members[side],
        )
        log_line("negotiation", op="park", negotiation=short(n.id), turn=count + 1, member=n.members[side])
        return n

    def _progress(self, n: st.Negotiation) -> None:
        self.task.progress(n["taskId"], n["attemptId"], {"state": n.state, "turnCount": n["turnCount"]})

    def _finalize(self, n: st.Negotiation, done: Outcome) -> st.Negotiation:
        props = {
            "state": "finalizing",
            "outcomeJson": json.dumps(done.as_dict()),
            "endedAt": self._iso(),
            "leaseUntil": self._iso(LEASE_S),
            "waitingMemberId": None,
        }
        off = {"state": "cancelled"}
        timers = {"fallback": off, "claim": off, "timeout": off}
        return st.change(self.writer, n, states=frozenset({"working"}), props=props, timers=timers)

    def _finish(self, n: st.Negotiation) -> st.Negotiation:
        """Move the opportunity and complete the task for the decided outcome (each once), then
        mark the negotiation completed."""
        done = n.outcome
        assert done is not None
        opp = get_opportunity(self.db, self.view, n["opportunityId"])
        target = done.status or OUTCOME_STATUS["stalled"]
        if opp is not None and opp["status"] in ("negotiating", target):
            fields: dict[str, Any] = {}
            if done.has_opportunity:
                fields["agreedRolesJson"] = json.dumps(done.agreed_roles)
            move(self.writer, self.view, n["opportunityId"], target, fields=fields, op="negotiated")
        elif opp is not None:
            log_line("negotiation", "skip", negotiation=short(n.id), reason="opportunity-moved", status=opp["status"])
        self.task.finish(n["taskId"], n["attemptId"], n.id, done)
        try:
            n = st.change(
                self.writer, n, states=frozenset({"finalizing"}), props={"state": "completed", "leaseUntil": None}
            )
        except st.Stale:
            return self.load(n.id)  # another process finished it
        started = datetime.fromisoformat(n["startedAt"]) if n["startedAt"] else self.now()
        trace.event(
            "negotiation_outcome",
            opportunityId=n["opportunityId"],
            negotiationId=n.id,
            outcome="accepted" if done.has_opportunity else (done.reason or "rejected"),
            turnCount=done.turn_count,
            reasoning=done.reasoning,
            agreedRoles=done.agreed_roles,
        )
        trace.event(
            "negotiation_session_end",
            opportunityId=n["opportunityId"],
            negotiationId=n.id,
            durationMs=int((self.now() - started).total_seconds() * 1000),
        )
        log_line(
            "negotiation",
            op="finalize",
            negotiation=short(n.id),
            status=done.status,
            turns=done.turn_count,
            reason=done.reason,
        )
        return n

    # -- views -----------------------------------------------------------------------------
    def describe(self, n: st.Negotiation) -> dict[str, Any]:
        out: dict[str, Any] = {
            "negotiationId": n.id,
            "opportunityId": n["opportunityId"],
            "state": n.state,
            "sourceMemberId": n["sourceMemberId"],
            "candidateMemberId": n["candidateMemberId"],
            "sourceKind": n["sourceKind"],
            "candidateKind": n["candidateKind"],
            "turnCap": n.cap,
            "turnCount": len(n.turns),
            "turns": [{"turn": i + 1, **t.as_dict()} for i, t in enumerate(n.turns)],
            "seedAssessment": n.seed,
            "conversationSessionId": n["sessionId"],
            "taskId": n["taskId"],
            "startedAt": n["startedAt"],
        }
        if n.state in st.PARKED:
            out["waitingMemberId"] = n["waitingMemberId"]
            out["fallbackAt"] = (
                (datetime.fromisoformat(n["firstParkedAt"]) + timedelta(seconds=24 * 3600)).isoformat()
                if n["firstParkedAt"]
                else None
            )
        if n.state == "claimed":
            out["claimDeadline"] = n["claimDeadline"]
        done = n.outcome
        if done is not None:
            out["outcome"] = done.as_dict()
            out["endedAt"] = n["endedAt"]
        return out

    def list(self, view: MemberView, *, waiting_only: bool = False, limit: int = 50) -> list[dict[str, Any]]:
        member = view.member_id if waiting_only else None
        if waiting_only and member is None:
            raise ValidationError("status", "waiting_for_agent lists a member's own turns: call it as a member")
        return [self.describe(n) for n in st.listing(self.db, view, waiting_for=member, limit=limit)]
