"""THRESHOLD, SORT, SLICE: the hits at or above the threshold, best first, at most ``limit``."""

from __future__ import annotations

from .hits import Hit


def cut(hits: list[Hit], threshold: float, limit: int) -> list[Hit]:
    kept = [h for h in hits if h.score >= threshold]
    kept.sort(key=lambda h: (-h.score, h.node_id))
    return kept[:limit]
