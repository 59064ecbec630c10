"""ROUTE: the query's retrievalClass picks the labels searched, the fusion weights and the fusion.

The class comes from the request (``retrievalClass`` / ``--class``); when routing is on and
none is given, the query classifier supplies it. Without a class (routing off, or the
classifier unavailable) the request and the config stand as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..graph.guards import Caller
from .classifier import classify
from .config import Fusion, SearchConfig
from .trace import SearchRun


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


@dataclass(frozen=True)
class Plan:
    """What the later boxes use: labels, weight and fusion after routing."""

    labels: tuple[str, ...] | None
    vector_weight: float
    fusion: Fusion
    retrieval_class: str | None = None
    skip: bool = False


def route_for(retrieval_class: str | None) -> Route | None:
    """The route for a class; None when no class was given (the request's own settings stand)."""
    if retrieval_class is None:
        return None
    return ROUTES.get(retrieval_class, ROUTES["general"])


def plan(
    caller: Caller,
    query: str,
    labels: tuple[str, ...] | None,
    retrieval_class: str | None,
    config: SearchConfig,
    run: SearchRun,
) -> Plan:
    unrouted = Plan(labels, config.vector_weight, config.fusion, retrieval_class)
    if not config.route:
        return unrouted
    if retrieval_class is None:
        retrieval_class = _classify(caller, query, config, run)
    chosen = route_for(retrieval_class)
    if chosen is None:
        return unrouted
    if chosen.labels is not None:  # the route narrows the caller's labels, never widens them
        labels = tuple(x for x in chosen.labels if labels is None or x in labels) or chosen.labels
    return Plan(
        labels,
        chosen.vector_weight,
        "bm25" if chosen.bm25_only else config.fusion,
        retrieval_class,
        skip=chosen.skip,
    )


def _classify(caller: Caller, query: str, config: SearchConfig, run: SearchRun) -> str | None:
    """The classifier's class, or None when it is unavailable (no API key, timeout, bad answer)."""
    if config.llm is None:
        return None
    with run.timed("classify"):
        result = classify(config.llm, query, variant="public" if caller.pinned else "admin")
    if result.fallback:
        run.warn(f"query classifier unavailable, not routed: {result.reason}")
        return None
    return result.retrieval_class
