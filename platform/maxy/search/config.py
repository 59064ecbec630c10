"""How a search runs: one frozen, keyword-only config object, and the named presets.

The request (``request.py``) says what to find; this says how: the fusion, its weights, each
list's depth and which optional stages run. Every stage is off in ``BASELINE``; the
``MAXY_GS_*`` switches and ``KNOWLEDGE_KEYWORDS`` turn them on through ``from_settings``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

from ..config import BM25_STATS, Settings
from ..errors import ValidationError
from .fusion import RRF_K, VECTOR_NORMS

Fusion = Literal["weighted", "rrf", "vector", "bm25"]
FUSIONS: tuple[str, ...] = ("weighted", "rrf", "vector", "bm25")
MAX_SUBSCRIPTIONS = 5  # keyword subscriptions searched per query
MAX_CANDIDATES = 1_000


@dataclass(frozen=True, kw_only=True)
class SearchConfig:
    fusion: Fusion = "weighted"
    vector_weight: float = 0.7  # weighted fusion: share of the vector path
    # How the weighted sum reads cosines, "cosine" or "minmax"; None: the embedder's own
    # (``fusion_vector_norm``: cosine for MiniLM and Ollama models, minmax for bge-small).
    vector_norm: str | None = None
    # Depth of each path's list before fusion. 150 lets entity memory find the fact a question
    # paraphrases (LoCoMo facts R@10 84.3 -> 85.1); messages keep 100 (MESSAGE_SEARCH).
    candidate_k: int = 150
    rrf_k: int = RRF_K
    # Whose statistics BM25 ranks by: "account" (the account's own when it is a minority of the
    # index, account_bm25.py) or "index" (Lucene's, over every account).
    bm25_stats: str = "account"
    route: bool = False  # ROUTE: the retrievalClass picks labels, weights and fusion
    expansion: bool = False  # EXPAND: LLM paraphrases of the query (needs ``llm``)
    hyde: bool = False  # HyDE: hypothetical answers on the vector path (needs ``llm``)
    boosts: bool = False  # BOOST: compiledTruth and backlink count
    dedup: bool = False  # DEDUP: slug, canonical name and content hash besides nodeId
    keywords: tuple[str, ...] = ()  # keyword subscriptions: one more ranked list into FUSE
    llm: Settings | None = dataclasses.field(default=None, repr=False)  # the LLM stages' client settings

    def __post_init__(self) -> None:
        if self.fusion not in FUSIONS:
            raise ValidationError("fusion", f"one of {', '.join(FUSIONS)}")
        weight = self.vector_weight
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0.0 <= weight <= 1.0:
            raise ValidationError("vectorWeight", "a number between 0 and 1")
        if self.bm25_stats not in BM25_STATS:
            raise ValidationError("bm25Stats", f"one of {', '.join(BM25_STATS)}")
        if self.vector_norm is not None and self.vector_norm not in VECTOR_NORMS:
            raise ValidationError("vectorNorm", f"one of {', '.join(VECTOR_NORMS)}")
        for name in ("candidate_k", "rrf_k"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_CANDIDATES:
                raise ValidationError(name, f"an integer from 1 to {MAX_CANDIDATES}")

    def with_(self, **changes: object) -> SearchConfig:
        """A copy with some knobs changed (validated again)."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    @classmethod
    def from_settings(cls, settings: Settings, base: SearchConfig | None = None) -> SearchConfig:
        """``base`` (default: the baseline) with the process's stage switches and subscriptions."""
        base = base or BASELINE
        return base.with_(
            fusion="rrf" if settings.MAXY_GS_RRF and base.fusion == "weighted" else base.fusion,
            route=base.route or settings.MAXY_GS_ROUTE,
            expansion=base.expansion or settings.MAXY_GS_EXPANSION,
            hyde=base.hyde or settings.MAXY_GS_HYDE,
            boosts=base.boosts or settings.MAXY_GS_BOOSTS,
            dedup=base.dedup or settings.MAXY_GS_DEDUP,
            keywords=base.keywords or subscribed_keywords(settings.KNOWLEDGE_KEYWORDS),
            bm25_stats=settings.MAXY_BM25_STATS if base.bm25_stats == "account" else base.bm25_stats,
            llm=settings,
        )


def subscribed_keywords(raw: object) -> tuple[str, ...]:
    """The usable keyword subscriptions: non-empty strings, trimmed, at most ``MAX_SUBSCRIPTIONS``."""
    if not isinstance(raw, (list, tuple)):
        return ()
    kept = [k.strip() for k in raw if isinstance(k, str) and k.strip()]
    return tuple(dict.fromkeys(kept))[:MAX_SUBSCRIPTIONS]


# The presets. BASELINE reproduces the measured defaults (no optional stage).
BASELINE = SearchConfig()
# Every stage that needs no LLM: routing, RRF, boosts and four-layer dedup.
NON_LLM = SearchConfig(fusion="rrf", route=True, boosts=True, dedup=True)
# Messages are short conversational turns: BM25 carries more of the signal than on documents
# (LoCoMo dev: vector alone R@5 0.39, BM25 0.60), so the fusion weighs the two paths evenly;
# a deeper list than 100 costs them recall (R@10 79.0 -> 78.8 at 150).
MESSAGE_SEARCH = SearchConfig(vector_weight=0.5, candidate_k=100)
