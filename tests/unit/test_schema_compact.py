"""The schemas a server lists are compacted (no field titles, null defaults, nullable unions
written as type lists): every tool's compacted input and output schema accepts exactly the
documents its full schema accepts."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from maxy.mcp.schemas import compact
from maxy.mcp.server import create_mcp_server
from maxy.plugins.discovery import discover_plugins

from tests.hypothesis_profile import examples


@cache
def _schemas() -> tuple[tuple[str, dict[str, Any]], ...]:
    """(tool/direction, the full schema) of every installed tool."""
    server = create_mcp_server(discover_plugins(None), "admin", lambda plugin, headers: None, audit=False)
    out = []
    for tool in server._tool_manager.list_tools():
        out.append((f"{tool.name}:in", tool.parameters))
        if tool.output_schema is not None:
            out.append((f"{tool.name}:out", tool.output_schema))
    return tuple(out)


def _enums(node: Any) -> list[Any]:
    if isinstance(node, dict):
        return [*node.get("enum", []), *(v for value in node.values() for v in _enums(value))]
    if isinstance(node, list):
        return [v for value in node for v in _enums(value)]
    return []


def _names(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = list(node.get("properties", {})) if isinstance(node.get("properties"), dict) else []
        return own + [n for value in node.values() for n in _names(value)]
    if isinstance(node, list):
        return [n for value in node for n in _names(value)]
    return []


def _parts(node: Any) -> list[dict[str, Any]]:
    """Every sub-schema of ``node`` that stands alone (refers to no definition)."""
    if isinstance(node, list):
        return [p for value in node for p in _parts(value)]
    if not isinstance(node, dict):
        return []
    own = [node] if "$ref" not in json.dumps(node) and ("type" in node or "anyOf" in node) else []
    inner = [
        p
        for key, value in node.items()
        if key not in ("enum", "default", "examples")
        for p in _parts(list(value.values()) if key in ("properties", "$defs") and isinstance(value, dict) else value)
    ]
    return own + inner


def _documents(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Objects built from the schema's own field names and enum values, and plain JSON."""
    names = sorted(set(_names(schema))) or ["x"]
    leaves = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-3, 600),
        st.floats(-2, 2, allow_nan=False),
        st.text(max_size=5),
        st.sampled_from(_enums(schema) or [None]),
    )
    values = st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(names), inner, max_size=4)
        ),
        max_leaves=12,
    )
    return st.one_of(values, st.dictionaries(st.sampled_from(names), values, max_size=8))


def test_compacting_drops_titles_and_null_unions() -> None:
    full = {
        "properties": {
            "title": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "title": "Title"},
            "kind": {"anyOf": [{"enum": ["a", "b"], "type": "string"}, {"type": "null"}], "title": "Kind"},
            "ref": {"anyOf": [{"$ref": "#/$defs/R"}, {"type": "null"}]},
        },
        "$defs": {"R": {"type": "object", "title": "R", "additionalProperties": True}},
        "title": "x arguments",
        "type": "object",
    }
    assert compact(full) == {
        "properties": {
            "title": {"type": ["string", "null"]},
            "kind": {"enum": ["a", "b", None], "type": ["string", "null"]},
            "ref": {"anyOf": [{"$ref": "#/$defs/R"}, {"type": "null"}]},
        },
        "$defs": {"R": {"type": "object"}},
        "type": "object",
    }
    assert "description" not in json.dumps(compact({"description": "d", "properties": {}}, descriptions=False))


@settings(
    max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(data=st.data())
def test_a_compacted_schema_accepts_exactly_what_the_full_one_does(data: st.DataObject) -> None:
    name, full = data.draw(st.sampled_from(_schemas()))
    for descriptions in (True, False):
        small = compact(full, descriptions=descriptions)
        document = data.draw(_documents(full))
        verdict = Draft202012Validator(full).is_valid(document)
        assert Draft202012Validator(small).is_valid(document) == verdict, (name, document)


PROBES: list[Any] = [None, True, 0, 1, -1, 3, 600, 0.5, "", "x", "2026-05-07", [], ["x"], [None], {}, {"x": 1}]


def test_every_field_of_a_compacted_schema_accepts_exactly_what_the_full_one_does() -> None:
    """Each stand-alone field schema of every tool, probed with every kind of value (its own
    enum values and null included)."""
    parts = {json.dumps(part, sort_keys=True): (name, part) for name, full in _schemas() for part in _parts(full)}
    assert len(parts) > 100
    for name, part in parts.values():
        small = Draft202012Validator(compact(part))
        full = Draft202012Validator(part)
        for value in [*PROBES, *_enums(part), [*_enums(part)[:1]]]:
            assert small.is_valid(value) == full.is_valid(value), (name, part, value)


def test_the_listed_schemas_are_the_compacted_ones() -> None:
    server = create_mcp_server(discover_plugins(None), "admin", lambda plugin, headers: None, audit=False)
    listed = anyio.run(server.list_tools)
    search = next(t for t in listed if t.name == "memory-search")
    assert '"title"' not in json.dumps(search.input_schema) and '"title"' not in json.dumps(search.output_schema)
    assert search.input_schema["properties"]["limit"]["default"] == 10
    assert search.annotations is not None and search.annotations.title is None and search.title
