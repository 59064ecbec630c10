"""Opportunity records: a match between two members in a network, with its status.

    (:Opportunity {opportunityId, memberIds: [source, candidate], sourceMemberId, candidateMemberId,
                   networkId, score, reasoning, sourceRole, candidateRole, trigger, status, statusAt,
                   negotiationId?, agreedRolesJson?, sentBy?, sentAt?, decidedBy?, decidedAt?})

Every status change is a compare-and-set: the write's transaction locks the node and checks the
status it was read with before the write primitive sets the new one (``statuses.TRANSITIONS``);
a change that lost a race reads again. An opportunity is seen only by the two members it names
(the member guard's ``pair`` rule) and the account's admin.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import neo4j

from ...errors import ValidationError
from ...graph.validity import now_instant
from ...graph.write import GraphWriter, NodeSpec
from ...logs import log_line, short
from ..view import MemberView, visible_member_clause
from .statuses import FINISHED, OPEN, SENDABLE, check_status, check_transition

LABEL = "Opportunity"
TRIGGERS = ("ambient", "orchestrator")
ROLES = ("agent", "patient", "peer")
MAX_REASONING = 4_000
MAX_TRIES = 5
_FIELDS = (
    "opportunityId",
    "sourceMemberId",
    "candidateMemberId",
    "networkId",
    "score",
    "reasoning",
    "sourceRole",
    "candidateRole",
    "trigger",
    "status",
    "statusAt",
    "negotiationId",
    "agreedRolesJson",
    "sentBy",
    "sentAt",
    "decidedBy",
    "decidedAt",
    "createdAt",
)


class _Stale(Exception):
    """The status changed between the read and the lock."""


def no_opportunity(opportunity_id: object) -> ValidationError:
    """One refusal for an opportunity that is absent or not the caller's."""
    return ValidationError(
        "opportunityId", f"no opportunity {opportunity_id!r} you can see; list_opportunities shows yours"
    )


def _view(row: dict[str, Any]) -> dict[str, Any]:
    out = {k: row.get(k) for k in _FIELDS if row.get(k) is not None}
    roles = out.pop("agreedRolesJson", None)
    if roles is not None:
        out["agreedRoles"] = json.loads(roles)
    return out


def _returned(var: str = "o") -> str:
    return "{" + ", ".join(f"{k}: {var}.{k}" for k in _FIELDS) + "}"


def _check_member(value: object, field: str) -> str:
    from ..members import check_member_id

    return check_member_id(value, field)


def _read(db: Any, view: MemberView, match: str, rest: str, **params: Any) -> list[dict[str, Any]]:
    """The opportunities ``o`` of ``MATCH {match} WHERE <the view's guard> {rest}`` that the
    viewer sees, as views (``rest`` ends in ``RETURN {_returned()} AS o ...``)."""
    guard = visible_member_clause(view, "o", kind="pair")
    rows = db.read(f"MATCH {match} WHERE {guard.clause} {rest}", **params, **guard.params)
    return [_view(r["o"]) for r in rows]


def get_opportunity(db: Any, view: MemberView, opportunity_id: str) -> dict[str, Any] | None:
    """The opportunity, or None when it is absent or the viewer is neither of its members."""
    if not isinstance(opportunity_id, str) or not opportunity_id:
        return None
    found = _read(db, view, f"(o:{LABEL} {{nodeId: $id}})", f"RETURN {_returned()} AS o", id=opportunity_id)
    return found[0] if found else None


