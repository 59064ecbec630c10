"""Paged listings (the operator console's tables): one check of ``offset``/``limit``, and rows
of JSON-able values.

A listing returns ``(total, rows)``: how many rows the caller's guards admit, and the page
``offset .. offset + limit`` of them in the listing's order.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime, time
from typing import Any

from ..errors import ValidationError

MAX_LIMIT = 200


def check_page(offset: object, limit: object) -> tuple[int, int]:
    """``offset`` a whole number >= 0 and ``limit`` one from 1 to ``MAX_LIMIT``, or a ValidationError."""
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise ValidationError("offset", f"a whole number >= 0 (got {offset!r}); 0 is the first row")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise ValidationError("limit", f"a whole number from 1 to {MAX_LIMIT} (got {limit!r})")
    return offset, limit


def plain(value: Any) -> Any:
    """A value read from Neo4j as JSON-able data: temporal values (the driver's or Python's)
    become ISO 8601 text, maps and lists (a point too) are converted item by item, anything
    else becomes its text."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    iso_format = getattr(value, "iso_format", None)  # neo4j.time DateTime, Date, Time, Duration (a tuple)
    if callable(iso_format):
        return iso_format()
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return str(value)
