"""Keyword subscriptions (``KNOWLEDGE_KEYWORDS``): one more ranked list into FUSE.

For each subscribed keyword, the BM25 hits (min-max scaled per keyword) and the nodes tagged
with it in their ``keywords`` list (scored as a perfect match, newest first). The list keeps
every guard but the agent tag: a subscription reaches the whole scope by design, so the
loading boxes read subscribed hits through :func:`reader`. :func:`subscribed` is the same
search on its own, which an agent's knowledge build uses to broaden what is tagged for it.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..db import Database
from ..graph.guards import Caller, Guard, both, generic_guard
from .bm25 import bm25_search
from .config import SearchConfig
from .fusion import minmax
from .hits import Hit
from .indexes import fulltext_available
from .retrieve import Where
from .trace import SearchRun


def reader(caller: Caller, config: SearchConfig) -> Caller:
    """The view the boxes after FUSE load hits through: without the agent tag when subscribed
    (every other hit already passed the caller's full guard, which implies this one)."""
    return Caller(caller.account_id, caller.allowed_scopes, None) if config.keywords else caller


def keyword_list(db: Database, where: Where, config: SearchConfig, run: SearchRun) -> list[Hit]:
    """The subscribed nodes, best first, each with its keyword score and rank."""
    if not config.keywords or where.session_id:  # a session-limited search stays in its session
        return []
    ranked = subscribed(db, reader(where.caller, config), config.keywords, where.labels, where.k, when=where.when)
    run.count(keyword=len(ranked))
    return ranked


def subscribed(
    db: Database,
    caller: Caller,
    keywords: Sequence[str],
    labels: Sequence[str] | None,
    k: int,
    *,
    when: Guard | None = None,
) -> list[Hit]:
    """The nodes ``caller`` sees that match ``keywords`` (BM25 hits min-max scaled per keyword,
    and nodes tagged with one scored 1.0), best first, each with its keyword rank. ``caller`` is
    the view to search: without an agent tag for a subscription that reaches the whole scope."""
    found: dict[str, Hit] = {}
    if fulltext_available(db):
        for lst in bm25_search(db, caller, keywords, labels, k, when=when):
            for h, score in zip(lst, minmax([h.bm25_raw or 0.0 for h in lst]), strict=True):
                _note(found, h.node_id, h.labels, score)
    for r in _tagged(db, caller, keywords, labels, k, when):
        _note(found, r["id"], r["labels"], 1.0)
    ranked = sorted(found.values(), key=lambda h: (-h.keyword_score, h.node_id))
    for rank, h in enumerate(ranked, start=1):
        h.ranks["keyword"] = rank
    return ranked


def _note(found: dict[str, Hit], node_id: str, labels: list[str], score: float) -> None:
    seen = found.get(node_id)
    if seen is None:
        found[node_id] = Hit(node_id, list(labels), keyword_score=score)
    elif score > seen.keyword_score:
        seen.keyword_score = score


def _tagged(
    db: Database, caller: Caller, keywords: Sequence[str], labels: Sequence[str] | None, k: int, when: Guard | None
) -> list[dict]:
    guard = both(generic_guard(caller, "n"), when)
    label_filter = "AND any(l IN labels(n) WHERE l IN $labels)" if labels else ""
    return db.read(
        f"""
        MATCH (n:Node) WHERE {guard.clause} AND n.keywords IS NOT NULL
          AND any(k IN n.keywords WHERE toLower(toString(k)) IN $kws) {label_filter}
        RETURN n.nodeId AS id, [l IN labels(n) WHERE l <> 'Node'] AS labels
        ORDER BY n.updatedAt DESC LIMIT $k
        """,
        kws=[k.lower() for k in keywords],
        labels=list(labels or []),
        k=k,
        **guard.params,
    )