def list_opportunities(db: Any, view: MemberView, status: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
    """The viewer's opportunities (both directions), most recently changed first."""
    if status is not None:
        check_status(status)
    if not isinstance(limit, int) or not 1 <= limit <= 500:
        raise ValidationError("limit", f"a whole number from 1 to 500 (got {limit!r})")
    return _read(
        db,
        view,
        f"(o:{LABEL})",
        "AND ($status IS NULL OR o.status = $status) "
        f"RETURN {_returned()} AS o ORDER BY o.statusAt DESC, o.nodeId LIMIT $limit",
        status=status,
        limit=limit,
    )


def _existing(writer: GraphWriter, a: str, b: str, network_id: str) -> dict[str, Any] | None:
    """An accepted opportunity between ``a`` and ``b``, else an open one of ``a`` with ``b`` in
    the network."""
    found = _read(
        writer.db,
        MemberView(writer.caller),
        f"(o:{LABEL})",
        "AND $a IN o.memberIds AND $b IN o.memberIds "
        "AND (o.status = 'accepted' OR (o.status IN $open AND o.networkId = $net "
        "AND o.sourceMemberId = $a)) "
        f"RETURN {_returned()} AS o ORDER BY o.status = 'accepted' DESC, o.statusAt DESC LIMIT 1",
        a=a,
        b=b,
        net=network_id,
        open=sorted(OPEN),
    )
    return found[0] if found else None


def create_opportunity(
    writer: GraphWriter,
    *,
    source_member_id: str,
    candidate_member_id: str,
    network_id: str,
    score: float,
    reasoning: str,
    source_role: str,
    candidate_role: str,
    trigger: str = "ambient",
    status: str | None = None,
) -> dict[str, Any]:
    """A new opportunity (``latent`` for an ambient discovery, ``negotiating`` for the
    orchestrator's, unless ``status`` says), or the one already there: an accepted opportunity
    between the same two members, or an open one of the same source, candidate and network, is
    reported (``deduplicated``) instead of a second record."""
    source = _check_member(source_member_id, "sourceMemberId")
    candidate = _check_member(candidate_member_id, "candidateMemberId")
    if source == candidate:
        raise ValidationError("candidateMemberId", "an opportunity joins two different members")
    if not isinstance(network_id, str) or not network_id:
        raise ValidationError("networkId", "the network the two members share")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 100:
        raise ValidationError("score", f"a number from 0 to 100 (got {score!r})")
    if not isinstance(reasoning, str) or not reasoning.strip() or len(reasoning) > MAX_REASONING:
        raise ValidationError("reasoning", f"a non-empty text of at most {MAX_REASONING} characters")
    for name, role in (("sourceRole", source_role), ("candidateRole", candidate_role)):
        if role not in ROLES:
            raise ValidationError(name, f"one of {', '.join(ROLES)} (got {role!r})")
    if trigger not in TRIGGERS:
        raise ValidationError("trigger", f"one of {', '.join(TRIGGERS)} (got {trigger!r})")
    first = check_status(status) if status is not None else ("latent" if trigger == "ambient" else "negotiating")
    if first not in ("latent", "draft", "negotiating", "pending"):
        raise ValidationError(
            "status", f"a new opportunity starts latent, draft, negotiating or pending (got {first!r})"
        )
    found = _existing(writer, source, candidate, network_id)
    if found is not None:
        log_line(
            "opportunity",
            op="create",
            deduplicated=True,
            existing=short(found["opportunityId"]),
            status=found["status"],
        )
        return {**found, "deduplicated": True}
    opportunity_id = str(uuid.uuid4())
    at = now_instant()
    props = {
        "opportunityId": opportunity_id,
        "memberIds": [source, candidate],
        "sourceMemberId": source,
        "candidateMemberId": candidate,
        "networkId": network_id,
        "score": float(score),
        "reasoning": reasoning.strip(),
        "sourceRole": source_role,
        "candidateRole": candidate_role,
        "trigger": trigger,
        "status": first,
        "statusAt": at,
    }
    writer.write(NodeSpec([LABEL], props, node_id=opportunity_id))
    log_line("opportunity", op="create", opportunity=short(opportunity_id), status=first, score=round(score))
    return {**_view({**props, "createdAt": at}), "deduplicated": False}


def _locked_status(tx: neo4j.ManagedTransaction, account_id: str, opportunity_id: str) -> str | None:
    row = tx.run(
        f"MATCH (o:{LABEL} {{nodeId: $id}}) WHERE o.accountId = $acc SET o.nodeId = o.nodeId RETURN o.status AS s",
        id=opportunity_id,
        acc=account_id,
    ).single()
    return None if row is None else row["s"]


def move(
    writer: GraphWriter,
    view: MemberView,
    opportunity_id: str,
    to: str,
    *,
    allowed_from: frozenset[str] | None = None,
    fields: dict[str, Any] | None = None,
    op: str = "move",
) -> dict[str, Any]:
    """Move the opportunity to ``to`` (compare-and-set on its status). Moving to the status it
    already has changes nothing (a repeat of the same decision)."""
    check_status(to, "to")
    for _ in range(MAX_TRIES):
        current = get_opportunity(writer.db, view, opportunity_id)
        if current is None:
            raise no_opportunity(opportunity_id)
        status = current["status"]
        if status == to:
            return {**current, "changed": False}
        if allowed_from is not None and status not in allowed_from:
            raise ValidationError(
                "status", f"the opportunity is {status}; {op} needs it {' or '.join(sorted(allowed_from))}"
            )
        check_transition(status, to)

        def compare(tx: neo4j.ManagedTransaction, seen: str = status) -> None:
            if _locked_status(tx, writer.account.account_id, opportunity_id) != seen:
                raise _Stale

        props = {"status": to, "statusAt": now_instant(), **(fields or {})}
        try:
            writer.write_many([NodeSpec([LABEL], props, node_id=opportunity_id)], before_write=compare)
        except _Stale:
            continue
        log_line("opportunity", op=op, opportunity=short(opportunity_id), **{"from": status}, to=to)
        return {**current, **_view(props), "changed": True}
    raise ValidationError("opportunityId", "the opportunity keeps changing under this call: read it again and retry")


def send_opportunity(writer: GraphWriter, view: MemberView, opportunity_id: str) -> dict[str, Any]:
    """Promote a latent or draft opportunity to pending (its source member, or the admin)."""
    current = get_opportunity(writer.db, view, opportunity_id)
    if current is None:
        raise no_opportunity(opportunity_id)
    if view.member_id is not None and view.member_id != current["sourceMemberId"]:
        raise ValidationError("opportunityId", "only the member it was found for sends an opportunity")
    actor = view.member_id or "admin"
    fields = {"sentBy": actor, "sentAt": now_instant()}
    return move(writer, view, opportunity_id, "pending", allowed_from=SENDABLE, fields=fields, op="send")


def decide_opportunity(writer: GraphWriter, view: MemberView, opportunity_id: str, decision: str) -> dict[str, Any]:
    """Accept or reject a pending opportunity: one of its two members (or the admin) decides."""
    to = {"accept": "accepted", "reject": "rejected"}.get(decision)
    if to is None:
        raise ValidationError("decision", f"accept or reject (got {decision!r})")
    current = get_opportunity(writer.db, view, opportunity_id)
    if current is None:
        raise no_opportunity(opportunity_id)
    if current["status"] in FINISHED and current["status"] != to:
        raise ValidationError("status", f"the opportunity is already {current['status']}")
    fields = {"decidedBy": view.member_id or "admin", "decidedAt": now_instant()}
    return move(writer, view, opportunity_id, to, allowed_from=frozenset({"pending"}), fields=fields, op=decision)
