"""What may reach a Cypher string: labels, relationship types, property names.

Values always travel as parameters; the names below are the only identifiers that are
ever interpolated into query text, and each is checked here first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from ..errors import ValidationError
from ..spelling import did_you_mean

# Operator-meaningful labels: the entity_search full-text index covers all of them, and each has
# its own cosine vector index (schema.cypher), named <snake_case>_embedding, so any entity an agent
# writes is found by meaning as well as by its words.
SEARCHABLE_LABELS: tuple[str, ...] = (
    "Question",
    "DefinedTerm",
    "Review",
    "Service",
    "Person",
    "LocalBusiness",
    "PriceSpecification",
    "Task",
    "CreativeWork",
    "DigitalDocument",
    "KnowledgeDocument",
    "Section",
    "Chunk",
    "Conversation",
    "Message",
    "Event",
    "Workflow",
    "Preference",
    "Organization",
    "Company",
    "Concept",
    "Product",
    "Offer",
    "Place",
    "Project",
    "Note",
    "Report",
    "Answer",
    "Topic",
    "Skill",
    "Goal",
    "Decision",
    "UserProfile",
    "AdminUser",
    "EmailThread",
    "Email",
    "Article",
    "Alert",
    "Briefing",
    "Fact",
    "MemoryEntry",
)

# A community's member-private records (maxy.community: profiles, networks, intents, HyDE lenses,
# opportunities, negotiations). Each is read only through the member guard (maxy.community.view),
# so none is searchable: a memory search never returns one, and only the community writes them.
COMMUNITY = "community"
COMMUNITY_EMBEDDED_LABELS: tuple[str, ...] = ("MemberProfile", "ProfileHyde", "Intent", "HydeDocument")
# The marker of an ordinary node a community writer creates (a negotiation's Conversation and turn
# Messages, its task-store Task and the task's records): private to the negotiation's two members.
COMMUNITY_RECORD = "CommunityRecord"
COMMUNITY_LABELS: frozenset[str] = frozenset(
    {
        *COMMUNITY_EMBEDDED_LABELS,
        COMMUNITY_RECORD,
        "Network",
        "NetworkMembership",
        "HydeLens",
        "Opportunity",
        "Negotiation",
        "NegotiationTimer",
    }
)

# Every searchable label is vector-indexed and embedded on write; so are the community's records
# that discovery finds by meaning, through their own indexes and the member guard.
INDEXED_LABELS: tuple[str, ...] = SEARCHABLE_LABELS + COMMUNITY_EMBEDDED_LABELS
EMBEDDED_LABELS: tuple[str, ...] = INDEXED_LABELS

# Labels whose nodes are things with a name (people, organisations, places, products, concepts,
# projects ...): a write naming one that already exists in the caller's view resolves to it.
ENTITY_LABELS: frozenset[str] = frozenset(
    {
        "Person",
        "Organization",
        "Company",
        "LocalBusiness",
        "Place",
        "Product",
        "Service",
        "Concept",
        "DefinedTerm",
        "Project",
        "Topic",
        "Skill",
    }
)

# Labels a writer may use that are not searched as entities (audit, infrastructure,
# subtype labels that always sit beside a searchable base label).
STRUCTURAL_LABELS: tuple[str, ...] = (
    "ToolCall",
    "StepResult",
    "AdminConversation",
    "UserMessage",
    "AssistantMessage",
    "AdminMessage",
    "WhatsAppMessage",
    "CloudflareTunnel",
    "CloudflareHostname",
    "Subscription",
    "TaskEvent",
    "TaskAttempt",
    "TaskArtifact",
    "TaskReview",
    "TaskApproval",
    "TaskSideEffect",
    "MemorySpace",
    "MemoryContext",
    "AgentThread",
)

ALL_LABELS: frozenset[str] = frozenset(SEARCHABLE_LABELS + STRUCTURAL_LABELS) | COMMUNITY_LABELS

# The task store's records: only the task store writes them and the protocol Tasks they hang
# from; each carries ``protocol: true``, so a write naming other labels is caught too, and no
# other tool can forge an event or move a phase.
TASK_STORE = "task store"
TASK_STORE_LABELS: frozenset[str] = frozenset(
    {"TaskEvent", "TaskAttempt", "TaskArtifact", "TaskReview", "TaskApproval", "TaskSideEffect"}
)


def owner_of(labels: Iterable[str], properties: Mapping[str, object]) -> str | None:
    """Which writer alone may write a node with these labels and (merged) properties, if one."""
    if TASK_STORE_LABELS.intersection(labels) or properties.get("protocol") is True:
        return TASK_STORE
    if COMMUNITY_LABELS.intersection(labels):
        return COMMUNITY
    return None


RELATIONSHIP_TYPES: frozenset[str] = frozenset(
    {
        "HAS_SECTION",
        "HAS_CHUNK",
        "NEXT",
        "PART_OF",
        "PRODUCED",
        "RAISED_DURING",
        "HAS_MESSAGE",
        "IN_CONVERSATION",
        "INVOKED",
        "ABOUT",
        "MENTIONS",
        "RELATED_TO",
        "WORKS_FOR",
        "KNOWS",
        "MEMBER_OF",
        "OWNS",
        "OFFERS",
        "HAS_OFFER",
        "HAS_PRICE",
        "HAS_REVIEW",
        "REVIEWS",
        "LOCATED_IN",
        "PROVIDES",
        "ASSIGNED_TO",
        "DEPENDS_ON",
        "SUBTASK_OF",
        "HAS_PREFERENCE",
        "ATTENDED",
        "ORGANIZED",
        "REFERENCES",
        "DERIVED_FROM",
        "ANSWERS",
        "DEFINES",
        "TAGGED",
        "SUBSCRIBES_TO",
        "SUPERSEDED_BY",
        "HAS_EVENT",
        "HAS_ATTEMPT",
        "HAS_ARTIFACT",
        "HAS_APPROVAL",
        "PLANS",
        "HAS_ENTRY",
        "RECORDS",
        "IN_SESSION",
        "HAS_CONTEXT",
        # the community's records (maxy.community)
        "HAS_MEMBERSHIP",
        "HAS_HYDE",
        "HAS_INTENT",
        "IN_NETWORK",
        "HAS_LENS",
        "HAS_OPPORTUNITY",
        "INVOLVES",
        "HAS_NEGOTIATION",
        "HAS_TIMER",
    }
)

# Written only by the graph layer itself; a caller never sets them directly.
RESERVED_PROPERTIES: frozenset[str] = frozenset(
    {
        "accountId",
        "nodeId",
        "embedding",
        "createdAt",
        "updatedAt",
        "deletedAt",
        "pendingWrite",
        "createdBy",
        "scope",
        "agents",
        "nameKey",
        "aliasKeys",
        "dateText",
    }
)

# The KnowledgeDocument -> Section -> Chunk hierarchy that ingest writes (maxy.ingest.hierarchy).
DOCUMENT_LABELS: frozenset[str] = frozenset({"KnowledgeDocument", "Section", "Chunk"})

# Bookkeeping: how a node was stored, not what it says. The default search text (memory-search,
# maxy search) leaves these out; a caller who names one in ``fields`` gets it. The graph layer's
# stamps and derived keys (scope and agents stay: they say who may see the node), plus ingest's
# attachmentId and contentHash on any label ...
BOOKKEEPING_PROPERTIES: frozenset[str] = (RESERVED_PROPERTIES - {"scope", "agents"}) | {"attachmentId", "contentHash"}
# ... and on the document hierarchy only, ingest's structure fields (a Person's ``position`` or a
# Fact's ``source`` is content, so these are not hidden elsewhere).
DOCUMENT_BOOKKEEPING_PROPERTIES: frozenset[str] = BOOKKEEPING_PROPERTIES | {
    "position",
    "source",
    "mediaType",
    "sectionCount",
    "chunkCount",
    "chunking",  # "size-only" while a document waits to be re-chunked (docs/ingest.md)
}


def bookkeeping_properties(labels: Iterable[str]) -> frozenset[str]:
    """The bookkeeping property names of a node with these labels."""
    return DOCUMENT_BOOKKEEPING_PROPERTIES if DOCUMENT_LABELS.intersection(labels) else BOOKKEEPING_PROPERTIES


# Sources that count as provenance for gated labels (checked against the full labels() list).
PROVENANCE_SOURCE_LABELS: frozenset[str] = frozenset(
    {"Task", "Conversation", "Message", "AdminConversation", "UserMessage", "AssistantMessage", "AdminMessage"}
)
PROVENANCE_GATED_LABELS: frozenset[str] = frozenset(
    {"Person", "UserProfile", "AdminUser", "Organization", "LocalBusiness", "CloudflareTunnel", "CloudflareHostname"}
)

_PROPERTY_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")


def check_label(label: object, *, field: str = "labels") -> str:
    if not isinstance(label, str) or label not in ALL_LABELS:
        hint = did_you_mean(label, ALL_LABELS) if isinstance(label, str) else ""
        raise ValidationError(field, f"unknown label {label!r}; {hint or _allowed_labels()}")
    return label


def _allowed_labels() -> str:
    return f"allowed labels: {', '.join(sorted(ALL_LABELS))}"


def check_labels(labels: Iterable[object], *, field: str = "labels") -> list[str]:
    if isinstance(labels, str):
        labels = [labels]
    out: list[str] = []
    for label in labels:
        checked = check_label(label, field=field)
        if checked not in out:
            out.append(checked)
    if not out:
        raise ValidationError(field, "at least one label is required")
    return out


def check_relationship_type(rel_type: object, *, field: str = "edges.type") -> str:
    if not isinstance(rel_type, str) or rel_type not in RELATIONSHIP_TYPES:
        hint = did_you_mean(rel_type, RELATIONSHIP_TYPES) if isinstance(rel_type, str) else ""
        raise ValidationError(
            field,
            f"unknown relationship type {rel_type!r}; {hint or 'allowed: ' + ', '.join(sorted(RELATIONSHIP_TYPES))}",
        )
    return rel_type


def check_property_name(name: object, *, field: str = "properties", allow_reserved: bool = False) -> str:
    if not isinstance(name, str) or not _PROPERTY_RE.match(name):
        raise ValidationError(
            field, f"invalid property name {name!r}: use a letter then letters, digits or _ (at most 64)"
        )
    if not allow_reserved and name in RESERVED_PROPERTIES:
        raise ValidationError(field, f"property {name!r} is set by the graph layer and cannot be written")
    return name


def quote(identifier: str) -> str:
    """Backtick-quote an identifier that has already passed one of the checks above."""
    if "`" in identifier:
        raise ValidationError("identifier", f"backtick in identifier {identifier!r}")
    return f"`{identifier}`"
