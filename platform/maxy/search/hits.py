"""The one record that flows through the pipeline."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Related:
    rel_type: str
    direction: str  # "outgoing" | "incoming"
    labels: list[str]
    properties: dict[str, Any]


@dataclass
class Hit:
    node_id: str
    labels: list[str]
    vector_score: float = 0.0  # best cosine score over the vector indexes and queries
    bm25_raw: float | None = None  # best raw Lucene score
    bm25_score: float = 0.0  # min-max normalised within the result set
    keyword_score: float = 0.0  # keyword subscriptions: 1.0 tagged, else BM25 min-max per keyword
    score: float = 0.0  # fused (and later boosted) score
    fused: float | None = None  # the score fusion gave, before name, date, episode and graph boosts
    boost: float = 1.0  # the factor the graph boosts (compiled truth, backlinks) multiplied the score by
    valid_from: str | None = None  # when the fact became true (validFrom), as the paths saw it
    happened: str | None = None  # when it happened: validFrom, else timestamp, else createdAt
    ranks: dict[str, int] = field(default_factory=dict)  # rank per list, for RRF and explain
    properties: dict[str, Any] = field(default_factory=dict)
    loaded: bool = False  # properties came with the path's own row (graph_expansion.load_properties skips it)
    related: list[Related] = field(default_factory=list)
    # Calibrated probability that the hit is relevant (relevance.py), worked out when first read:
    # a caller that keeps every hit and never looks (an evaluation hundreds of hits deep) skips it.
    _relevance: float | None = field(default=None, repr=False)
    _assess: Callable[[], float] | None = field(default=None, repr=False, compare=False)

    @property
    def relevance(self) -> float | None:
        if self._assess is not None:
            self._relevance, self._assess = self._assess(), None
        return self._relevance

    @relevance.setter
    def relevance(self, value: float | None) -> None:
        self._relevance, self._assess = value, None

    def assess_when_read(self, assess: Callable[[], float]) -> None:
        """Set the relevance to ``assess()``, called the first time it is read."""
        self._assess = assess

    def explain(self) -> dict[str, Any]:
        return {
            "nodeId": self.node_id,
            "vector": round(self.vector_score, 4),
            "bm25Raw": None if self.bm25_raw is None else round(self.bm25_raw, 4),
            "bm25": round(self.bm25_score, 4),
            "keyword": round(self.keyword_score, 4),
            "fused": None if self.fused is None else round(self.fused, 4),
            "boost": round(self.boost, 4),
            "score": round(self.score, 4),
            "relevance": self.relevance,
            "ranks": self.ranks,
        }
