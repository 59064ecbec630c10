"""The hybrid search pipeline, read top to bottom like the spec's diagram:

embed -> vector + bm25 -> fuse -> dedup -> threshold + sort + slice -> load -> expand graph
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

import neo4j

from ..db import Database
from ..embeddings.base import Embedder, EmbeddingError
from ..errors import ValidationError
from ..graph.allowlist import SEARCHABLE_LABELS, check_labels
from ..graph.guards import Caller
from ..logs import log_line, short
from ..config import Settings
from . import fusion, stages
from .expand import expand, load_properties, load_signals
from .expansion import expand_query
from .hyde import hypothetical_vectors
from .fusion import RRF_K
from .stages import RETRIEVAL_CLASSES
from .hits import Hit
from .retrieve import bm25_search, clear_index_cache, fulltext_available, recorded_model, vector_search

Fusion = Literal["weighted", "rrf", "vector", "bm25"]
MAX_QUERY_CHARS = 4_000
MAX_LIMIT = 500

_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="graph-search")


@dataclass(frozen=True)
class SearchRequest:
    query: str
    limit: int = 10
    labels: tuple[str, ...] | None = None
    fields: tuple[str, ...] | None = None
    expand_hops: int = 1
    threshold: float = 0.0
    fusion: Fusion = "weighted"
    vector_weight: float = 0.7
    candidate_k: int = 100  # depth of each path's list before fusion
    rrf_k: int = RRF_K
    retrieval_class: str | None = None  # from the query classifier; used when routing is on
    session_id: str | None = None  # only nodes of this conversation session (message search)
    # How the weighted sum reads cosines: "cosine" or "minmax"; None = the embedder's own
    # (``fusion_vector_norm``: cosine for MiniLM and Ollama models, minmax for bge-small).
    vector_norm: str | None = None

    def validated(self) -> SearchRequest:
        if not isinstance(self.query, str) or not self.query.strip():
            raise ValidationError("query", "a non-empty search text is required")
        if len(self.query) > MAX_QUERY_CHARS:
            raise ValidationError("query", f"at most {MAX_QUERY_CHARS} characters")
        if isinstance(self.limit, bool) or not isinstance(self.limit, int) or not 1 <= self.limit <= MAX_LIMIT:
            raise ValidationError("limit", f"an integer from 1 to {MAX_LIMIT}")
        if self.expand_hops not in (0, 1) or isinstance(self.expand_hops, bool):
            raise ValidationError("expandHops", "0 (compact, no related nodes) or 1 (one hop)")
        if self.fusion not in ("weighted", "rrf", "vector", "bm25"):
            raise ValidationError("fusion", "one of weighted, rrf, vector, bm25")
        if not 0.0 <= self.vector_weight <= 1.0:
            raise ValidationError("vectorWeight", "between 0 and 1")
        if not isinstance(self.threshold, (int, float)) or self.threshold < 0:
            raise ValidationError("threshold", "a number >= 0")
        if self.vector_norm is not None and self.vector_norm not in fusion.VECTOR_NORMS:
            raise ValidationError("vectorNorm", f"one of {', '.join(fusion.VECTOR_NORMS)}")
        labels = None
        if self.labels is not None:
            labels = tuple(check_labels(self.labels, field="labels"))
            outside = [lab for lab in labels if lab not in SEARCHABLE_LABELS]
            if outside:
                raise ValidationError("labels", f"not searchable: {', '.join(outside)}")
        fields = None
        if self.session_id is not None and (not isinstance(self.session_id, str) or not self.session_id.strip()):
            raise ValidationError("sessionId", "a non-empty session id")
        if self.fields is not None:
            if isinstance(self.fields, str) or not all(isinstance(f, str) for f in self.fields):
                raise ValidationError("fields", "a list of property names")
            fields = tuple(self.fields)
        return SearchRequest(
            self.query.strip(),
            self.limit,
            labels,
            fields,
            self.expand_hops,
            float(self.threshold),
            self.fusion,  # noqa
            self.vector_weight,
            max(self.candidate_k, self.limit),
            self.rrf_k,
            self.retrieval_class if self.retrieval_class in RETRIEVAL_CLASSES else None,
            self.session_id,
            self.vector_norm,
        )


@dataclass(frozen=True)
class SearchFlags:
    """The MAXY_GS_* stage switches; all off reproduces the baseline pipeline exactly."""

    expansion: bool = False
    hyde: bool = False
    route: bool = False
    rrf: bool = False
    boosts: bool = False
    dedup: bool = False
    settings: Settings | None = None  # for the LLM stages (ANTHROPIC_API_KEY)

    @classmethod
    def from_settings(cls, settings: Settings) -> SearchFlags:
        return cls(
            settings.MAXY_GS_EXPANSION,
            settings.MAXY_GS_HYDE,
            settings.MAXY_GS_ROUTE,
            settings.MAXY_GS_RRF,
            settings.MAXY_GS_BOOSTS,
            settings.MAXY_GS_DEDUP,
            settings,
        )


OFF = SearchFlags()


@dataclass
class SearchResponse:
    hits: list[Hit]
    mode: str
    stats: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def hybrid(
    db: Database,
    caller: Caller,
    request: SearchRequest,
    embedder: Embedder | None,
    flags: SearchFlags = OFF,
) -> SearchResponse:
    started = time.perf_counter()
    req = request.validated()
    timings: dict[str, float] = {}
    warnings: list[str] = []

    # ROUTE: the retrievalClass picks a label filter and fusion weights.
    labels, vector_weight, fusion_mode = req.labels, req.vector_weight, req.fusion
    if flags.rrf and fusion_mode == "weighted":
        fusion_mode = "rrf"
    chosen = stages.route(req.retrieval_class) if flags.route else None
    if chosen is not None:
        if chosen.skip:
            _log(caller, req, {}, "skipped", started)
            return SearchResponse([], "skipped", {"final": 0, "ms": _ms(started)}, [])
        if chosen.labels is not None:
            labels = tuple(x for x in chosen.labels if labels is None or x in labels) or chosen.labels
        vector_weight = chosen.vector_weight
        if chosen.bm25_only:
            fusion_mode = "bm25"

    # EXPAND: paraphrases, each searched by both paths, unioned before fusion.
    queries = [req.query]
    if flags.expansion and flags.settings is not None:
        t_exp = time.perf_counter()
        queries = expand_query(flags.settings, caller.account_id, req.query, req.retrieval_class)
        timings["query_expansion_ms"] = _ms(t_exp)

    has_fulltext = fulltext_available(db)
    use_bm25 = fusion_mode != "vector" and has_fulltext
    use_vector = fusion_mode != "bm25" and embedder is not None
    if use_vector:
        made_by = recorded_model(db)
        if made_by is not None and made_by != embedder.name:  # type: ignore[union-attr]
            # Cosines between two models' vectors mean nothing: keep the BM25 half only
            # (also when the caller asked for vector-only results).
            use_vector = False
            use_bm25 = has_fulltext
            warnings.append(
                f"stored vectors come from {made_by} but the embedder is {embedder.name}: "  # type: ignore[union-attr]
                "BM25-only results (set EMBED_MODEL back, or run `maxy reindex --recreate`)"
            )
    if fusion_mode != "vector" and not has_fulltext:
        warnings.append("full-text index entity_search is missing: vector-only results (run `maxy schema apply`)")

    bm25_future = None
    if use_bm25:
        t0 = time.perf_counter()
        bm25_future = _pool.submit(bm25_search, db, caller, queries, labels, req.candidate_k, req.session_id)

    vector_lists: list[list[Hit]] = []
    if use_vector:
        t0v = time.perf_counter()
        try:
            vectors = list(embedder.embed(queries))  # type: ignore[union-attr]
            if flags.hyde and flags.settings is not None:
                # HyDE: hypothetical answers, embedded, searched beside the query on the vector path.
                t_hyde = time.perf_counter()
                vectors += list(hypothetical_vectors(flags.settings, caller.account_id, req.query, embedder))  # type: ignore[arg-type]
                timings["hyde_ms"] = _ms(t_hyde)
        except EmbeddingError as err:
            vectors = []
            use_vector = False
            warnings.append(f"embedder unavailable, BM25-only results: {err}")
        timings["embed_ms"] = _ms(t0v)
        if vectors:
            t1 = time.perf_counter()
            vector_lists = vector_search(db, caller, vectors, labels, req.candidate_k, req.session_id)
            timings["vector_ms"] = _ms(t1)
    elif fusion_mode != "bm25" and embedder is None:
        warnings.append("no embedder configured: BM25-only results")

    bm25_lists: list[list[Hit]] = []
    if bm25_future is not None:
        try:
            bm25_lists = bm25_future.result()
        except neo4j.exceptions.ClientError as err:
            # The index went away after discovery (dropped for a rebuild): degrade, never fail.
            clear_index_cache()
            use_bm25 = False
            warnings.append(f"full-text search failed, vector-only results: {err.message}")
        timings["bm25_ms"] = _ms(t0)

    for w in warnings:
        log_line("graph-search:hybrid", "warn", level=logging.WARNING, accountId=short(caller.account_id), reason=w)

    # Fuse: one map keyed by nodeId, best score per path.
    t2 = time.perf_counter()
    vector_hits = [h for lst in vector_lists for h in lst]
    bm25_hits = [h for lst in bm25_lists for h in lst]
    merged = fusion.merge(vector_hits, bm25_hits)
    if use_vector and use_bm25:
        mode = "rrf" if fusion_mode == "rrf" else "hybrid"
    else:
        mode = "vector" if use_vector else ("bm25" if use_bm25 else "none")
    hits = list(merged.values())
    if mode == "rrf":
        fusion.rrf(hits, req.rrf_k)
    elif mode == "hybrid":
        norm = req.vector_norm or getattr(embedder, "fusion_vector_norm", "cosine")
        fusion.weighted(hits, vector_weight, norm if norm in fusion.VECTOR_NORMS else "cosine")
    elif mode == "vector":
        for h in hits:
            h.score = h.vector_score
    else:
        fusion.normalise_bm25(hits)
        for h in hits:
            h.score = h.bm25_score
    fused = len(hits)
    boosted = 0
    if (flags.boosts or flags.dedup) and hits:
        signals = load_signals(db, caller, hits)
        if flags.boosts:  # BOOST: compiledTruth +15%, backlinks log-scaled 5-25%
            boosted = stages.apply_boosts(hits, signals)
        if flags.dedup:  # DEDUP: nodeId, slug, canonical name, content hash
            hits = stages.dedup(hits, signals)
    # Without the flag, dedup is by nodeId only: the merge map already did it.
    deduped = len(hits)
    hits = [h for h in hits if h.score >= req.threshold]
    hits.sort(key=lambda h: (-h.score, h.node_id))
    hits = hits[: req.limit]
    timings["fuse_ms"] = _ms(t2)

    t3 = time.perf_counter()
    hits = load_properties(db, caller, hits)
    timings["load_ms"] = _ms(t3)
    t4 = time.perf_counter()
    if req.expand_hops == 1:
        expand(db, caller, hits)
    timings["expand_ms"] = _ms(t4)

    total = _ms(started)
    stats = {
        "expansions": len(queries) - 1,
        "vector": len(vector_hits),
        "bm25": len(bm25_hits),
        "fused": fused,
        "boosted": boosted,
        "deduped": deduped,
        "final": len(hits),
        "ms": total,
        **timings,
    }
    _log(caller, req, stats, mode, started)

    return SearchResponse(hits, mode, stats, warnings)


def _log(caller: Caller, req: SearchRequest, stats: dict[str, Any], mode: str, started: float) -> None:
    """The one line per call; counts come from the response's stats (absent: 0)."""
    log_line(
        "graph-search:hybrid",
        accountId=short(caller.account_id),
        retrievalClass=req.retrieval_class or "none",
        expansions=stats.get("expansions", 0),
        vector=stats.get("vector", 0),
        bm25=stats.get("bm25", 0),
        fused=stats.get("fused", 0),
        boosted=stats.get("boosted", 0),
        deduped=stats.get("deduped", 0),
        final=stats.get("final", 0),
        mode=mode,
        ms=round(_ms(started)),
        expand_ms=round(stats.get("query_expansion_ms", 0.0)),
        graph_ms=round(stats.get("expand_ms", 0.0)),
    )


def _ms(since: float) -> float:
    return (time.perf_counter() - since) * 1000
