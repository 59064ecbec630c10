"""Which text of a node is embedded.

A fact about someone starts with who it is about (``about``, unless its text already names
them: repeating the name drowns what the fact says) and ends with when it became true in words (``dateText``, "8 May 2023"). Nodes that carry a ``summary`` are embedded by it (the KnowledgeDocument hierarchy's
semantic anchors); other nodes by their title/name plus their main text. An entity (a person,
an organisation, a product ...) often has no main text: its other short descriptive values
follow as ``key: value`` lines ("jobTitle: engineer"), so what an agent wrote about it is
what its vector means.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .allowlist import EMBEDDED_LABELS, ENTITY_LABELS, RESERVED_PROPERTIES
from .names import name_key

MAX_EMBED_CHARS = 4000

_HEAD_PROPS = ("title", "name", "displayName", "headline", "subject", "question")
_BODY_PROPS = ("description", "body", "content", "text", "answer", "reviewBody", "compiledTruth", "notes", "caption")
# Values that say nothing about what an entity is (ids, links, times).
_NOT_DESCRIPTIVE = frozenset(
    {"about", "url", "sameAs", "image", "slug", "validFrom", "validUntil", "evidence", "source"}
)
MAX_DESCRIPTIVE_CHARS = 300


def is_embedded(labels: Sequence[str]) -> bool:
    return any(label in EMBEDDED_LABELS for label in labels)


def embedding_text(labels: Sequence[str], props: Mapping[str, Any]) -> str | None:
    """The text to embed, or None when the node has no indexed label or no text."""
    if not is_embedded(labels):
        return None
    head = [str(props[p]).strip() for p in _HEAD_PROPS if isinstance(props.get(p), str) and props[p].strip()]
    summary = props.get("summary")
    if isinstance(summary, str) and summary.strip():
        parts = head[:1] + [summary.strip()]
    else:
        body = [str(props[p]).strip() for p in _BODY_PROPS if isinstance(props.get(p), str) and props[p].strip()]
        parts = head + body
        if ENTITY_LABELS.intersection(labels):
            parts += _descriptive(props)
    about = _names(props.get("about"))
    if about and parts and not _mentions(" ".join(parts), about):
        parts[0] = f"{about}: {parts[0]}"
    if isinstance(props.get("dateText"), str) and props["dateText"]:
        parts.append(f"({props['dateText']})")
    text = "\n".join(dict.fromkeys(parts))  # drop exact repeats, keep order
    return text[:MAX_EMBED_CHARS] or None


def _descriptive(props: Mapping[str, Any]) -> list[str]:
    """``key: value`` lines for an entity's other short text, number and list values."""
    lines = []
    for key, value in sorted(props.items()):
        if key in _HEAD_PROPS or key in _BODY_PROPS or key in _NOT_DESCRIPTIVE or key in RESERVED_PROPERTIES:
            continue
        if key.endswith("Id") or key == "summary":
            continue
        if isinstance(value, list):
            value = ", ".join(str(v) for v in value if isinstance(v, (str, int, float)))
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            continue
        text = str(value).strip()
        if text and len(text) <= MAX_DESCRIPTIVE_CHARS:
            lines.append(f"{key}: {text}")
    return lines


def _names(value: object) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list):
        return ", ".join(v.strip() for v in value if isinstance(v, str) and v.strip())
    return ""


def _mentions(text: str, names: str) -> bool:
    """True when every word of every name in ``names`` (comma-separated) is a word of ``text``."""
    words = set((name_key(text) or "").split())
    return all(set((name_key(n) or "").split()) <= words for n in names.split(","))
