"""DEDUP: keep the best hit of every group sharing a nodeId, slug, canonical name or content
hash. Without the flag, dedup is by nodeId only, which FUSE's merge already did."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from .hits import Hit

_CONTENT_KEYS = ("compiledTruth", "content", "body", "text", "summary", "description")


def content_hash(sig: Mapping[str, Any]) -> str | None:
    for key in _CONTENT_KEYS:
        value = sig.get(key)
        if isinstance(value, str) and value.strip():
            return hashlib.sha256(" ".join(value.split()).lower().encode()).hexdigest()
    return None


def dedup_keys(sig: Mapping[str, Any]) -> list[str]:
    keys = []
    slug = sig.get("slug")
    if isinstance(slug, str) and slug.strip():
        keys.append("slug:" + slug.strip().lower())
    name = sig.get("canonicalName") or sig.get("name")
    if isinstance(name, str) and name.strip():
        keys.append("name:" + " ".join(name.split()).lower())
    digest = content_hash(sig)
    if digest:
        keys.append("hash:" + digest)
    return keys


def dedup(hits: list[Hit], signals: Mapping[str, Mapping[str, Any]]) -> list[Hit]:
    """The best-scored hit of every group, best first."""
    kept: list[Hit] = []
    seen_ids: set[str] = set()
    seen_keys: set[str] = set()
    for h in sorted(hits, key=lambda x: (-x.score, x.node_id)):
        if h.node_id in seen_ids:
            continue
        keys = dedup_keys(signals.get(h.node_id, {}))
        if any(k in seen_keys for k in keys):
            continue
        seen_ids.add(h.node_id)
        seen_keys.update(keys)
        kept.append(h)
    return kept
