"""What every evaluation command opens first: the embedder and the database, schema applied."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def schema_ready(settings: Any) -> Iterator[tuple[Any, Any]]:
    """(embedder, database) of ``settings``, the schema applied for that embedder; the database
    is closed afterwards."""
    from ..db import Database
    from ..embeddings import get_embedder
    from ..graph.schema import apply_schema

    embedder = get_embedder(settings)
    with Database(settings) as db:
        apply_schema(db, embedder.dimensions, embedder=embedder)
        yield embedder, db
