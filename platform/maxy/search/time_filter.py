"""The time filters of a search: what was true (now, as of an instant, or all history) and
when it happened (after / before). One Cypher condition, applied beside the guards on every
path (vector, BM25, keyword subscriptions) and on the related nodes of graph expansion."""

from __future__ import annotations

from ..graph.guards import Guard, both
from ..graph.validity import time_window_clause, validity_clause
from .request import SearchRequest


def when(request: SearchRequest, var: str) -> Guard:
    """The condition on ``var`` for this (validated) request. Related nodes pass the validity
    filter only: a hit's neighbours are shown whenever they happened."""
    valid = validity_clause(var, as_of=request.as_of, include_history=request.include_history)
    if var != "n":
        return valid
    return both(valid, time_window_clause(var, after=request.after, before=request.before))
