"""BOOST: compiledTruth +15%, backlinks log-scaled 5-25%. Pure functions over hits."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from .hits import Hit

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


def boost_factor(signals: Mapping[str, Any]) -> float:
    factor = 1.0
    if signals.get("compiledTruth") not in (None, ""):
        factor += COMPILED_TRUTH_BOOST
    return factor + backlink_bump(signals.get("backlinkCount"))


def apply_boosts(hits: Iterable[Hit], signals: Mapping[str, Mapping[str, Any]]) -> int:
    """Multiply each hit's score by its boosts; returns how many hits were boosted."""
    boosted = 0
    for h in hits:
        factor = boost_factor(signals.get(h.node_id, {}))
        if factor != 1.0:
            h.score *= factor
            h.boost *= factor
            boosted += 1
    return boosted
