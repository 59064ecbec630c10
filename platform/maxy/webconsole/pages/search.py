"""Search: the memory-search pipeline with its filters, each hit's scores and its related nodes."""

from __future__ import annotations

from typing import Any

from ...config import SCOPE_VALUES
from ...errors import ValidationError
from ...graph.allowlist import SEARCHABLE_LABELS
from ...identifiers import check_agent_slug
from ...memory.recall import recall
from ...search.config import FUSIONS
from ...search.request import SearchRequest
from ..views import Console, View

MAX_LIMIT = 50


def _number(params: Any, name: str, default: float | None, cast: type = float) -> Any:
    raw = (params.get(name) or "").strip()
    if not raw:
        return default
    try:
        return cast(raw)
    except ValueError:
        raise ValidationError(name, f"{raw!r} is not a number") from None


def _form(params: Any) -> dict[str, Any]:
    """The request's filters, as the form shows them back (strings and lists, unchecked)."""
    return {
        "q": (params.get("q") or "").strip(),
        "labels": [v for v in params.getlist("label") if v],
        "scopes": [v for v in params.getlist("scope") if v],
        "agent": (params.get("agent") or "").strip(),
        "after": (params.get("after") or "").strip(),
        "before": (params.get("before") or "").strip(),
        "fusion": (params.get("fusion") or "").strip(),
        "minRelevance": (params.get("minRelevance") or "").strip(),
        "limit": (params.get("limit") or "").strip() or "10",
        "explain": params.get("explain") == "1",
    }


def search(console: Console, request: Any, view: View) -> Any:
    params = request.query_params
    form = _form(params)
    choices = {"labels": sorted(SEARCHABLE_LABELS), "scopes": SCOPE_VALUES, "fusions": FUSIONS}
    if not form["q"]:
        return console.page(request, view, "search.html", form=form, choices=choices, response=None, hits=[])
    limit = _number(params, "limit", 10, int)
    if not 1 <= limit <= MAX_LIMIT:
        raise ValidationError("limit", f"from 1 to {MAX_LIMIT}")
    if form["fusion"] and form["fusion"] not in FUSIONS:
        raise ValidationError("fusion", f"one of {', '.join(FUSIONS)}")
    agent = check_agent_slug(form["agent"], field="agent") if form["agent"] else None
    caller = view.ctx.caller.narrowed(tuple(form["scopes"]) or None, agent)
    req = SearchRequest(
        form["q"],
        limit=limit,
        labels=tuple(form["labels"]) or None,
        after=form["after"] or None,
        before=form["before"] or None,
        min_relevance=_number(params, "minRelevance", None),
    )
    response = recall(
        console.db,
        caller,
        console.embedder,
        view.ctx.settings,
        req,
        keywords=view.ctx.knowledge_keywords,
        fusion=form["fusion"] or None,
    )
    hits = [_hit(h) for h in response.hits]
    miss = _hit(response.nearest_miss) if response.nearest_miss is not None else None
    return console.page(
        request, view, "search.html", form=form, choices=choices, response=response, hits=hits, miss=miss
    )


def _hit(hit: Any) -> dict[str, Any]:
    return {
        "nodeId": hit.node_id,
        "labels": hit.labels,
        "properties": hit.properties,
        "relevance": hit.relevance,
        "score": hit.score,
        "path": getattr(hit, "path", ""),  # a document hit's: Document title › Section heading
        "source": getattr(hit, "source", ""),  # and the file it came from
        "explain": hit.explain(),
        "related": [
            {"type": r.rel_type, "direction": r.direction, "labels": r.labels, "properties": r.properties}
            for r in hit.related
        ],
    }


ROUTES = [("/search", search, ["GET"])]
