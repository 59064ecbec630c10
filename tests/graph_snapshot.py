"""A graph snapshot for write-confinement oracles: every node of some accounts with its labels
and properties, every relationship touching them, and the domain predicate in plain Python."""

from __future__ import annotations

import json
from typing import Any

from maxy.graph.guards import Caller


def snapshot(db: Any, accounts: list[str]) -> tuple[dict[str, dict[str, Any]], set[tuple[str, str, str, str]]]:
    nodes = {
        r["id"]: {"labels": sorted(r["labels"]), "props": r["props"]}
        for r in db.read(
            "MATCH (n:Node) WHERE n.accountId IN $accs RETURN n.nodeId AS id, labels(n) AS labels, properties(n) AS props",
            accs=accounts,
        )
    }
    edges = {
        (r["a"], r["t"], r["b"], json.dumps(r["p"], sort_keys=True))
        for r in db.read(
            "MATCH (a:Node)-[r]->(b:Node) WHERE a.accountId IN $accs OR b.accountId IN $accs "
            "RETURN a.nodeId AS a, type(r) AS t, b.nodeId AS b, properties(r) AS p",
            accs=accounts,
        )
    }
    return nodes, edges


def in_domain(props: dict[str, Any], caller: Caller) -> bool:
    """The oracle: account, pinned scopes and pinned agent, whatever the soft-delete mark."""
    if props.get("accountId") != caller.account_id:
        return False
    if (
        caller.allowed_scopes is not None
        and props.get("scope") is not None
        and props["scope"] not in caller.allowed_scopes
    ):
        return False
    return caller.agent_slug is None or caller.agent_slug in (props.get("agents") or [])


Snapshot = tuple[dict[str, dict[str, Any]], set[tuple[str, str, str, str]]]


def assert_confined(before: Snapshot, after: Snapshot, caller: Caller) -> None:
    """Nothing outside the caller's domain changed between two snapshots.

    Outside nodes keep their labels, properties and relationships (bar relationships to nodes
    the caller deleted, and the audit trail's INVOKED edges to its new ToolCalls); domain nodes
    stay in the domain; new nodes, bar the audit's ToolCalls, are in the domain."""
    before_nodes, before_edges = before
    after_nodes, after_edges = after
    audit = {
        i
        for i, n in after_nodes.items()
        if i not in before_nodes and "ToolCall" in n["labels"] and n["props"].get("createdBy") == "mcp-audit"
    }
    gone = set(before_nodes) - set(after_nodes)

    def incident(edges: set[tuple[str, str, str, str]], node_id: str) -> set[tuple[str, str, str, str]]:
        return {e for e in edges if node_id in (e[0], e[2]) and not ({e[0], e[2]} & (gone | audit))}

    for node_id, node in before_nodes.items():
        if in_domain(node["props"], caller):
            if node_id in after_nodes:  # updated inside the domain, never pushed out of it
                assert in_domain(after_nodes[node_id]["props"], caller), (node_id, after_nodes[node_id])
            continue
        assert node_id in after_nodes, f"hidden node {node_id} was deleted"
        assert after_nodes[node_id] == node, f"hidden node {node_id} changed: {node} -> {after_nodes[node_id]}"
        assert incident(after_edges, node_id) == incident(before_edges, node_id), (
            f"relationships of hidden {node_id} changed"
        )
    for node_id in set(after_nodes) - set(before_nodes) - audit:
        assert in_domain(after_nodes[node_id]["props"], caller), f"created outside the domain: {after_nodes[node_id]}"
