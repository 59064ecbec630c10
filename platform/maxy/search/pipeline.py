"""The hybrid search pipeline, one call per box, in the order of the diagram:

    route -> expand query -> retrieve (vector + BM25) + keyword subscriptions -> fuse
          -> exact name, date mention, episode -> boost -> dedup -> threshold, sort, slice
          -> relevance and its cut -> expand graph

Each box is a small module named after it; ``SearchConfig`` says which optional boxes run
(all off in ``BASELINE``), and ``SearchRun`` records timings, counts and warnings and writes
the one ``[graph-search:hybrid]`` line per search.
"""

from __future__ import annotations

from ..db import Database
from ..embeddings.base import Embedder
from ..graph.guards import Caller
from . import (
    boost,
    date_mention,
    dedup,
    episode,
    exact_name,
    fusion,
    graph_expansion,
    query_expansion,
    relevance,
    route,
    subscriptions,
)
from .config import BASELINE, SearchConfig
from .hits import Hit
from .request import SearchRequest
from .retrieve import Where, retrieve
from .signals import load_signals
from .threshold import cut
from .time_filter import when
from .trace import SearchResponse, SearchRun


def hybrid(
    db: Database,
    caller: Caller,
    request: SearchRequest,
    embedder: Embedder | None,
    config: SearchConfig = BASELINE,
) -> SearchResponse:
    req = request.validated()
    run = SearchRun(caller, req.retrieval_class)
    plan = route.plan(caller, req.query, req.labels, req.retrieval_class, config, run)
    run.retrieval_class = plan.retrieval_class
    if plan.skip:
        return run.finish([], "skipped")
    queries = query_expansion.queries(caller, req.query, plan.retrieval_class, config, run)
    depth = max(config.candidate_k, req.limit)
    # When most of the candidates will be returned, their properties come with them (one round
    # trip fewer); otherwise only the few returned are loaded after fusion.
    carry = 2 * req.limit >= depth
    where = Where(caller, plan.labels, depth, req.session_id, when(req, "n"), properties=carry)
    found = retrieve(db, where, queries, embedder, plan, config, run)
    keyword_hits = subscriptions.keyword_list(db, where, config, run)
    mode = fusion.mode_for(plan.fusion, found.used_vector, found.used_bm25)
    with run.timed("fuse"):
        hits = fusion.fuse(
            [*found.vector_lists, *found.bm25_lists, keyword_hits],
            mode,
            vector_weight=plan.vector_weight,
            vector_norm=config.vector_norm or str(getattr(embedder, "fusion_vector_norm", "cosine")),
            rrf_k=config.rrf_k,
            owned=True,  # the lists are this search's own
        )
    for h in hits:
        h.fused = h.score
    hits = exact_name.promote(hits, found.exact)
    run.count(exact=len(found.exact), fused=len(hits), dated=date_mention.favour(hits, req.query))
    run.count(episode=episode.support(hits))
    reader = subscriptions.reader(caller, config)
    hits = _boost_and_dedup(db, reader, hits, config, run)
    hits = cut(hits, req.threshold, req.limit)
    with run.timed("load"):
        hits = graph_expansion.load_properties(db, reader, hits)
    # Relevance reads the query's cosines: without the vector path there is none to read.
    calibration = relevance.calibration_for(getattr(embedder, "name", None)) if found.used_vector else None
    with run.timed("relevance"):
        relevance.assess(hits, req.query, calibration, found.blank)
        if req.min_relevance is None:
            kept, nearest_miss = relevance.gate(hits, calibration.cut if calibration is not None else None)
        else:
            kept, nearest_miss = relevance.at_least(hits, req.min_relevance)
    run.count(below_cut=len(hits) - len(kept))
    if req.expand_hops == 1:
        with run.timed("graph_expansion"):
            graph_expansion.expand(db, caller, kept, when=when(req, "related"))
    return run.finish(kept, mode, nearest_miss)


def _boost_and_dedup(db: Database, reader: Caller, hits: list[Hit], config: SearchConfig, run: SearchRun) -> list[Hit]:
    """BOOST, then DEDUP, on the signals both read (fetched once, only when either runs)."""
    if (config.boosts or config.dedup) and hits:
        with run.timed("signals"):
            signals = load_signals(db, reader, hits)
        if config.boosts:
            run.count(boosted=boost.apply_boosts(hits, signals))
        if config.dedup:
            hits = dedup.dedup(hits, signals)
    run.count(deduped=len(hits))
    return hits
