"""IR metrics as pure functions (the trec_eval definitions BEIR reports)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any


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


def log_fields(figures: Mapping[str, float]) -> dict[str, Any]:
    """``recall@5`` -> ``recall_at_5``: figures as log-line keys."""
    return {k.replace("@", "_at_"): v for k, v in figures.items()}


class RecallByCategory:
    """Recall@k per question, gathered overall and per category, summarised as the
    conversation and memory evaluations report it."""

    def __init__(self, ks: Sequence[int]):
        self.ks = tuple(ks)
        self.totals: dict[str, dict[int, list[float]]] = {}
        self.per_question: list[dict[str, float]] = []  # in the order added, for the folds

    def add(self, category: str, found_at: Sequence[set[str]], evidence: Sequence[str]) -> None:
        """``found_at[i]``: the evidence ids among the first ``ks[i]`` results."""
        wanted = set(evidence)
        recalls = [len(wanted & found) / len(wanted) if wanted else 0.0 for found in found_at]
        self.per_question.append({f"recall@{k}": r for k, r in zip(self.ks, recalls, strict=True)})
        for bucket in ("overall", category or "uncategorised"):
            by_k = self.totals.setdefault(bucket, {k: [] for k in self.ks})
            for k, r in zip(self.ks, recalls, strict=True):
                by_k[k].append(r)

    def _summary(self, bucket: dict[int, list[float]]) -> dict[str, float]:
        return {f"recall@{k}": round(sum(v) / len(v), 4) if v else 0.0 for k, v in bucket.items()}

    def result(self, latencies: Sequence[float]) -> dict[str, Any]:
        overall = self.totals.get("overall", {k: [] for k in self.ks})
        return {
            "overall": self._summary(overall),
            "by_category": {
                c: dict(self._summary(b), questions=len(b[self.ks[0]]))
                for c, b in sorted(self.totals.items())
                if c != "overall"
            },
            "questions": len(overall[self.ks[0]]),
            "p50_ms": round(percentile(latencies, 50), 1),
            "p95_ms": round(percentile(latencies, 95), 1),
        }
