"""The memory plugin's entity tools: memory-get (nodes by id with their neighbourhood),
memory-forget (soft-delete one node) and memory-remove-relation (delete a relationship), over
``maxy.memory.neighbourhood`` and ``maxy.memory.forget``.

memory-get is read-only and guarded, so public servers have it too; the other two write
through ``ctx.writer`` (refused on the public role, confined to a pinned server's view). An
id the caller cannot read gets the same answer as one that does not exist.
"""

from __future__ import annotations

from typing import Annotated, Any

from maxy.memory.forget import forget_node, remove_relation
from maxy.memory.neighbourhood import DEFAULT_BUDGET, MAX_BUDGET, MAX_HOPS, MAX_IDS, get_nodes
from maxy.plugins import (
    ISO_DATE,
    Direction,
    NodeId,
    OneOrMany,
    RelationshipType,
    RelationshipTypes,
    ToolContext,
    ToolOutput,
    check_int,
    require,
    tool,
    tool_errors,
)
from pydantic import Field


class PathStep(ToolOutput):
    type: str = Field(description="The relationship type.")
    direction: Direction = Field(description="out: from the previous node to this one; in: the other way.")
    nodeId: str = Field(description="The node this step reaches.")


class Neighbour(ToolOutput):
    nodeId: str
    labels: list[str]
    properties: dict[str, Any] = Field(description="Its properties, long text trimmed.")
    hops: int = Field(description="How many relationships away it is.")
    path: list[PathStep] = Field(description="The relationships walked to reach it, in order.")


class GotNode(ToolOutput):
    nodeId: str
    labels: list[str]
    scope: str | None = None
    agents: list[str] | None = None
    meta: dict[str, Any] = Field(default_factory=dict, description="createdAt, updatedAt, createdBy.")
    properties: dict[str, Any] = Field(description="All its properties (validFrom/validUntil included).")
    neighbours: list[Neighbour] = Field(description="Nearest first, within hops and budget.")


class GetResult(ToolOutput):
    nodes: list[GotNode] = Field(description="The requested nodes you can read, in the order asked.")
    missing: list[str] = Field(description="Requested ids that do not exist or that you cannot read.")
    truncated: bool = Field(description="True when the budget left some neighbours out.")


class Forgotten(ToolOutput):
    nodeId: str
    forgotten: bool
    labels: list[str]
    deletedAt: str = Field(description="When it was forgotten; it is purged after the grace period.")


class RelationRemoved(ToolOutput):
    source: str
    type: str
    target: str
    removed: int = Field(description="How many relationships were deleted.")


@tool(
    "memory-get",
    description="""
Read nodes by id (from a search or a write) with all their properties and their neighbours up to
`hops` away, each with the path to it. Ids you cannot read are listed in `missing`.
""",
    title="Read nodes by id",
    output=GetResult,
    read_only=True,
    idempotent=True,
)
@tool_errors
def memory_get(
    ctx: ToolContext,
    nodeIds: Annotated[
        list[str],
        OneOrMany,
        Field(
            description=f"One node id or a list (at most {MAX_IDS}), from memory-search, memory-write or an "
            "earlier memory-get.",
            min_length=1,
            max_length=MAX_IDS,
        ),
    ],
    hops: Annotated[
        int, Field(description="How far to walk: 0 the nodes alone, 1 their direct neighbours.", ge=0, le=MAX_HOPS)
    ] = 1,
    types: RelationshipTypes = None,
    budget: Annotated[
        int,
        Field(description="At most this many neighbours in all, nearest first.", ge=1, le=MAX_BUDGET),
    ] = DEFAULT_BUDGET,
    asOf: Annotated[str | None, Field(description=f"Show the neighbourhood as it was then: {ISO_DATE}.")] = None,
    includeHistory: Annotated[
        bool, Field(description="Also show (and walk through) superseded and expired neighbours.")
    ] = False,
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
Forget one node: it leaves every search and read at once and is purged after a grace period.
Documents are deleted with memory-delete (profile memory).
""",
    title="Forget a node",
    output=Forgotten,
    destructive=True,
    idempotent=True,  # a repeat forgets nothing more (it is refused like an unknown id)
)
@tool_errors
def memory_forget(ctx: ToolContext, nodeId: NodeId) -> dict[str, Any]:
    w = ctx.writer()  # refuses the public role before anything else
    require(isinstance(nodeId, str) and bool(nodeId.strip()), "nodeId", "the id of the node to forget")
    return forget_node(w, nodeId)


@tool(
    "memory-remove-relation",
    description="""
Delete the relationship(s) of one type from source to target; both nodes stay.
""",
    title="Remove a relationship",
    output=RelationRemoved,
    destructive=True,
    idempotent=True,  # a repeat removes nothing more (it is refused: no such relation)
)
@tool_errors
def memory_remove_relation(
    ctx: ToolContext,
    source: Annotated[str, Field(description="The node id the relationship starts from.")],
    type: Annotated[RelationshipType, Field(description="The relationship type, e.g. WORKS_FOR.")],
    target: Annotated[str, Field(description="The node id the relationship points to.")],
) -> dict[str, Any]:
    w = ctx.writer()  # refuses the public role before anything else
    require(isinstance(type, str) and bool(type.strip()), "type", "a relationship type, e.g. RELATED_TO")
    return remove_relation(w, source, type.strip(), target)
