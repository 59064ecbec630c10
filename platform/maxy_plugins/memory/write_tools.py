"""The memory plugin's write tool: memory-write, one node created, updated, resolved into an
existing entity or superseding earlier facts (``maxy.memory.remember``), through the write
primitive (``ctx.writer``), with its PRODUCED provenance edge.

A target the caller may not read is refused exactly like one that does not exist.
"""

from __future__ import annotations

from typing import Any

from maxy.graph.confine import not_writable
from maxy.memory.remember import MemoryWrite, parse_edges, remember
from maxy.plugins import (
    ToolContext,
    active_conversation,
    load_node,
    log_line,
    require,
    short,
    tool,
    tool_errors,
)


@tool(
    "memory-write",
    description="""
Create or update one node in the knowledge graph. labels: allowed node labels (e.g. ["Person"],
["Fact"]); properties: flat key/values (no nested objects; at least one non-empty value; at most
20,000 characters per value); edges: [{type, target (nodeId), direction "out"|"in"}] to existing
nodes; nodeId: update that existing node (an id you cannot read is refused). A Person,
Organization, Place, Product, Project, Concept ... whose name or alias matches one you already
have merges into it and the answer says `resolved: <nodeId>`; resolve: false always creates.
validFrom / validUntil: when the fact was (or stops being) true, ISO 8601; supersede: nodeId(s)
of earlier facts this one replaces (they get validUntil and a SUPERSEDED_BY edge, and drop out
of searches unless asked for history). producedByTaskId: the Task (work-create) this write
belongs to. scope: public|shared|admin; agents: agent slugs the node is visible to. A server
pinned to scopes or an agent writes inside its view. Returns {"nodeId", "created", "resolved",
"superseded", "embedded", "provenance"} as JSON.
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
    resolve: bool = True,
    supersede: list[str] | str | None = None,
    validFrom: str | None = None,
    validUntil: str | None = None,
) -> dict[str, Any]:
    w = ctx.writer()  # refuses the public role before anything else
    require(isinstance(properties, dict), "properties", "an object of property names to values")
    require(isinstance(resolve, bool), "resolve", "true (merge into a matching entity) or false (always create)")
    if isinstance(supersede, str):
        supersede = [supersede]
    require(supersede is None or isinstance(supersede, list), "supersede", "a nodeId or a list of nodeIds")
    memory = MemoryWrite(
        labels,
        properties,
        edges=parse_edges(edges),
        node_id=nodeId,
        scope=scope,
        agents=agents,
        resolve=resolve,
        supersede=supersede or (),
        source=_source(ctx, producedByTaskId),
        valid_from=validFrom,
        valid_until=validUntil,
    )
    return remember(w, memory)


def _source(ctx: ToolContext, task_id: str | None) -> str | None:
    """What produced the write: the named Task, else the active conversation."""
    if task_id is None:
        conv = active_conversation(ctx)
        return conv["nodeId"] if conv is not None else None
    task = load_node(ctx, task_id, "Task", field="producedByTaskId")
    if task is None:
        log_line(
            "graph-write",
            "reject",
            reason="not-writable",
            field="producedByTaskId",
            taskId=short(str(task_id)),
            accountId=short(ctx.caller.account_id),
        )
        raise not_writable("producedByTaskId", task_id, "Task")
    return str(task["nodeId"])
