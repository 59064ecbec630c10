"""Values as the console shows them: plain strings (the templates escape them), never markup."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

NAV = (
    ("/console/search", "Search"),
    ("/console/documents", "Documents"),
    ("/console/conversations", "Conversations"),
    ("/console/reports", "Reports"),
    ("/console/tasks", "Tasks"),
    ("/console/audit", "Audit"),
    ("/console/status", "Status"),
)
_TITLE_KEYS = ("name", "title", "text", "content", "summary", "description", "kind", "tool", "sessionId")
HIDDEN_PROPERTIES = frozenset({"embedding", "accountId", "nameKey", "aliasKeys"})


def title(properties: Mapping[str, Any] | None, fallback: str = "", limit: int = 90) -> str:
    """A one-line name for a node: its name, title or the start of its text."""
    for key in _TITLE_KEYS:
        value = (properties or {}).get(key)
        if isinstance(value, str) and value.strip():
            return clip(" ".join(value.split()), limit)
    return fallback


def clip(value: Any, limit: int = 240) -> str:
    text = value if isinstance(value, str) else shown(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shown(value: Any) -> str:
    """Any property value as text: lists and maps as JSON, None as an empty string."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"{value:.4g}" if isinstance(value, float) else str(value)
    return json.dumps(value, ensure_ascii=False, default=str)


def score(value: Any) -> str:
    return "" if value is None else f"{float(value):.3f}"


def visible(properties: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """A node's own properties to show, sorted, bookkeeping and vectors left out."""
    return [(k, shown(v)) for k, v in sorted((properties or {}).items()) if k not in HIDDEN_PROPERTIES]


def when(value: Any) -> str:
    """An ISO timestamp to the second."""
    text = shown(value)
    return text[:19].replace("T", " ") if len(text) >= 19 and text[10:11] == "T" else text


def segment(value: Any) -> str:
    """An id as one URL path segment: every reserved character escaped, "/" too."""
    return quote(shown(value), safe="")


FILTERS = {
    "seg": segment,
    "node_title": title,
    "clip": clip,
    "shown": shown,
    "score": score,
    "visible": visible,
    "when": when,
}
