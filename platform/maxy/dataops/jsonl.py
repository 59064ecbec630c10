"""The account export format: JSON Lines, one record per line.

1. ``{"kind": "header", "format": "maxy-account", "version": 1, "accountId", "model",
   "dimensions", "withVectors", "exportedAt", "counts": {"nodes", "relationships"}}``
2. ``{"kind": "account", "accountId", "name", "createdAt"}``: the account record
3. ``{"kind": "node", "nodeId", "labels", "properties"}`` for every node of the account, live or
   soft-deleted (with its ``deletedAt``); ``embedding`` is among the properties only in an
   export made with vectors
4. ``{"kind": "relationship", "type", "start", "end", "properties"}`` for every relationship
   between two of those nodes (``start``/``end`` are nodeIds)

Values are what a node may hold (``maxy.graph.write``): strings, numbers, booleans and lists
of one of them; JSON keeps integers and floats apart, so they come back as they went out.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import ValidationError
from ..graph.allowlist import check_labels, check_property_name, check_relationship_type

FORMAT = "maxy-account"
VERSION = 1
VECTOR_PROPERTY = "embedding"


def check_value(value: Any, where: str) -> Any:
    """A storable property value, or a ValidationError naming where it was found."""
    if isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            raise ValidationError(where, "NaN is not a storable number")
        return value
    if isinstance(value, list):
        if any(isinstance(v, (list, dict)) or v is None for v in value):
            raise ValidationError(where, "a list may hold only strings, numbers or booleans")
        kinds = {bool if isinstance(v, bool) else (float if isinstance(v, (int, float)) else type(v)) for v in value}
        if len(kinds) > 1:
            raise ValidationError(where, "a list must hold values of one type")
        return [check_value(v, where) for v in value]
    raise ValidationError(where, f"a {type(value).__name__} value cannot be exported or imported")


def check_properties(props: Any, where: str) -> dict[str, Any]:
    if not isinstance(props, dict):
        raise ValidationError(where, "properties must be an object")
    for key, value in props.items():
        check_property_name(key, field=where, allow_reserved=True)
        check_value(value, f"{where}.{key}")
    return props


def check_node(record: dict[str, Any], where: str, account_id: str) -> dict[str, Any]:
    node_id = record.get("nodeId")
    if not isinstance(node_id, str) or not node_id:
        raise ValidationError(f"{where}.nodeId", "a node needs its nodeId")
    labels = record.get("labels")
    if not isinstance(labels, list):
        raise ValidationError(f"{where}.labels", "must be a list of labels")
    own = [label for label in labels if label != "Node"]
    if own:  # a node may carry the base label alone
        check_labels(own, field=f"{where}.labels")
    props = check_properties(record.get("properties"), f"{where}.properties")
    if props.get("nodeId") != node_id or props.get("accountId") != account_id:
        raise ValidationError(f"{where}.properties", "nodeId and accountId must match the node and the header")
    return record


def check_relationship(record: dict[str, Any], where: str) -> dict[str, Any]:
    check_relationship_type(record.get("type"), field=f"{where}.type")
    for end in ("start", "end"):
        if not isinstance(record.get(end), str):
            raise ValidationError(f"{where}.{end}", "must be the nodeId of a node in the file")
    check_properties(record.get("properties", {}), f"{where}.properties")
    return record
