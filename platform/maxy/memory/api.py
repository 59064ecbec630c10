"""The Python API: ``from maxy import Memory``.

    from maxy import Memory

    with Memory.from_env() as memory:            # ACCOUNT_ID, pins and Neo4j from the environment
        globex = memory.write(["Organization"], {"name": "Globex"})
        memory.write(["Person"], {"name": "Ada"}, edges=[{"type": "WORKS_FOR", "target": globex["nodeId"]}])
        for hit in memory.search("Who works at Globex?"):
            print(hit["labels"], hit["properties"].get("name"))

Each method runs the function the matching MCP tool runs (``remember``, ``recall``,
``get_nodes``, ``forget_node`` ...), with the same guards, confinement and errors: bad input
raises ``maxy.errors.ValidationError`` (``str(err)`` names the field), a refused write
``GraphWriteError``. ``Memory(account_id, scopes=..., agent=...)`` pins a narrower view, like a
pinned server.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from ..accounts import validate_account
from ..config import Settings, load_settings
from ..db import Database
from ..embeddings.base import Embedder
from ..graph.guards import Caller
from ..graph.write import GraphWriter
from ..search import SearchRequest
from ..search.format import to_json
from .forget import forget_node, remove_relation
from .neighbourhood import get_nodes
from .recall import recall
from .remember import MemoryWrite, parse_edges, remember


class Memory:
    """One account's memory, read and written inside one view (the whole account by default)."""

    def __init__(
        self,
        account_id: str | None = None,
        *,
        scopes: Sequence[str] | None = None,
        agent: str | None = None,
        settings: Settings | None = None,
        embedder: Embedder | None = None,
        created_by: str = "python",
    ):
        self.settings = settings or load_settings()
        self.account = validate_account(self.settings.data_root, account_id or self.settings.ACCOUNT_ID)
        self.caller = Caller(self.account.account_id, tuple(scopes) if scopes is not None else None, agent or None)
        if embedder is None:
            from ..embeddings import get_embedder

            embedder = get_embedder(self.settings)
        self.embedder = embedder
        self.created_by = created_by
        self.db = Database(self.settings)

    @classmethod
    def from_env(cls, **kwargs: Any) -> Memory:
        """ACCOUNT_ID, ALLOWED_SCOPES and AGENT_SLUG from the environment (or ``.env``)."""
        settings = kwargs.pop("settings", None) or load_settings()
        return cls(
            settings.ACCOUNT_ID,
            scopes=list(settings.ALLOWED_SCOPES) if settings.ALLOWED_SCOPES else None,
            agent=settings.AGENT_SLUG or None,
            settings=settings,
            **kwargs,
        )

    # -- lifecycle --------------------------------------------------------------------------
    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def _writer(self) -> GraphWriter:
        return GraphWriter(self.db, self.account, self.embedder, caller=self.caller, created_by=self.created_by)

    # -- entities and facts -----------------------------------------------------------------
    def write(
        self,
        labels: Sequence[str],
        properties: dict[str, Any],
        *,
        edges: Sequence[Any] | None = None,
        node_id: str | None = None,
        scope: str | None = None,
        agents: Sequence[str] | None = None,
        resolve: bool = True,
        supersede: Sequence[str] | str = (),
        valid_from: str | None = None,
        valid_until: str | None = None,
    ) -> dict[str, Any]:
        """What ``memory-write`` does: {nodeId, labels, created, resolved, superseded, embedded, provenance}."""
        memory = MemoryWrite(
            list(labels),
            properties,
            edges=parse_edges(edges),
            node_id=node_id,
            scope=scope,
            agents=agents,
            resolve=resolve,
            supersede=[supersede] if isinstance(supersede, str) else list(supersede),
            valid_from=valid_from,
            valid_until=valid_until,
        )
        return remember(self._writer(), memory)

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        labels: Sequence[str] | None = None,
        expand_hops: int = 1,
        as_of: str | None = None,
        include_history: bool = False,
        after: str | None = None,
        before: str | None = None,
        min_relevance: float | None = None,
    ) -> list[dict[str, Any]]:
        """What ``memory-search`` finds, as data: [{nodeId, labels, score, relevance, properties,
        related}]; empty when no hit clears the relevance cut (``min_relevance=0`` turns it off)."""
        request = SearchRequest(
            query,
            limit=limit,
            labels=tuple(labels) if labels else None,
            expand_hops=expand_hops,
            as_of=as_of,
            include_history=include_history,
            after=after,
            before=before,
            min_relevance=min_relevance,
        )
        return to_json(recall(self.db, self.caller, self.embedder, self.settings, request).hits)

    def get(
        self,
        node_ids: Sequence[str] | str,
        *,
        hops: int = 1,
        types: Sequence[str] | None = None,
        budget: int = 50,
        as_of: str | None = None,
        include_history: bool = False,
    ) -> dict[str, Any]:
        """What ``memory-get`` returns: {nodes, missing, truncated}."""
        ids = [node_ids] if isinstance(node_ids, str) else list(node_ids)
        return get_nodes(
            self.db,
            self.caller,
            ids,
            hops=hops,
            types=types,
            budget=budget,
            as_of=as_of,
            include_history=include_history,
        )

    def forget(self, node_id: str) -> dict[str, Any]:
        """What ``memory-forget`` does: soft-delete one node."""
        return forget_node(self._writer(), node_id)

    def unlink(self, source: str, rel_type: str, target: str) -> dict[str, Any]:
        """What ``memory-remove-relation`` does."""
        return remove_relation(self._writer(), source, rel_type, target)

    # -- documents and conversations --------------------------------------------------------
    def ingest(
        self,
        *paths: str | Path,
        attachment_id: str | None = None,
        scope: str | None = None,
        agents: Sequence[str] | None = None,
        as_text: bool = False,
    ) -> list[dict[str, Any]]:
        """What ``memory-ingest`` does: one result per file (``as_text``: files of other types
        are read as plain text)."""
        from ..ingest.files import collect_files
        from ..ingest.hierarchy import ingest_paths
        from ..ingest.skipsummary import require_files

        named = [str(p) for p in paths]
        results = ingest_paths(
            require_files(collect_files(named, as_text=as_text), named),
            self._writer(),
            attachment_id=attachment_id,
            scope=scope,
            agents=list(agents) if agents is not None else None,
            source="python",
        )
        return [r.as_dict() for r in results]

    def append(
        self,
        session_id: str,
        content: str,
        *,
        role: str = "user",
        speaker: str | None = None,
        timestamp: str | None = None,
        message_id: str | None = None,
    ) -> dict[str, Any]:
        """What ``conversation-append`` does: one turn of a conversation."""
        from ..conversations.append import append_turn

        return append_turn(
            self._writer(),
            session_id,
            role=role,
            content=content,
            speaker=speaker,
            timestamp=timestamp,
            message_id=message_id,
        )

    def search_conversations(
        self,
        query: str,
        *,
        session_id: str | None = None,
        limit: int = 10,
        after: str | None = None,
        before: str | None = None,
    ) -> list[dict[str, Any]]:
        """What ``conversation-search`` finds, as data."""
        from ..conversations import search_messages
        from ..search import MESSAGE_SEARCH, SearchConfig

        return search_messages(
            self.db,
            self.caller,
            self.embedder,
            query,
            session_id=session_id,
            limit=limit,
            after=after,
            before=before,
            config=SearchConfig.from_settings(self.settings, base=MESSAGE_SEARCH),
        )
