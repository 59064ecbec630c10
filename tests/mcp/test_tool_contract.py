"""The tool contract a client reads from tools/list and initialize/discover, with the SDK's client
against the memory, work, session, admin, taskstore, memory-agent and community plugins: titles, described inputs, enums and bounds from the
allow-lists, an outputSchema for every tool, annotations that are true, server instructions, and
one-line errors for input the schema refuses (against the real Neo4j)."""

from __future__ import annotations

import re
from typing import Any

import anyio
import pytest
from jsonschema import Draft202012Validator
from maxy.community.opportunities.statuses import STATUSES
from maxy.config import SCOPE_VALUES, load_settings
from maxy.graph.allowlist import ALL_LABELS, INDEXED_LABELS, RELATIONSHIP_TYPES
from maxy.mcp.server import create_mcp_server, pinned_context
from maxy.plugins.discovery import discover_plugins
from maxy.provenance.tasks import DONE_STATUSES, OPEN_STATUSES
from maxy.search.classifier import RETRIEVAL_CLASSES
from maxy.taskstore import PHASES
from mcp import Client

from tests.plugins_fixture.helpers import text

PLUGINS = ["memory", "work", "session", "admin", "taskstore", "memory-agent", "community"]

# (readOnly, destructive, idempotent): destructive = may overwrite or remove what is stored;
# idempotent = the same call again changes nothing more.
HINTS = {
    "memory-search": (True, False, True),
    "memory-get": (True, False, True),
    "conversation-search": (True, False, True),
    "memory-report-read-latest": (True, False, True),
    "memory-report-list": (True, False, True),
    "session-context": (True, False, True),
    "public-hostname": (True, False, True),
    "memory-write": (False, True, False),
    "memory-forget": (False, True, True),
    "memory-remove-relation": (False, True, True),
    "memory-ingest": (False, True, True),
    "memory-delete": (False, True, True),
    "memory-reindex": (False, False, True),
    "conversation-append": (False, True, False),
    "memory-report-write": (False, True, True),
    "work-create": (False, False, False),
    "work-update": (False, True, False),
    "work-complete": (False, True, True),
    "session-compact": (False, True, False),
    "task_get": (True, False, True),
    "task_list": (True, False, True),
    "task_events": (True, False, True),
    "task_create": (False, False, False),
    "task_update_spec": (False, True, False),
    "task_transition": (False, True, False),
    "task_heartbeat": (False, True, False),
    "task_finish_attempt": (False, True, False),
    "task_add_artifact": (False, False, False),
    "task_append_review": (False, False, False),
    "task_plan_side_effect": (False, False, True),
    "task_decide_approval": (False, True, True),
    "task_resume": (False, True, True),
    "task_set_external_ref": (False, True, True),
    "task_link_produced": (False, False, True),
    "add_entry": (False, True, False),
    "list_entries": (True, False, True),
    "get_context": (True, False, True),
    "put_context": (False, False, False),
    "await_consistency": (False, False, True),
    "create_user_profile": (False, False, False),
    "update_user_profile": (False, True, True),
    "read_user_profiles": (True, False, True),
    "create_network": (False, False, False),
    "join_network": (False, False, True),
    "add_network_member": (False, False, True),
    "leave_network": (False, True, False),
    "list_networks": (True, False, True),
    "create_intent": (False, False, False),
    "read_intents": (True, False, True),
    "update_intent": (False, True, False),
    "delete_intent": (False, True, True),
    "assign_intent_network": (False, False, False),
    "discover_opportunities": (False, False, False),
    "list_opportunities": (True, False, True),
    "get_opportunity": (True, False, True),
    "send_opportunity": (False, True, False),
    "accept_opportunity": (False, True, True),
    "reject_opportunity": (False, True, True),
    "get_negotiation": (True, False, True),
    "list_negotiations": (True, False, True),
    "respond_to_negotiation": (False, True, False),
}


async def _listing(server: Any) -> tuple[list[Any], str | None]:
    async with Client(server, mode="legacy") as client:
        return (await client.list_tools()).tools, client.session.instructions


def _server(role: str = "admin", ctx: Any = None) -> Any:
    return create_mcp_server(discover_plugins(PLUGINS), role, lambda plugin, headers: ctx)  # type: ignore[arg-type]


def _branch(prop: dict[str, Any]) -> dict[str, Any]:
    """The non-null branch of an optional property (listed as ``type: [T, "null"]``, or as a
    two-branch ``anyOf`` when T is a reference)."""
    branches = [b for b in prop.get("anyOf", [prop]) if b.get("type") != "null"]
    assert len(branches) == 1, prop
    branch = dict(branches[0])
    if isinstance(branch.get("type"), list):
        branch["type"] = next(t for t in branch["type"] if t != "null")
    return branch


