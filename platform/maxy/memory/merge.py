"""How a write that resolves to an existing entity merges into it.

- ``name`` stays as first written; a different spelling the write used joins ``alternateName``
  (so it is known by both, and a later write with either spelling resolves here too);
- list values (``alternateName``, ``aliases``, tags ...) are united, first-seen order;
- any other value the write gives replaces the stored one (the latest statement wins); values
  it does not mention are kept;
- labels are united and edges are added (an edge that already exists is not doubled);
- scope and agents stay those of the existing node.
"""

from __future__ import annotations

from typing import Any


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _unite(old: Any, new: Any) -> list[Any]:
    return list(dict.fromkeys([*_as_list(old), *_as_list(new)]))


def merge_properties(existing: dict[str, Any], incoming: dict[str, Any]) -> dict[str, Any]:
    merged = dict(existing)
    for key, value in incoming.items():
        if value is None or key == "name":
            continue
        if isinstance(value, list) or isinstance(existing.get(key), list) and key in ("alternateName", "aliases"):
            merged[key] = _unite(existing.get(key), value)
        else:
            merged[key] = value
    old_name, new_name = existing.get("name"), incoming.get("name")
    if isinstance(new_name, str) and new_name.strip():
        if not isinstance(old_name, str) or not old_name.strip():
            merged["name"] = new_name
        elif new_name.strip() != old_name.strip():
            known = [a for a in _as_list(merged.get("alternateName")) if isinstance(a, str)]
            if new_name.strip() not in known:
                merged["alternateName"] = [*known, new_name.strip()]
    return merged
