"""The JSON schemas a server lists, without what costs an agent tokens and tells it nothing.

pydantic writes a ``title`` for every field (``"title": "Limit"`` beside ``"limit"``), spells an
optional value as ``anyOf: [{type: T}, {type: null}]`` with ``default: null``, and states
``additionalProperties: true``, which is JSON Schema's default. :func:`compact` drops the
titles and those defaults and writes the optional value as ``type: [T, "null"]``; the schema
accepts exactly the same documents (a client that checks structuredContent against the
outputSchema gets the same verdicts). Descriptions, enums, bounds and real defaults stay: they
are what the agent reads to call a tool. An output schema is listed without its descriptions
(``descriptions=False``): it tells a client what shape comes back, and what each field means is
in the tools' documentation, not in every agent's context.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_SCHEMA_MAPS = ("properties", "$defs", "patternProperties", "definitions")
_SCHEMA_VALUES = ("items", "not", "contains", "if", "then", "else", "propertyNames")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_NULL = {"type": "null"}


def compact(schema: Mapping[str, Any], *, descriptions: bool = True) -> dict[str, Any]:
    """``schema`` without field titles, null defaults and ``additionalProperties: true`` (and
    without descriptions unless ``descriptions``), its ``anyOf [T, null]`` written as
    ``type: [T, "null"]`` where that means the same."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "description" and isinstance(value, str) and not descriptions:
            continue
        if (key == "default" and value is None) or (key == "additionalProperties" and value is True):
            continue
        if key in _SCHEMA_MAPS and isinstance(value, Mapping):
            out[key] = {name: _node(sub, descriptions) for name, sub in value.items()}
        elif key in _SCHEMA_VALUES or key == "additionalProperties":
            out[key] = _node(value, descriptions)
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [_node(sub, descriptions) for sub in value]
        else:
            out[key] = value
    return _nullable(out)


def _node(value: Any, descriptions: bool) -> Any:
    return compact(value, descriptions=descriptions) if isinstance(value, Mapping) else value


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    """``{anyOf: [S, {type: null}], ...}`` as ``S`` with ``null`` added to its type (and enum),
    when ``S`` is one plain type; anything else (a ``$ref``, a union) stays as it is."""
    branches = node.get("anyOf")
    if not isinstance(branches, list) or len(branches) != 2 or _NULL not in branches:
        return node
    other = branches[1 - branches.index(_NULL)]
    if not isinstance(other, dict) or not isinstance(other.get("type"), str):
        return node
    if any(key in other for key in ("$ref", "anyOf", "oneOf", "allOf", "const")) or set(other) & set(node) - {"anyOf"}:
        return node
    merged = {key: value for key, value in node.items() if key != "anyOf"}
    merged.update(other)
    merged["type"] = [other["type"], "null"]
    if "enum" in other:
        merged["enum"] = [*other["enum"], None]
    return merged