def _enum(schema: dict[str, Any], name: str) -> list[Any]:
    prop = _branch(schema["properties"][name])
    values = prop["items"]["enum"] if prop.get("type") == "array" else prop["enum"]
    return [v for v in values if v is not None]


def test_every_tool_is_titled_described_and_typed() -> None:
    tools, _ = anyio.run(_listing, _server())
    assert {t.name for t in tools} == set(HINTS)
    for t in tools:
        assert t.title and not re.search(r"[a-z][A-Z]", t.title) and t.title[0].isupper(), t.title
        assert t.annotations.title is None  # listed once, as the tool's title
        assert "title" not in t.input_schema  # no field titles either: the names say it
        hints = t.annotations
        assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint) == HINTS[t.name], t.name
        assert hints.open_world_hint is False
        for name, prop in t.input_schema.get("properties", {}).items():
            assert prop.get("description"), f"{t.name}.{name} has no description"
            assert "title" not in prop, f"{t.name}.{name}: title {prop.get('title')!r}"
        for definition in t.input_schema.get("$defs", {}).values():
            for name, prop in definition.get("properties", {}).items():
                assert prop.get("description") and "title" not in prop, f"{t.name} $defs {name}"
        assert t.output_schema and t.output_schema["type"] == "object", f"{t.name} lists no outputSchema"
        Draft202012Validator.check_schema(t.output_schema)


def test_enums_and_bounds_come_from_the_allow_lists() -> None:
    tools, _ = anyio.run(_listing, _server())
    schema = {t.name: t.input_schema for t in tools}
    output = {t.name: t.output_schema for t in tools}
    write = schema["memory-write"]
    assert _enum(write, "labels") == sorted(ALL_LABELS)
    assert _enum(write, "scope") == list(SCOPE_VALUES) == _enum(schema["memory-ingest"], "scope")
    edge = write["$defs"]["EdgeArg"]
    assert edge["properties"]["type"]["enum"] == sorted(RELATIONSHIP_TYPES)
    assert edge["properties"]["direction"]["enum"] == ["out", "in"] and edge["additionalProperties"] is False
    assert _enum(schema["memory-get"], "types") == sorted(RELATIONSHIP_TYPES)
    assert _enum(schema["memory-remove-relation"], "type") == sorted(RELATIONSHIP_TYPES)
    assert _enum(schema["memory-search"], "labels") == sorted(ALL_LABELS)
    assert _enum(schema["memory-search"], "retrievalClass") == list(RETRIEVAL_CLASSES)
    assert _enum(schema["memory-search"], "expandHops") == [0, 1]
    assert _enum(schema["memory-reindex"], "labels") == sorted(INDEXED_LABELS)
    assert _enum(schema["work-update"], "status") == list(OPEN_STATUSES)
    assert _enum(schema["work-complete"], "status") == list(DONE_STATUSES)
    assert _enum(schema["conversation-append"], "role") == ["user", "assistant", "system"]
    assert _enum(schema["add_entry"], "role") == ["user", "assistant", "system"]
    assert _enum(schema["task_transition"], "to") == list(PHASES) == _enum(schema["task_list"], "phase")
    assert _enum(schema["task_append_review"], "gate") == ["spec_review", "spec_gate", "quality_gate"]
    assert _enum(schema["task_append_review"], "verdict") == ["approved", "changes_requested", "blocked"]
    assert _enum(schema["list_opportunities"], "status") == list(STATUSES)
    assert _enum(schema["respond_to_negotiation"], "action") == ["propose", "counter", "accept", "reject", "question"]
    spec = schema["task_create"]["$defs"]["SpecArg"]
    assert spec["additionalProperties"] is False and spec.get("required", []) == []  # an incomplete spec is a draft

    def bounds(tool: str, field: str) -> tuple[int, int]:
        prop = _branch(schema[tool]["properties"][field])
        return prop["minimum"], prop["maximum"]

    assert bounds("memory-search", "limit") == (1, 500)
    assert bounds("conversation-search", "limit") == (1, 100)
    assert bounds("memory-get", "hops") == (0, 3) and bounds("memory-get", "budget") == (1, 500)
    assert bounds("memory-report-list", "limit") == (1, 100)
    assert bounds("list_entries", "limit") == (1, 100)
    assert schema["memory-report-write"]["properties"]["body"]["maxLength"] == 10_000
    # search hits leave room for a calibrated relevance and the nearest miss
    hit = output["memory-search"]["$defs"]["SearchHit"]
    assert _branch(hit["properties"]["relevance"]) == {"type": "number", "minimum": 0, "maximum": 1}
    assert "nearestMiss" in output["memory-search"]["properties"] and hit.get("additionalProperties", True) is True


