"""Which search indexes exist: found at run time through SHOW INDEXES, cached per process and
cleared on schema change; and which embedding model made the stored vectors."""

from __future__ import annotations

import threading
import time

from ..db import Database
from ..graph.allowlist import ALL_LABELS
from ..graph.schema import FULLTEXT_INDEX, on_schema_change

_lock = threading.Lock()
_vector_map: dict[str, str] | None = None  # label -> index name
_fulltext: bool | None = None
_session_filtered: set[str] = set()  # indexes that also carry sessionId as a filter property
_MODEL_TTL_S = 60.0  # another process may record a new model (maxy reindex --recreate)
_model: tuple[str | None, float] | None = None  # (model that made the stored vectors, read at)
_FAILING_TTL_S = 60.0
# (index, account, session or "") whose filtered SEARCH failed, and until when to skip it
_failing_until: dict[tuple[str, str, str], float] = {}
_failing_lock = threading.Lock()


def clear_index_cache() -> None:
    global _vector_map, _fulltext, _model
    with _lock:
        _vector_map = None
        _fulltext = None
        _model = None
    forget_failing()


on_schema_change(clear_index_cache)


def forget_failing() -> None:
    with _failing_lock:
        _failing_until.clear()


def failing(index: str, account_id: str, session: str) -> bool:
    """Whether a filtered vector SEARCH of ``index`` failed lately for this account and session."""
    with _failing_lock:
        until = _failing_until.get((index, account_id, session))
    return until is not None and until > time.monotonic()


def mark_failing(index: str, account_id: str, session: str) -> None:
    """Skip a filtered vector SEARCH of ``index`` for this account and session for a while."""
    now = time.monotonic()
    with _failing_lock:
        if len(_failing_until) > 10_000:  # bounded: forget expired marks
            for key in [key for key, until in _failing_until.items() if until <= now]:
                del _failing_until[key]
        _failing_until[(index, account_id, session)] = now + _FAILING_TTL_S


def recorded_model(db: Database) -> str | None:
    """The embedding model the database's vectors came from (``maxy schema apply`` records it),
    re-read at most once a minute."""
    global _model
    with _lock:
        if _model is None or time.monotonic() - _model[1] > _MODEL_TTL_S:
            from ..graph.schema import recorded_embedder

            recorded = recorded_embedder(db)
            _model = (None if recorded is None else recorded.get("model"), time.monotonic())
        return _model[0]


def _discover(db: Database) -> tuple[dict[str, str], bool]:
    global _vector_map, _fulltext
    with _lock:
        if _vector_map is None or _fulltext is None:
            rows = db.read(
                "SHOW INDEXES YIELD name, type, state, labelsOrTypes, properties, entityType "
                "WHERE type IN ['VECTOR', 'FULLTEXT'] AND entityType = 'NODE' "
                "RETURN name, type, state, labelsOrTypes, properties"
            )
            _session_filtered.clear()
            _vector_map = {}
            for r in rows:
                if _queryable_vector_index(r):
                    _vector_map[r["labelsOrTypes"][0]] = r["name"]
                    if "sessionId" in r["properties"][1:]:
                        _session_filtered.add(r["name"])
            _fulltext = any(r["name"] == FULLTEXT_INDEX and r["state"] == "ONLINE" for r in rows)
        return dict(_vector_map), bool(_fulltext)


def _queryable_vector_index(row: dict) -> bool:
    """Only indexes this code can query safely: online, one known label, account filter property."""
    labels = row["labelsOrTypes"] or []
    return (
        row["type"] == "VECTOR"
        and row["state"] == "ONLINE"
        and len(labels) == 1
        and labels[0] in ALL_LABELS
        and "accountId" in (row["properties"] or [])[1:]
    )


def vector_indexes(db: Database) -> dict[str, str]:
    return _discover(db)[0]


def fulltext_available(db: Database) -> bool:
    return _discover(db)[1]


def session_filtered(index: str) -> bool:
    """Whether ``index`` also filters on sessionId inside the index (message embeddings)."""
    return index in _session_filtered


def index_name_ok(name: str) -> str:
    if not name.replace("_", "").isalnum():
        raise ValueError(f"unexpected index name {name!r}")
    return name
