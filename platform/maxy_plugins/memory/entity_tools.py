"""The memory plugin's entity tools: memory-get (nodes by id with their neighbourhood),
memory-forget (soft-delete one node) and memory-remove-relation (delete a relationship), over
``maxy.memory.neighbourhood`` and ``maxy.memory.forget``.

memory-get is read-only and guarded, so public servers have it too; the other two write
through ``ctx.writer`` (refused on the public role, confined to a pinned server's view). An
id the caller cannot read gets the same answer as one that does not exist.
"""

from __future__ import annotations

from typing import Any

from maxy.memory.forget import forget_node, remove_relation
from maxy.memory.neighbourhood import DEFAULT_BUDGET, MAX_BUDGET, MAX_HOPS, get_nodes
from maxy.plugins import ToolContext, check_int, require, tool, tool_errors


@tool(
    "memory-get",
    description="""
Read nodes back by id (from memory-search or memory-write) with their neighbourhood. nodeIds:
one id or a list (at most 50); hops: 0-3 (default 1; 0 = the nodes alone); types: only follow
these relationship types; budget: at most this many neighbours in all (1-500, default 50,
nearest first; `truncated: true` when some were left out). Each node comes back with all its
properties (validFrom/validUntil included); each neighbour with its properties (long text
trimmed), its distance in hops and the path to it ([{type, direction "out"|"in", nodeId}]).
Superseded and expired neighbours are left out (and not walked through) unless includeHistory
is true; asOf (ISO 8601) shows the neighbourhood as it was then. Ids you cannot read are listed
in `missing`. Returns {"nodes", "missing", "truncated"} as JSON.
""",
    read_only=True,
    idempotent=True,
)
@tool_errors
def memory_get(
    ctx: ToolContext,
    nodeIds: list[str] | str,
    hops: int = 1,
    types: list[str] | str | None = None,
    budget: int = DEFAULT_BUDGET,
    asOf: str | None = None,
    includeHistory: bool = False,
) -> dict[str, Any]:
    require(isinstance(nodeIds, (list, str)) and bool(nodeIds), "nodeIds", "one node id or a list of node ids")
    hops = check_int(hops, "hops", 0, MAX_HOPS)
    budget = check_int(budget, "budget", 1, MAX_BUDGET)
    if isinstance(types, str):
        types = [types]
    require(types is None or (isinstance(types, list) and bool(types)), "types", "a list of relationship types")
    require(isinstance(includeHistory, bool), "includeHistory", "true or false")
    require(asOf is None or isinstance(asOf, str), "asOf", "an ISO 8601 date or date-time")
    return get_nodes(
        ctx.db,
        ctx.caller,
        [nodeIds] if isinstance(nodeIds, str) else nodeIds,
        hops=hops,
        types=types,
        budget=budget,
        as_of=asOf,
        include_history=includeHistory,
    )


@tool(
    "memory-forget",
    description="""
Forget one node by nodeId: it disappears from every search and read at once and is purged
after a 7-day grace period. Not for documents: delete those with memory-delete (attachmentId).
A server pinned to scopes or an agent can forget only nodes no other view shares. An id you
cannot read (or one already forgotten) is refused. Returns {"nodeId", "forgotten", "labels"}.
""",
    destructive=True,
)
@tool_errors
def memory_forget(ctx: ToolContext, nodeId: str) -> dict[str, Any]:
    w = ctx.writer()  # refuses the public role before anything else
    require(isinstance(nodeId, str) and bool(nodeId.strip()), "nodeId", "the id of the node to forget")
    return forget_node(w, nodeId)


@tool(
    "memory-remove-relation",
    description="""
Remove the relationship(s) of one type from source to target (node ids; relationships are
directed: source -[type]-> target). Both nodes must be ones you can read. The relationship is
deleted at once (no grace period); the nodes stay. SUPERSEDED_BY history edges cannot be
removed (forget the node instead). Returns {"source", "type", "target", "removed"}.
""",
    destructive=True,
)
@tool_errors
def memory_remove_relation(ctx: ToolContext, source: str, type: str, target: str) -> dict[str, Any]:
    w = ctx.writer()  # refuses the public role before anything else
    require(isinstance(type, str) and bool(type.strip()), "type", "a relationship type, e.g. RELATED_TO")
    return remove_relation(w, source, type.strip(), target)
