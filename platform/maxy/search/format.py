"""The agent-facing text of a search, within the output budget, and the fields projection."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..logs import log_line, short
from .hits import Hit, Related

OUTPUT_BUDGET = 80_000
DIVIDER = "\n---\n"
RELATED_VALUE_CHARS = 300
LONG_VALUE_CHARS = 4_000


def project(hits: Sequence[Hit], fields: Sequence[str] | None, account_id: str = "") -> None:
    """Narrow each hit's properties to ``fields`` (None: keep all; []: keep none).

    Unknown keys are skipped; a row lacking a key omits it. Related nodes are not projected.
    """
    if fields is None:
        return
    wanted = list(dict.fromkeys(fields))
    returned = dropped = 0
    for h in hits:
        kept = {k: h.properties[k] for k in wanted if k in h.properties}
        returned += len(kept)
        dropped += len(h.properties) - len(kept)
        h.properties = kept
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


def _related_line(rel: Related) -> str:
    props = ", ".join(f"{k}: {_value(v, RELATED_VALUE_CHARS)}" for k, v in sorted(rel.properties.items()))
    labels = ", ".join(rel.labels)
    if rel.direction == "outgoing":
        return f"    --[{rel.rel_type}]--> [{labels}] {{{props}}}"
    return f"    <--[{rel.rel_type}]-- [{labels}] {{{props}}}"


def render_hit(hit: Hit, *, with_related: bool = True, value_limit: int | None = None) -> str:
    lines = [f"[{', '.join(hit.labels)}] (id: {hit.node_id}) (score: {hit.score:.3f})"]
    for key in sorted(hit.properties):
        text = _value(hit.properties[key], value_limit).replace("\n", "\n    ")
        lines.append(f"  {key}: {text}")
    if with_related and hit.related:
        lines.append("  Related:")
        lines.extend(_related_line(r) for r in hit.related)
    return "\n".join(lines)


def render(hits: Sequence[Hit], budget: int = OUTPUT_BUDGET) -> str:
    """All hits within ``budget`` characters: related nodes go first (from the last hit up),
    then long values are shortened, then trailing hits are left out, with a note saying so."""
    if not hits:
        return "No results."
    with_related = [True] * len(hits)
    blocks = [render_hit(h) for h in hits]

    def size() -> int:
        return sum(len(b) for b in blocks) + len(DIVIDER) * (len(blocks) - 1)

    for i in range(len(hits) - 1, -1, -1):
        if size() <= budget:
            break
        if hits[i].related:
            with_related[i] = False
            blocks[i] = render_hit(hits[i], with_related=False)
    if size() > budget:
        blocks = [
            render_hit(h, with_related=w, value_limit=LONG_VALUE_CHARS) for h, w in zip(hits, with_related, strict=True)
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
            "properties": h.properties,
            "related": [
                {"type": r.rel_type, "direction": r.direction, "labels": r.labels, "properties": r.properties}
                for r in h.related
            ],
        }
        if explain:
            row["explain"] = h.explain()
        out.append(row)
    return out
