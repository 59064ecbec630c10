"""Argument types tools share: the allow-lists as enums, one-or-many lists, and a description
on each, so every tool's input schema says what a field takes.

    def memory_get(ctx: ToolContext, types: RelationshipTypes = None) -> dict: ...

The enums come from the allow-lists (``maxy.graph.allowlist``, ``maxy.config.SCOPE_VALUES``):
what the schema offers is exactly what the write primitive accepts. A list argument also
takes a single value (``"Person"`` for ``["Person"]``); the schema shows the list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from ..config import SCOPE_VALUES
from ..graph.allowlist import ALL_LABELS, INDEXED_LABELS, RELATIONSHIP_TYPES


def _one_or_many(value: Any) -> Any:
    """A single string where a list is expected counts as a list of one."""
    return [value] if isinstance(value, str) else value


OneOrMany = BeforeValidator(_one_or_many)

if TYPE_CHECKING:  # the enums are built from the allow-lists at run time
    Label = str
    IndexedLabel = str
    RelationshipType = str
    Scope = str
else:
    Label = Literal[tuple(sorted(ALL_LABELS))]
    IndexedLabel = Literal[tuple(sorted(INDEXED_LABELS))]
    RelationshipType = Literal[tuple(sorted(RELATIONSHIP_TYPES))]
    Scope = Literal[SCOPE_VALUES]

Direction = Literal["out", "in"]

ISO_DATE = "ISO 8601, e.g. 2026-05-07 or 2026-05-07T06:00:00Z"

ScopeArg = Annotated[
    Scope | None,
    Field(description="Who may see it. Omitted: the server's pinned scope for a new node; an update keeps it."),
]
AgentsArg = Annotated[
    list[str] | None,
    OneOrMany,
    Field(
        description="Agent slugs that may see it. Omitted: the server's pinned agent for a new node; an update keeps them."
    ),
]
RelationshipTypes = Annotated[
    Annotated[list[RelationshipType], Field(min_length=1)] | None,
    OneOrMany,
    Field(description="Only follow relationships of these types (omitted: all types)."),
]
NodeId = Annotated[str, Field(description="A node id, as returned by memory-search, memory-get or memory-write.")]
