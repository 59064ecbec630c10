"""IR metrics as pure functions (the trec_eval definitions BEIR reports)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def ndcg_at_k(ranked: Sequence[str], relevance: Mapping[str, int], k: int = 10) -> float:
    """nDCG@k with linear gains (trec_eval's ndcg_cut)."""
    dcg = sum(relevance.get(doc, 0) / math.log2(i + 2) for i, doc in enumerate(ranked[:k]))
    ideal = sorted((r for r in relevance.values() if r > 0), reverse=True)[:k]
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at_k(ranked: Sequence[str], relevance: Mapping[str, int], k: int = 100) -> float:
    relevant = {doc for doc, r in relevance.items() if r > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranked[:k])) / len(relevant)


def mrr_at_k(ranked: Sequence[str], relevance: Mapping[str, int], k: int = 10) -> float:
    for i, doc in enumerate(ranked[:k]):
        if relevance.get(doc, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile, q in [0, 100]."""
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)
