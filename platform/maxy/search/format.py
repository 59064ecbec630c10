"""The agent-facing text of a search, within the output budget, and the fields projection.

The default text leaves out bookkeeping properties (``maxy.graph.allowlist.BOOKKEEPING_PROPERTIES``:
how a node was stored, not what it says) on hits and related nodes alike; ``fields`` shows
exactly the properties it names, bookkeeping included. Entries written ``related.<name>``
narrow the related nodes the same way (a list holding only such entries leaves the hits whole).
A document hit (``collapse.DocumentHit``) shows its path instead of the titles it is made of.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from ..graph.allowlist import DOCUMENT_LABELS, bookkeeping_properties
from ..logs import log_line, short
from .collapse import PATH_PROPERTIES, DocumentHit
from .hits import Hit, Related

OUTPUT_BUDGET = 80_000
DIVIDER = "\n---\n"
RELATED_VALUE_CHARS = 300
LONG_VALUE_CHARS = 4_000
RELATED_PREFIX = "related."
PROPERTY_INDENT = "\n    "  # continuation lines of a hit's value, under its "  key: "
RELATED_INDENT = "\n        "  # continuation lines of a related node's value, under its "    --[...]" line
NO_RESULTS = "No results."
NO_RELEVANT_RESULTS = "No relevant results (nothing cleared the relevance cut). Nearest miss:"


@dataclass(frozen=True)
class Fields:
    """A caller's ``fields`` split in two: the hits' own, and the related nodes' (``related.x``).
    None on either side: that side is not narrowed (the default text, without bookkeeping)."""

    own: tuple[str, ...] | None = None
    related: tuple[str, ...] | None = None

    @classmethod
    def parse(cls, fields: Sequence[str] | None) -> Fields:
        if fields is None:
            return cls()
        wanted = list(dict.fromkeys(fields))
        own = tuple(f for f in wanted if not f.startswith(RELATED_PREFIX))
        related = tuple(f[len(RELATED_PREFIX) :] for f in wanted if f.startswith(RELATED_PREFIX))
        if related and not own:
            return cls(None, related)
        return cls(own, related or None)


def project(hits: Sequence[Hit], fields: Sequence[str] | None, account_id: str = "") -> None:
    """Narrow each hit's properties to ``fields`` (None: keep all; []: keep none).

    Unknown keys are skipped; a row lacking a key omits it. Related nodes are narrowed only by
    ``related.<name>`` entries, and keep their ``nodeId`` (their only handle).
    """
    if fields is None:
        return
    wanted = list(dict.fromkeys(fields))
    view = Fields.parse(wanted)
    returned = dropped = 0
    for h in hits:
        if view.own is not None:
            kept = {k: h.properties[k] for k in view.own if k in h.properties}
            returned += len(kept)
            dropped += len(h.properties) - len(kept)
            h.properties = kept
        if view.related is not None:
            keep = (*view.related, "nodeId")
            for r in h.related:
                r.properties = {k: r.properties[k] for k in keep if k in r.properties}
    log_line(
        "memory-search",
        accountId=short(account_id),
        fields=wanted,
        returnedProps=returned,
        droppedProps=dropped,
    )


def _value(value: Any, limit: int | None = None) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    if limit is not None and len(text) > limit:
        text = text[:limit] + f"… [{len(text) - limit} more chars]"
    return text


def _shown(
    props: dict[str, Any], labels: Collection[str], wanted: Sequence[str] | None, hidden: Collection[str] = ()
) -> list[str]:
    """The keys to show, sorted: the ``wanted`` ones, else all but bookkeeping and ``hidden``."""
    if wanted is not None:
        return sorted(k for k in props if k in wanted)
    skip = bookkeeping_properties(labels)
    return sorted(k for k in props if k not in skip and k not in hidden)


def _related_line(rel: Related, wanted: Sequence[str] | None = None) -> str:
    keys = [k for k in _shown(rel.properties, rel.labels, wanted) if k != "nodeId"]
    props = ", ".join(f"{k}: {_value(rel.properties[k], RELATED_VALUE_CHARS)}" for k in keys)
    props = props.replace("\n", RELATED_INDENT)
    labels = ", ".join(rel.labels)
    node_id = rel.properties.get("nodeId")
    node = f"[{labels}] (id: {node_id}) {{{props}}}" if node_id else f"[{labels}] {{{props}}}"
    if rel.direction == "outgoing":
        return f"    --[{rel.rel_type}]--> {node}"
    return f"    <--[{rel.rel_type}]-- {node}"


def header(hit: Hit) -> str:
    """``[Labels] (id: …) (relevance: 0.83)``, or ``(score: 0.837)`` while relevance is not known."""
    relevance = getattr(hit, "relevance", None)  # Hit.relevance lands with the relevance stage (relevance.py)
    rank = f"(relevance: {relevance:.2f})" if relevance is not None else f"(score: {hit.score:.3f})"
    return f"[{', '.join(hit.labels)}] (id: {hit.node_id}) {rank}"


def _folded_line(hit: DocumentHit) -> str:
    counts = Counter(label for m in hit.folded for label in m.labels if label in DOCUMENT_LABELS)
    parts = [
        label if counts[label] == 1 else f"{label} x{counts[label]}"
        for label in ("KnowledgeDocument", "Section", "Chunk")
        if counts[label]
    ]
    return "  also matched: " + ", ".join(parts)


def _path_covered(hit: DocumentHit) -> frozenset[str]:
    """What a document hit's path and passage already say: its titles, and a chunk's summary
    (sentences of its own content)."""
    if "Chunk" in hit.labels:
        return PATH_PROPERTIES | ({"summary"} if "content" in hit.properties else set())
    return PATH_PROPERTIES | {"title"}


def render_hit(
    hit: Hit,
    *,
    with_related: bool = True,
    value_limit: int | None = None,
    fields: Sequence[str] | None = None,
) -> str:
    view = Fields.parse(fields)
    lines = [header(hit)]
    hidden: Collection[str] = ()
    related = hit.related
    if isinstance(hit, DocumentHit):
        if hit.path:
            lines.append(f"  path: {hit.path}".replace("\n", PROPERTY_INDENT))
        if hit.source:
            lines.append(f"  source: {hit.source}".replace("\n", PROPERTY_INDENT))
        if hit.folded and not hit.passage_chunks:
            lines.append(_folded_line(hit))
        hidden = _path_covered(hit)
        if view.related is None:  # its section and neighbouring chunks: the path and the passage say it
            related = [r for r in related if not hit.same_document(r)]
    for key in _shown(hit.properties, hit.labels, view.own, hidden):
        text = _value(hit.properties[key], value_limit).replace("\n", PROPERTY_INDENT)
        lines.append(f"  {key}: {text}")
    if with_related and related:
        lines.append("  Related:")
        lines.extend(_related_line(r, view.related) for r in related)
    return "\n".join(lines)


def render(
    hits: Sequence[Hit],
    budget: int = OUTPUT_BUDGET,
    *,
    fields: Sequence[str] | None = None,
    nearest_miss: Hit | None = None,
) -> str:
    """All hits within ``budget`` characters: related nodes go first (from the last hit up),
    then long values are shortened, then trailing hits are left out, with a note saying so.

    ``fields`` is the caller's projection (None: the default text, without bookkeeping). With no
    hits, ``nearest_miss`` (the best hit the relevance cut left out) is shown compact, else
    ``No results.``."""
    if not hits:
        if nearest_miss is None:
            return NO_RESULTS
        block = render_hit(nearest_miss, with_related=False, fields=fields)
        if len(NO_RELEVANT_RESULTS) + 1 + len(block) > budget:
            block = render_hit(nearest_miss, with_related=False, value_limit=LONG_VALUE_CHARS, fields=fields)
        return (NO_RELEVANT_RESULTS + "\n" + block)[:budget]
    with_related = [True] * len(hits)
    blocks = [render_hit(h, fields=fields) for h in hits]

    def size() -> int:
        return sum(len(b) for b in blocks) + len(DIVIDER) * (len(blocks) - 1)

    for i in range(len(hits) - 1, -1, -1):
        if size() <= budget:
            break
        if hits[i].related:
            with_related[i] = False
            blocks[i] = render_hit(hits[i], with_related=False, fields=fields)
    if size() > budget:
        blocks = [
            render_hit(h, with_related=w, value_limit=LONG_VALUE_CHARS, fields=fields)
            for h, w in zip(hits, with_related, strict=True)
        ]
    omitted = 0
    while size() > budget and len(blocks) > 1:
        blocks.pop()
        omitted += 1
    text = DIVIDER.join(blocks)
    if len(text) > budget:
        text = text[: budget - 40]
    if omitted:
        text += f"\n--- [{omitted} more result(s) left out to fit the {budget}-character budget]"
    return text


def to_json(hits: Sequence[Hit], explain: bool = False) -> list[dict[str, Any]]:
    out = []
    for h in hits:
        row: dict[str, Any] = {
            "nodeId": h.node_id,
            "labels": h.labels,
            "score": round(h.score, 6),
            **({"relevance": h.relevance} if h.relevance is not None else {}),
            "properties": h.properties,
            "related": [
                {"type": r.rel_type, "direction": r.direction, "labels": r.labels, "properties": r.properties}
                for r in h.related
            ],
        }
        if isinstance(h, DocumentHit):
            row["path"] = h.path
            row["source"] = h.source
            row["folded"] = [{"nodeId": m.node_id, "labels": m.labels, "score": round(m.score, 6)} for m in h.folded]
            if h.passage_chunks:
                row["passage"] = {"chunks": h.passage_chunks, "cutChars": h.passage_cut}
        if explain:
            row["explain"] = h.explain()
        out.append(row)
    return out


def search_json(
    query: str, response: Any, *, warnings: Sequence[str] | None = None, explain: bool = False
) -> dict[str, Any]:
    """The one ``--json`` shape of a search, for ``maxy search`` (the pipeline's list) and ``maxy
    memory search`` (what agents receive) alike: the query, mode, warnings, stats, results and,
    when the relevance cut left out every hit, the nearest miss."""
    stats = {k: round(v, 2) if isinstance(v, float) else v for k, v in response.stats.items()}
    return {
        "query": query,
        "mode": response.mode,
        "warnings": list(response.warnings if warnings is None else warnings),
        "stats": stats,
        "results": to_json(response.hits, explain=explain),
        **({"nearestMiss": to_json([response.nearest_miss])[0]} if response.nearest_miss else {}),
    }


def brief_line(rank: int, hit: Any) -> str:
    """One line for a hit in a terminal list: rank, score, labels, title and a 160-character snippet."""
    props = hit.properties
    title = next((str(props[k]) for k in ("title", "name", "sectionTitle", "documentTitle") if props.get(k)), "")
    text = next((str(props[k]) for k in ("content", "summary", "description", "body", "text") if props.get(k)), "")
    snippet = " ".join(text.split())
    if title and snippet.startswith(title):
        snippet = snippet[len(title) :].lstrip(" ›")
    snippet = snippet[:160] + ("…" if len(snippet) > 160 else "")
    return f"{rank:2}. {hit.score:.3f} [{', '.join(hit.labels)}] {title} — {snippet}"
