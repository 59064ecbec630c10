"""The BM25 path: the ``entity_search`` full-text index, the account required inside Lucene,
then the guard layers; an account that is a minority of the index is ranked by its own
statistics (``account_bm25``)."""

from __future__ import annotations

from collections.abc import Sequence

from ..db import Database
from ..graph.guards import Caller, Guard, both, generic_guard
from ..graph.schema import FULLTEXT_INDEX
from ..graph.validity import event_time
from .account_bm25 import account_corpus, counting, rescore
from .graph_expansion import property_columns, visible_columns
from .hits import Hit
from .lucene import build_query
from .session_filter import session_clause


def bm25_search(
    db: Database,
    caller: Caller,
    texts: Sequence[str],
    labels: Sequence[str] | None,
    k: int,
    session_id: str | None = None,
    *,
    when: Guard | None = None,
    properties: bool = False,
    account_stats: bool = True,
) -> list[list[Hit]]:
    """One ranked list per query text (a text with no searchable term gives none); ``when``
    narrows it further (the time filters); ``properties`` brings each hit's properties along.
    ``account_stats``: rank by the account's own BM25 statistics when it is a minority of the
    index (they need the hits' texts, so the properties come along then); else Lucene's."""
    out: list[list[Hit]] = []
    guard = both(generic_guard(caller, "n"), when)
    label_filter = "AND any(l IN labels(n) WHERE l IN $labels)" if labels else ""
    corpus = account_corpus(db, caller.account_id) if account_stats else None
    props = property_columns("n") if properties or corpus else "null"
    for qi, text in enumerate(texts):
        lucene = build_query(text, account_id=caller.account_id)
        if lucene is None:
            continue
        frequencies = None if corpus is None else counting(db, caller.account_id, text)
        rows = db.read_rows(
            f"""
            CALL db.index.fulltext.queryNodes('{FULLTEXT_INDEX}', $q, {{limit: $k}}) YIELD node AS n, score
            WITH n, score WHERE {guard.clause} {label_filter} {session_clause(session_id)}
            RETURN collect([n.nodeId, [x IN labels(n) WHERE x <> 'Node'], score, n.validFrom, {event_time("n")},
                            {props}]) AS rows
            """,
            q=lucene,
            k=k,
            labels=list(labels or []),
            sessionId=session_id,
            **guard.params,
        )
        rows.sort(key=lambda r: -r[2])  # the index's order already; ties keep it
        name = f"bm25:{qi}"
        hits = [
            Hit(
                node_id,
                labels_,
                bm25_raw=float(score),
                ranks={name: i},
                valid_from=valid_from,
                happened=happened,
                properties={} if props_ is None else visible_columns(props_),
                loaded=props_ is not None,
            )
            for i, (node_id, labels_, score, valid_from, happened, props_) in enumerate(rows, start=1)
        ]
        if corpus is not None and frequencies is not None:
            hits = rescore(corpus, text, frequencies.result(), hits, name)
        out.append(hits)
    return out