def test_instructions_explain_tools_relevance_and_pins() -> None:
    tools, instructions = anyio.run(_listing, _server())
    assert instructions
    assert len(instructions) // 4 <= 600  # short: tools/list already describes every tool
    named = {name for name in HINTS if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", instructions)}
    assert {"memory-search", "memory-get", "memory-write", "work-create"} <= named <= set(HINTS)
    for phrase in ("`relevance`", "probability", "No relevant results", "nearest miss"):
        assert phrase in instructions
    assert "cannot widen it" in instructions and "`field: reason`" in instructions

    public_tools, public = anyio.run(_listing, _server("public"))
    assert public and "read-only" in public and "memory-write" not in public
    assert all(t.annotations.read_only_hint for t in public_tools)


@pytest.fixture()
def admin_server(db, account, data_root, embedder) -> Any:
    settings = load_settings(DATA_ROOT=data_root, ACCOUNT_ID=account.account_id)
    return _server("admin", pinned_context(settings, "admin", account, db=db, embedder=embedder))


BAD_INPUT = [
    (
        "memory-write",
        {"labels": ["Note"], "properties": {"name": "n"}, "scope": "secret"},
        "scope: unknown value 'secret'; allowed: public, shared, admin",
    ),
    ("memory-write", {"labels": ["Alien"], "properties": {"name": "n"}}, "labels[0]: unknown value 'Alien'; allowed: "),
    (
        "memory-search",
        {"query": "x", "labels": ["Chunks"]},
        "labels[0]: unknown value 'Chunks'; did you mean Chunk? allowed: ",
    ),
    (
        "memory-write",
        {
            "labels": ["Note"],
            "properties": {"name": "n"},
            "edges": [{"type": "KNOWS", "target": "x", "direction": "up"}],
        },
        "edges[0].direction: unknown value 'up'; allowed: out, in",
    ),
    ("memory-search", {"query": "x", "limit": 0}, "limit: an integer from 1 to 500 (got 0)"),
    ("memory-search", {"query": "x", "expandHops": 2}, "expandHops: unknown value 2; allowed: 0, 1"),
    ("memory-get", {"nodeIds": [], "hops": 1}, "nodeIds: at least 1 item(s)"),
    ("memory-report-write", {"title": "t", "body": "x" * 10_001}, "body: at most 10,000 characters (got 10,001)"),
    ("work-update", {"taskId": "t", "status": "completed"}, "status: unknown value 'completed'; allowed: pending"),
    ("work-create", {"kind": "k", "priority": 9}, "priority: an integer from 1 to 5 (got 9) or unknown value 9"),
    ("memory-search", {}, "query: Field required"),
    (
        "task_transition",
        {"taskId": "t", "to": "done", "expectedPhase": "spec_draft", "expectedVersion": 1},
        "to: unknown value 'done'; allowed: spec_draft, spec_review",
    ),
    ("task_create", {"spec": {"goal": "g", "deadline": "soon"}}, "spec.deadline: Extra inputs are not permitted"),
    ("task_append_review", {"taskId": "t", "gate": "spec_gate", "verdict": "fine"}, "verdict: unknown value 'fine'"),
    ("list_entries", {"memoryId": "m", "limit": 101}, "limit: an integer from 1 to 100 (got 101)"),
    ("add_entry", {"memoryId": "m", "summary": "s", "rawEntry": "r", "role": "bot"}, "role: unknown value 'bot'"),
    ("put_context", {"memoryId": "m", "content": ""}, "content: must not be empty"),
    ("list_opportunities", {"status": "won"}, "status: unknown value 'won'; allowed: latent, draft"),
    (
        "respond_to_negotiation",
        {"negotiationId": "n", "action": "haggle", "reasoning": "r", "ownUser": "peer", "otherUser": "peer"},
        "action: unknown value 'haggle'; allowed: propose, counter",
    ),
]


def test_input_the_schema_refuses_is_one_line_naming_the_field(admin_server: Any) -> None:
    async def calls() -> list[Any]:
        async with Client(admin_server, mode="legacy") as client:
            return [await client.call_tool(name, args) for name, args, _ in BAD_INPUT]

    for (name, _, expected), result in zip(BAD_INPUT, anyio.run(calls), strict=True):
        message = text(result)
        assert result.is_error and result.structured_content is None
        assert "\n" not in message and message.startswith(f"invalid arguments for {name}: "), message
        assert expected in message, message
