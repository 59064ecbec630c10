"""Which text of a node is embedded.

Nodes that carry a ``summary`` are embedded by it (the KnowledgeDocument hierarchy's
semantic anchors); other nodes by their title/name plus their main text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .allowlist import EMBEDDED_LABELS

MAX_EMBED_CHARS = 4000

_HEAD_PROPS = ("title", "name", "displayName", "headline", "subject", "question")
_BODY_PROPS = ("description", "body", "content", "text", "answer", "reviewBody", "compiledTruth", "notes", "caption")


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
    text = "\n".join(dict.fromkeys(parts))  # drop exact repeats, keep order
    return text[:MAX_EMBED_CHARS] or None
