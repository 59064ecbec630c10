"""The memory plugin's write tool: memory-write, one node created or updated through the
write primitive (``ctx.writer``), with its PRODUCED provenance edge.

A target the caller may not read is refused exactly like one that does not exist.
"""

from __future__ import annotations

from typing import Any

from maxy.graph.confine import not_writable
from maxy.graph.write import Edge, NodeSpec
from maxy.plugins import (
    ToolContext,
    ToolError,
    active_conversation,
    load_node,
    log_line,
    require,
    short,
    tool,
    tool_errors,
)


def _parse_edges(edges: object) -> list[Edge]:
    if edges is None:
        return []
    require(isinstance(edges, list), "edges", "a list of {type, target, direction} objects")
    out: list[Edge] = []
    for i, e in enumerate(edges):  # type: ignore[arg-type, var-annotated]
        where = f"edges[{i}]"
        require(isinstance(e, dict), where, "an object with type, target and optional direction")
        unknown = set(e) - {"type", "target", "direction", "properties"}
        require(not unknown, where, f"unknown key(s) {sorted(unknown)}; use type, target, direction, properties")
        require(isinstance(e.get("type"), str), f"{where}.type", "a relationship type is required")
        require(isinstance(e.get("target"), str), f"{where}.target", "the target's nodeId is required")
        direction = {"outgoing": "out", "incoming": "in"}.get(e.get("direction") or "out", e.get("direction") or "out")
        require(
            direction in ("out", "in"),
            f"{where}.direction",
            "'out' (this node -> target) or 'in' (target -> this node)",
        )
        props = e.get("properties") or {}
        require(isinstance(props, dict), f"{where}.properties", "an object")
        out.append(Edge(e["type"], e["target"], direction, props))  # type: ignore[arg-type]  # checked above
    return out


@tool(
    "memory-write",
    description="""
Create or update one node in the knowledge graph. labels: allowed node labels (e.g. ["Person"]);
properties: flat key/values (no nested objects); edges: [{type, target (nodeId), direction
"out"|"in"}] to existing nodes of this account; producedByTaskId: the Task (from work-create)
this write belongs to (adds Task-[:PRODUCED]->node); scope: public|shared|admin; agents: agent
slugs the node is visible to; nodeId: update that existing node instead of creating one (a
node you cannot read is refused like one that does not exist). A server pinned to scopes or an
agent writes inside its view: new nodes default to its most private pinned scope and its agent.
Returns {"nodeId", "created", "embedded", "provenance"} as JSON.
""",
)
@tool_errors
def memory_write(
    ctx: ToolContext,
    labels: list[str],
    properties: dict[str, Any],
    edges: list[dict[str, Any]] | None = None,
    producedByTaskId: str | None = None,
    scope: str | None = None,
    agents: list[str] | None = None,
    nodeId: str | None = None,
) -> dict[str, Any]:
    w = ctx.writer()  # refuses the public role before anything else
    require(isinstance(properties, dict), "properties", "an object of property names to values")
    parsed = _parse_edges(edges)
    if nodeId is not None:
        existing = load_node(ctx, nodeId)
        if existing is None:  # absent, deleted, hidden or foreign: one answer, so no id is confirmed
            raise ToolError(f"{not_writable('nodeId', nodeId)} (omit nodeId to create a node)")
        # An update keeps the node's visibility unless told otherwise (the primitive sets
        # scope and agents on every write: omitting them must not widen the node).
        scope = existing["scope"] if scope is None else scope
        agents = existing["agents"] if agents is None else agents
        properties = {**existing["properties"], **properties}
    source = None
    if producedByTaskId is not None:
        task = load_node(ctx, producedByTaskId, "Task", field="producedByTaskId")
        if task is None:
            log_line(
                "graph-write",
                "reject",
                reason="not-writable",
                field="producedByTaskId",
                taskId=short(str(producedByTaskId)),
                accountId=short(ctx.caller.account_id),
            )
            raise not_writable("producedByTaskId", producedByTaskId, "Task")
        source = task["nodeId"]
    else:
        conv = active_conversation(ctx)
        if conv is not None:
            source = conv["nodeId"]
    if source == nodeId:
        source = None  # never a self-loop when the conversation (or task) itself is updated
    if source is not None and not any(
        e.type == "PRODUCED" and e.direction == "in" and e.target == source for e in parsed
    ):
        parsed.insert(0, Edge("PRODUCED", source, "in"))  # before the write: the provenance check sees it
    result = w.write(NodeSpec(labels, properties, edges=parsed, node_id=nodeId, scope=scope, agents=agents))
    return {
        "nodeId": result.node_id,
        "labels": list(result.labels),
        "created": result.created,
        "embedded": result.embedded,
        "provenance": result.provenance,
    }
