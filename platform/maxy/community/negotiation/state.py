"""A negotiation's state in the graph, and its one way to change: a compare-and-set.

    (:Negotiation {negotiationId, opportunityId, memberIds, sourceMemberId, candidateMemberId,
                   sourceKind, candidateKind, cap, state, version, turnsJson, turnCount, seedJson,
                   networkId, trigger, sessionId, taskId, attemptId, waitingMemberId, parkTurn,
                   parkedAt, firstParkedAt, claimedBy, claimedAt, claimDeadline, takeoverTurn,
                   timedOut, leaseUntil, outcomeJson, startedAt, endedAt})
      -[:HAS_TIMER]-> (:NegotiationTimer {timerId, negotiationId, memberIds, kind, state, dueAt, version})

``state`` is ``working`` (a process is taking a turn or finishing one; ``leaseUntil`` bounds it),
``waiting_for_agent`` (a turn parked for a member's personal agent), ``claimed`` (picked up by
``claimedBy``, an agent's key id), ``finalizing`` (the outcome is decided; the opportunity and
the task are being updated) or ``completed``. Every change names the state(s) and the version it
read: its transaction locks the node and compares both (and the claiming agent) before the write
primitive writes the new fields and the timers; a change that lost a race raises
:class:`Stale` and writes nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import neo4j

from ...errors import ValidationError
from ...graph.write import Edge, GraphWriter, NodeSpec
from ..view import MemberView, visible_member_clause
from .timers import KINDS, Timer, timer_id
from .turns import Outcome, Turn

LABEL = "Negotiation"
TIMER = "NegotiationTimer"
STATES = ("working", "waiting_for_agent", "claimed", "finalizing", "completed")
PARKED = frozenset({"waiting_for_agent", "claimed"})


class Stale(Exception):
    """The negotiation changed between the read and the lock: nothing was written."""


def no_negotiation(negotiation_id: object) -> ValidationError:
    """One refusal for a negotiation that is absent or not the caller's."""
    return ValidationError(
        "negotiationId", f"no negotiation {negotiation_id!r} you can see; list_negotiations shows yours"
    )


