"""Network assignment of intents: direct (score 1.0), or by the indexer against the network's
prompt and the member's prompt for it (assigned when 0.6 * index + 0.4 * member, or the one
score present, reaches 0.7). A network with neither prompt has no purpose to score against and
takes its members' intents as they come (``open``, score 1.0). Without the model a network with
a prompt is left unassigned, and the answer says why."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ...config import Settings
from ...db import Database
from ...graph.guards import both, node_guard
from ...graph.write import Edge, GraphWriter, NodeSpec
from ...llm import LLMUnavailable
from ...logs import log_line, short
from .. import trace
from ..view import MemberView, unknown_network
from . import indexer
from .store import INTENT, get_intent, unknown_intent


def member_networks(db: Database, view: MemberView, member_id: str, network_id: str | None = None) -> list[dict]:
    """The networks ``member_id`` is an active member of (``network_id``: only that one), with
    the network's prompt and the member's prompt for it."""
    guard = both(node_guard(view.caller, "net"), node_guard(view.caller, "mm"))
    rows = db.read(
        f"""
        MATCH (mm:NetworkMembership {{accountId: $g_accountId, memberId: $member, status: 'active'}})
        WHERE ($network IS NULL OR mm.networkId = $network)
        MATCH (net:Network {{nodeId: mm.networkId}}) WHERE {guard.clause}
        RETURN net.nodeId AS networkId, net.name AS name, net.prompt AS prompt, mm.memberPrompt AS memberPrompt
        ORDER BY net.nodeId
        """,
        member=member_id,
        network=network_id,
        **guard.params,
    )
    return [dict(r) for r in rows]


def _link(writer: GraphWriter, intent: dict[str, Any], network_id: str, fields: dict[str, Any]) -> None:
    props = {**fields, "assignedAt": datetime.now(UTC).isoformat(), "unassignedAt": None}
    writer.write(
        NodeSpec(
            [INTENT],
            {"intentId": intent["intentId"], "memberId": intent["memberId"]},
            node_id=intent["intentId"],
            edges=[Edge("IN_NETWORK", network_id, properties=props)],
        )
    )


def _evaluate(settings: Settings, intent: dict[str, Any], network: dict[str, Any], direct: bool) -> dict[str, Any]:
    """What the assignment of ``intent`` to ``network`` would be (assigned or not, and why)."""
    if direct:
        return {"assigned": True, "method": "direct", "score": indexer.DIRECT_SCORE}
    if not network.get("prompt") and not network.get("memberPrompt"):
        return {"assigned": True, "method": "open", "score": indexer.DIRECT_SCORE}
    try:
        s = indexer.score(
            settings, intent["description"], intent["type"], network.get("prompt"), network.get("memberPrompt")
        )
    except LLMUnavailable as err:
        return {"assigned": False, "method": "indexer", "score": None, "degraded": True, "reason": err.reason}
    return {
        "assigned": s.assign,
        "method": "indexer",
        "score": s.final,
        "indexScore": s.index_score,
        "memberScore": s.member_score,
        "reasoning": s.reasoning,
    }


def assign(
    writer: GraphWriter,
    settings: Settings,
    intent: dict[str, Any],
    networks: list[dict[str, Any]],
    *,
    direct: bool = False,
) -> list[dict[str, Any]]:
    """Assign one (already checked) intent to each of ``networks`` that takes it."""
    out = []
    with trace.graph("intent-network"):
        for network in networks:
            result = _evaluate(settings, intent, network, direct)
            if result["assigned"]:
                edge = {k: result.get(k) for k in ("score", "method", "indexScore", "memberScore")}
                _link(writer, intent, network["networkId"], edge)
            out.append({"networkId": network["networkId"], **result})
            log_line(
                "intents",
                op="assign",
                intentId=short(intent["intentId"]),
                networkId=short(network["networkId"]),
                method=result["method"],
                score=result["score"],
                assigned=result["assigned"],
                reason=result.get("reason"),
            )
    return out


def assign_intent_network(
    writer: GraphWriter,
    view: MemberView,
    settings: Settings,
    intent_id: str,
    network_id: str,
    *,
    direct: bool = False,
) -> dict[str, Any]:
    """Assign the viewer's own intent (any intent for the admin) to a network its member is in:
    directly, or through the indexer."""
    intent = get_intent(writer.db, view, intent_id, own=view.member_id)
    if intent["status"] != "active":
        raise unknown_intent(intent_id)
    networks = member_networks(writer.db, view, intent["memberId"], network_id)
    if not networks:
        raise unknown_network(network_id)
    return {"intentId": intent_id, **assign(writer, settings, intent, networks, direct=direct)[0]}
