"""The flagged stages of the pipeline (all off by default): routing, boosts, four-layer dedup.

Pure functions over hits and plain data; the pipeline fetches the few signal properties
they read (compiledTruth, backlinkCount, slug, canonicalName, name, text) in one query.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .hits import Hit

RETRIEVAL_CLASSES = ("entity", "temporal", "event", "general", "none")


@dataclass(frozen=True)
class Route:
    labels: tuple[str, ...] | None  # None: every index
    vector_weight: float
    skip: bool = False
    bm25_only: bool = False


# entity -> vector-heavy over people, companies, concepts; temporal -> BM25-heavy over events;
# event -> BM25 only over events; general -> balanced; none -> no lookup at all.
ROUTES: dict[str, Route] = {
    "entity": Route(("Person", "Company", "Concept", "Organization"), 0.85),
    "temporal": Route(("Event",), 0.3),
    "event": Route(("Event",), 0.0, bm25_only=True),
    "general": Route(None, 0.5),
    "none": Route(None, 0.0, skip=True),
}


def route(retrieval_class: str | None) -> Route | None:
    """The route for a class; None when no class was given (the request's own settings stand)."""
    if retrieval_class is None:
        return None
    return ROUTES.get(retrieval_class, ROUTES["general"])


# ---- boosts --------------------------------------------------------------------------
COMPILED_TRUTH_BOOST = 0.15


def backlink_bump(backlink_count: Any) -> float:
    """clamp(0.05 + 0.05 * log10(count), 0.05, 0.25); no backlinks, no bump."""
    try:
        count = float(backlink_count)
    except (TypeError, ValueError):
        return 0.0
    if count < 1:
        return 0.0
    return min(0.25, max(0.05, 0.05 + 0.05 * math.log10(count)))


def apply_boosts(hits: Iterable[Hit], signals: Mapping[str, Mapping[str, Any]]) -> int:
    """Multiply each hit's score by its boosts; returns how many hits were boosted."""
    boosted = 0
    for h in hits:
        sig = signals.get(h.node_id, {})
        factor = 1.0
        if sig.get("compiledTruth") not in (None, ""):
            factor += COMPILED_TRUTH_BOOST
        factor += backlink_bump(sig.get("backlinkCount"))
        if factor != 1.0:
            h.score *= factor
            boosted += 1
    return boosted


# ---- four-layer dedup ---------------------------------------------------------------
def content_hash(sig: Mapping[str, Any]) -> str | None:
    for key in ("compiledTruth", "content", "body", "text", "summary", "description"):
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
    """Keep the best-scored hit of every group sharing a nodeId, slug, name or content hash."""
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


SIGNAL_PROPERTIES = ("compiledTruth", "backlinkCount", "slug", "canonicalName", "name", "content", "body", "text", "summary", "description")