@dataclass(frozen=True)
class Negotiation:
    props: dict[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.props.get(key)

    @property
    def id(self) -> str:
        return str(self.props["negotiationId"])

    @property
    def state(self) -> str:
        return str(self.props["state"])

    @property
    def version(self) -> int:
        return int(self.props["version"])

    @property
    def turns(self) -> list[Turn]:
        return [Turn.from_dict(t) for t in json.loads(self.props.get("turnsJson") or "[]")]

    @property
    def members(self) -> dict[str, str]:
        return {"source": self.props["sourceMemberId"], "candidate": self.props["candidateMemberId"]}

    def kind(self, side: str) -> str:
        return str(self.props[f"{side}Kind"])

    @property
    def cap(self) -> int | None:
        cap = self.props.get("cap")
        return None if cap is None else int(cap)

    @property
    def seed(self) -> dict[str, Any]:
        return dict(json.loads(self.props.get("seedJson") or "{}"))

    @property
    def outcome(self) -> Outcome | None:
        raw = self.props.get("outcomeJson")
        return Outcome.from_dict(json.loads(raw)) if raw else None


def _read(db: Any, view: MemberView, var: str, match: str, rest: str, **params: Any) -> list[Any]:
    """``MATCH {match} WHERE <the view's guard on var> {rest}``."""
    guard = visible_member_clause(view, var, kind="pair")
    return list(db.read(f"MATCH {match} WHERE {guard.clause} {rest}", **params, **guard.params))


def _negotiations(db: Any, view: MemberView, match: str, rest: str, **params: Any) -> list[Negotiation]:
    """The negotiations ``n`` of ``_read``, ``rest`` ending in ``RETURN properties(n) AS p ...``."""
    return [Negotiation(dict(r["p"])) for r in _read(db, view, "n", match, rest, **params)]


def load(db: Any, view: MemberView, negotiation_id: str) -> Negotiation | None:
    if not isinstance(negotiation_id, str) or not negotiation_id:
        return None
    found = _negotiations(db, view, f"(n:{LABEL} {{nodeId: $id}})", "RETURN properties(n) AS p", id=negotiation_id)
    return found[0] if found else None


def timers(db: Any, view: MemberView, negotiation_id: str) -> list[Timer]:
    rows = _read(
        db,
        view,
        "t",
        f"(t:{TIMER} {{negotiationId: $id}})",
        "RETURN t.kind AS kind, t.state AS state, t.dueAt AS due, t.version AS version ORDER BY t.kind",
        id=negotiation_id,
    )
    return [Timer(negotiation_id, r["kind"], r["state"], r["due"], r["version"]) for r in rows]


def due_timers(db: Any, view: MemberView, now: str, limit: int = 200) -> list[Timer]:
    """Scheduled timers whose time has come at ``now``, the earliest first."""
    rows = _read(
        db,
        view,
        "t",
        f"(t:{TIMER})",
        "AND t.state = 'scheduled' AND datetime(t.dueAt) <= datetime($now) "
        "RETURN t.negotiationId AS id, t.kind AS kind, t.state AS state, t.dueAt AS due, t.version AS version "
        "ORDER BY datetime(t.dueAt), t.kind LIMIT $limit",
        now=now,
        limit=limit,
    )
    return [Timer(r["id"], r["kind"], r["state"], r["due"], r["version"]) for r in rows]


def lapsed(db: Any, view: MemberView, now: str, limit: int = 200) -> list[str]:
    """Negotiations left ``working`` or ``finalizing`` past their lease (a process stopped mid-step)."""
    rows = _read(
        db,
        view,
        "n",
        f"(n:{LABEL})",
        "AND n.state IN ['working', 'finalizing'] "
        "AND (n.leaseUntil IS NULL OR datetime(n.leaseUntil) <= datetime($now)) "
        "RETURN n.nodeId AS id ORDER BY n.startedAt LIMIT $limit",
        now=now,
        limit=limit,
    )
    return [r["id"] for r in rows]


def oldest_waiting(db: Any, view: MemberView, member_id: str, limit: int = 5) -> list[Negotiation]:
    """The member's parked turns, the longest waiting first."""
    return _negotiations(
        db,
        view,
        f"(n:{LABEL})",
        "AND n.state = 'waiting_for_agent' AND n.waitingMemberId = $m "
        "RETURN properties(n) AS p ORDER BY n.parkedAt, n.nodeId LIMIT $limit",
        m=member_id,
        limit=limit,
    )


def listing(db: Any, view: MemberView, *, waiting_for: str | None = None, limit: int = 50) -> list[Negotiation]:
    return _negotiations(
        db,
        view,
        f"(n:{LABEL})",
        "AND ($m IS NULL OR (n.state IN ['waiting_for_agent', 'claimed'] AND n.waitingMemberId = $m)) "
        "RETURN properties(n) AS p ORDER BY n.startedAt DESC, n.nodeId LIMIT $limit",
        m=waiting_for,
        limit=limit,
    )


def for_opportunity(db: Any, view: MemberView, opportunity_id: str) -> list[Negotiation]:
    """The opportunity's negotiations, oldest first (a stalled one may be negotiated again)."""
    return _negotiations(
        db,
        view,
        f"(n:{LABEL} {{opportunityId: $id}})",
        "RETURN properties(n) AS p ORDER BY n.startedAt, n.nodeId",
        id=opportunity_id,
    )


def create(writer: GraphWriter, props: dict[str, Any], timer_props: dict[str, dict[str, Any]]) -> None:
    """The Negotiation and its three timers, in one transaction."""
    nid = props["negotiationId"]
    specs = [NodeSpec([LABEL], props, node_id=nid)]
    for kind in KINDS:
        tid = timer_id(nid, kind)
        base = {"timerId": tid, "negotiationId": nid, "memberIds": props["memberIds"], "kind": kind, "state": "idle"}
        specs.append(
            NodeSpec([TIMER], {**base, **timer_props.get(kind, {})}, node_id=tid, edges=[Edge("HAS_TIMER", nid, "in")])
        )
    writer.write_many(specs, atomic=True)


def change(
    writer: GraphWriter,
    n: Negotiation,
    *,
    states: frozenset[str] | set[str],
    props: dict[str, Any],
    timers: dict[str, dict[str, Any]] | None = None,
    claimed_by: str | None = None,
) -> Negotiation:
    """Compare-and-set: write ``props`` (version + 1) and the ``timers``' fields only if the
    negotiation is still at ``n.version`` in one of ``states`` (and claimed by ``claimed_by``
    when given); else :class:`Stale`."""
    version = n.version

    def compare(tx: neo4j.ManagedTransaction) -> None:
        row = tx.run(
            f"MATCH (x:{LABEL} {{nodeId: $id}}) WHERE x.accountId = $acc SET x.nodeId = x.nodeId "
            "RETURN x.state AS state, x.version AS version, x.claimedBy AS claimedBy",
            id=n.id,
            acc=writer.account.account_id,
        ).single()
        if row is None or row["version"] != version or row["state"] not in states:
            raise Stale
        if claimed_by is not None and row["claimedBy"] != claimed_by:
            raise Stale

    new = {**props, "version": version + 1}
    specs = [NodeSpec([LABEL], new, node_id=n.id)]
    for kind, fields in (timers or {}).items():
        specs.append(NodeSpec([TIMER], fields, node_id=timer_id(n.id, kind)))
    writer.write_many(specs, before_write=compare)
    return Negotiation({**n.props, **{k: v for k, v in new.items()}})


def cancel_timer(writer: GraphWriter, negotiation_id: str, kind: str, version: int | None) -> bool:
    """Mark a timer that no longer applies (its negotiation moved on) cancelled, if it still is
    scheduled at ``version``."""
    tid = timer_id(negotiation_id, kind)

    def compare(tx: neo4j.ManagedTransaction) -> None:
        row = tx.run(
            f"MATCH (t:{TIMER} {{nodeId: $id}}) WHERE t.accountId = $acc SET t.nodeId = t.nodeId "
            "RETURN t.state AS state, t.version AS version",
            id=tid,
            acc=writer.account.account_id,
        ).single()
        if row is None or row["state"] != "scheduled" or row["version"] != version:
            raise Stale

    try:
        writer.write_many([NodeSpec([TIMER], {"state": "cancelled"}, node_id=tid)], before_write=compare)
    except Stale:
        return False
    return True
