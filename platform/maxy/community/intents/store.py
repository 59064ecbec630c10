"""Intent nodes in the graph: written through the community's GraphWriter, read through the
member guard (``maxy.community.view``, kind ``intent``) AND-ed with the account guards.

An Intent is ``{intentId, memberId, description, type: seeking|offering, status: active|expired,
verified, speechAct, felicityAuthority, felicitySincerity, felicityClarity, entropy, source}``,
embedded by its description; it is in a network through ``(intent)-[:IN_NETWORK]->(network)``.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from ...db import Database
from ...errors import ValidationError
from ...graph.write import GraphWriter, NodeSpec
from ..view import MemberView, active_member, visible_member_clause
from .prompts import INTENT_TYPES

INTENT = "Intent"
STATUSES = ("active", "expired")
MAX_DESCRIPTION = 2000
MAX_LIST = 200
_FIELDS = (
    "intentId",
    "memberId",
    "description",
    "type",
    "status",
    "verified",
    "speechAct",
    "felicityAuthority",
    "felicitySincerity",
    "felicityClarity",
    "entropy",
    "source",
    "enrichedFrom",
    "createdAt",
    "updatedAt",
)


def new_intent_id() -> str:
    return "intent-" + uuid.uuid4().hex[:20]


def check_description(value: object, field: str = "description") -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(field, "an intent needs a description: one sentence saying what is sought or offered")
    text = " ".join(value.split())
    if len(text) > MAX_DESCRIPTION:
        raise ValidationError(field, f"at most {MAX_DESCRIPTION} characters; say it in one sentence")
    return text


def check_type(value: object, field: str = "type") -> str:
    if value not in INTENT_TYPES:
        raise ValidationError(field, f"{value!r} is not an intent type; use one of {', '.join(INTENT_TYPES)}")
    return str(value)


def unknown_intent(intent_id: object, field: str = "intentId") -> ValidationError:
    """The one refusal for an intent that does not exist or that the caller may not see or change."""
    return ValidationError(field, f"no intent {intent_id!r} you can see; read_intents lists them")


def write_intent(writer: GraphWriter, member_id: str, intent_id: str, properties: Mapping[str, Any]) -> dict[str, Any]:
    """Create or update one Intent of ``member_id`` (the caller checked who may)."""
    props = {**properties, "intentId": intent_id, "memberId": member_id}
    writer.write(NodeSpec([INTENT], props, node_id=intent_id))
    return {k: props.get(k) for k in _FIELDS if k not in ("createdAt", "updatedAt")}


def expire_intent(writer: GraphWriter, member_id: str, intent_id: str) -> None:
    writer.write(
        NodeSpec(
            [INTENT],
            {"intentId": intent_id, "memberId": member_id, "status": "expired", "expiredAt": _now()},
            node_id=intent_id,
        )
    )


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _row(props: Mapping[str, Any], networks: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    out = {k: props.get(k) for k in _FIELDS}
    if networks is not None:
        out["networks"] = networks
    return out


def _seen_network(view: MemberView) -> str:
    """Cypher: the assignment ``r`` to network ``net`` is live and the viewer is in that network
    (the admin sees every network)."""
    live = "r.unassignedAt IS NULL AND net.deletedAt IS NULL AND net.accountId = $g_accountId"
    return live if view.member_id is None else f"{live} AND {active_member('$m_viewer', 'net')}"


def read_intents(
    db: Database, view: MemberView, member_id: str | None = None, *, status: str | None = "active", limit: int = 50
) -> list[dict[str, Any]]:
    """The intents ``view`` may see (of ``member_id`` when given), most recent first, each with
    the networks it is assigned to that the viewer may see."""
    if status is not None and status not in STATUSES:
        raise ValidationError("status", f"{status!r} is not an intent status; use one of {', '.join(STATUSES)}")
    if not 1 <= limit <= MAX_LIST:
        raise ValidationError("limit", f"between 1 and {MAX_LIST}")
    guard = visible_member_clause(view, "i", kind="intent")
    rows = db.read(
        f"""
        MATCH (i:{INTENT}) WHERE {guard.clause}
          AND ($member IS NULL OR i.memberId = $member) AND ($status IS NULL OR i.status = $status)
        WITH i ORDER BY i.createdAt DESC, i.intentId LIMIT $limit
        OPTIONAL MATCH (i)-[r:IN_NETWORK]->(net:Network) WHERE {_seen_network(view)}
        WITH i, collect(CASE WHEN net IS NULL THEN null ELSE
          {{networkId: net.nodeId, name: net.name, score: r.score, method: r.method}} END) AS networks
        RETURN [k IN keys(i) WHERE k <> 'embedding' | [k, i[k]]] AS props, networks
        """,
        member=member_id,
        status=status,
        limit=limit,
        **guard.params,
    )
    return [_row(dict(r["props"]), [n for n in r["networks"] if n]) for r in rows]


def get_intent(db: Database, view: MemberView, intent_id: object, *, own: str | None = None) -> dict[str, Any]:
    """One intent the view may see (``own``: it must belong to that member), or the one refusal."""
    if not isinstance(intent_id, str) or not intent_id:
        raise unknown_intent(intent_id)
    guard = visible_member_clause(view, "i", kind="intent")
    rows = db.read(
        f"""
        MATCH (i:{INTENT} {{intentId: $id}}) WHERE {guard.clause} AND ($own IS NULL OR i.memberId = $own)
        OPTIONAL MATCH (i)-[r:IN_NETWORK]->(net:Network) WHERE {_seen_network(view)}
        WITH i, collect(CASE WHEN net IS NULL THEN null ELSE {{networkId: net.nodeId, score: r.score}} END) AS nets
        RETURN [k IN keys(i) WHERE k <> 'embedding' | [k, i[k]]] AS props, nets
        """,
        id=intent_id,
        own=own,
        **guard.params,
    )
    if not rows:
        raise unknown_intent(intent_id)
    return _row(dict(rows[0]["props"]), [n for n in rows[0]["nets"] if n])
