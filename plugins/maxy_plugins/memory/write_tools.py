"""The memory plugin's write tool: memory-write, one node created, updated, resolved into an
existing entity or superseding earlier facts (``maxy.memory.remember``), through the write
primitive (``ctx.writer``), with its PRODUCED provenance edge.

A target the caller may not read is refused exactly like one that does not exist.
"""

from __future__ import annotations

from typing import Annotated, Any, NotRequired

from maxy.graph.confine import not_writable
from maxy.memory.remember import MemoryWrite, parse_edges, remember
from maxy.plugins import (
    ISO_DATE,
    AgentsArg,
    Direction,
    Label,
    OneOrMany,
    RelationshipType,
    ScopeArg,
    ToolContext,
    ToolOutput,
    active_conversation,
    load_node,
    log_line,
    require,
    short,
    title_of,
    tool,
    tool_errors,
)
from pydantic import ConfigDict, Field
from typing_extensions import TypedDict  # pydantic reads typing.TypedDict only from Python 3.12


class EdgeArg(TypedDict):
    """A relationship from the node written to an existing node."""

    __pydantic_config__ = ConfigDict(extra="forbid", field_title_generator=title_of)  # type: ignore[misc]

    type: Annotated[RelationshipType, Field(description="The relationship type, e.g. WORKS_FOR.")]
    target: Annotated[str, Field(description="The existing node's id.")]
    direction: NotRequired[
        Annotated[Direction, Field(description="out (default): this node -> target; in: target -> this node.")]
    ]
    properties: NotRequired[Annotated[dict[str, Any], Field(description="Properties of the relationship.")]]


class Written(ToolOutput):
    nodeId: str = Field(description="The node written (the existing one when resolved).")
    labels: list[str]
    created: bool = Field(description="True when a new node was created, false when one was updated.")
    resolved: str | None = Field(description="The existing entity this write merged into, if any.")
    superseded: list[str] = Field(description="Earlier facts this one replaced.")
    embedded: bool = Field(description="True when the node got its embedding (searchable by meaning).")
    provenance: bool | None = Field(
        description="For labels that need provenance: whether a PRODUCED source was linked; null otherwise."
    )


@tool(
    "memory-write",
    description="""
Create or update one node (an entity, a fact, a note) with its relationships to existing nodes.
A name or alias you already have merges into that entity (`resolved`); `supersede` replaces
earlier facts, which stay as history. Returns the node's id.
""",
    title="Remember (write a node)",
    output=Written,
    destructive=True,  # an update (nodeId, a resolved name) overwrites properties; supersede ends facts
)
@tool_errors
def memory_write(
    ctx: ToolContext,
    labels: Annotated[
        list[Label],
        OneOrMany,
        Field(description='The node\'s labels, e.g. ["Person"] or ["Fact"].', min_length=1),
    ],
    properties: Annotated[
        dict[str, Any],
        Field(
            description="Flat property values (text, numbers, booleans, lists of them; no nested objects), "
            'at least one non-empty, at most 20,000 characters each; e.g. {"name": "Ada Lovelace"}.'
        ),
    ],
    edges: Annotated[
        list[EdgeArg] | None, Field(description="Relationships to existing nodes, written with the node.")
    ] = None,
    producedByTaskId: Annotated[
        str | None, Field(description="The taskId (from work-create) of the action that produced this node.")
    ] = None,
    scope: ScopeArg = None,
    agents: AgentsArg = None,
    nodeId: Annotated[str | None, Field(description="Update this existing node instead of writing a new one.")] = None,
    resolve: Annotated[
        bool, Field(description="Merge into an existing entity with the same name or alias (default true).")
    ] = True,
    supersede: Annotated[
        list[str] | None,
        OneOrMany,
        Field(description="Node ids of earlier facts this one replaces (kept as history)."),
    ] = None,
    validFrom: Annotated[str | None, Field(description=f"When the fact became true: {ISO_DATE}.")] = None,
    validUntil: Annotated[str | None, Field(description=f"When the fact stops being true: {ISO_DATE}.")] = None,
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
