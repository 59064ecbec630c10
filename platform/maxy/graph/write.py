"""The one write primitive every writer uses.

It stamps accountId (the validated ACCOUNT_ID, nothing else), a stable nodeId, timestamps,
scope, agent tags and createdBy; embeds nodes with an indexed label (a failed embedding
stores the node without one, for ``maxy reindex``); writes only inside its caller's view
(``maxy.graph.confine``): an existing node it updates and every edge target must pass the
caller's guards, and a pinned caller's nodes stay in its view; applies the provenance check
for gated labels. A batch is written in one transaction: a refused node or a missing edge
target leaves nothing behind. A transaction first locks the existing nodes it updates or links
to, in nodeId order, so concurrent writers sharing nodes queue instead of deadlocking.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, Literal

import neo4j

from ..accounts import ValidatedAccount
from ..config import SCOPE_VALUES
from ..db import Database
from ..embeddings.base import Embedder, EmbeddingError
from ..errors import GraphWriteError, ValidationError
from ..identifiers import check_agent_slug
from ..logs import log_line, short
from .allowlist import (
    COMMUNITY,
    COMMUNITY_LABELS,
    COMMUNITY_RECORD,
    PROVENANCE_GATED_LABELS,
    PROVENANCE_SOURCE_LABELS,
    check_labels,
    check_property_name,
    check_relationship_type,
    owner_of,
    quote,
)
from .confine import check_confined, default_visibility, not_writable, resolve_update
from .guards import Caller, Guard, both, node_guard, outside_community
from .names import ALIAS_PROPS, NAME_PROPS, node_keys
from .schema import check_vector_dimensions
from .text import embedding_text
from .validity import date_text

BASE_LABEL = "Node"
MAX_PROPERTIES = 200
MAX_STRING = 1_000_000
MAX_EDGES = 500
_NODE_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9:._-]{0,127}$")
SYSTEM_AGENT = "system"
PENDING_PROPERTY = "pendingWrite"  # hidden by every read guard until its write clears it
# Setting a property to its own value takes the node's write lock and changes nothing.
_LOCK_EXISTING = f"UNWIND $ids AS id MATCH (n:{BASE_LABEL} {{nodeId: id}}) WHERE n.accountId = $acc SET n.nodeId = id"


@dataclass(frozen=True)
class Edge:
    """A relationship between the written node and an existing node of the same account."""

    type: str
    target: str  # nodeId of the other end
    direction: Literal["out", "in"] = "out"
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass
class NodeSpec:
    labels: Sequence[str]
    properties: dict[str, Any] = field(default_factory=dict)
    edges: Sequence[Edge] = ()
    node_id: str | None = None
    scope: str | None = None
    agents: Sequence[str] | None = None


@dataclass(frozen=True)
class WriteResult:
    node_id: str
    labels: tuple[str, ...]
    created: bool
    embedded: bool
    provenance: bool | None  # None when the labels are not gated


@dataclass
class _Prepared:
    node_id: str
    labels: tuple[str, ...]
    props: dict[str, Any]
    scope: str | None
    agents: list[str] | None
    edges: list[dict[str, Any]]
    text: str | None
    at: str = ""  # the field prefix of this node in error messages
    embedding: list[float] | None = None


@dataclass(frozen=True)
class PreparedWrite:
    """Nodes validated and embedded by :meth:`GraphWriter.prepare`, for :meth:`GraphWriter.commit`."""

    nodes: list[_Prepared]
    agent: str
    started: float


def _clean_value(key: str, value: Any, prefix: str = "properties") -> Any:
    where = f"{prefix}.{key}"
    if value is None or isinstance(value, (bool, int, float)):
        if isinstance(value, float) and value != value:
            raise ValidationError(where, "NaN is not a storable number")
        return value
    if isinstance(value, str):
        if len(value) > MAX_STRING:
            raise ValidationError(where, f"string longer than {MAX_STRING} characters")
        return value
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        items = [_clean_value(key, v, prefix) for v in value]
        if any(v is None or isinstance(v, (list, dict)) for v in items):
            raise ValidationError(where, "lists may hold only strings, numbers or booleans (no nulls or nesting)")
        kinds = {bool if isinstance(v, bool) else (float if isinstance(v, (int, float)) else type(v)) for v in items}
        if len(kinds) > 1:
            raise ValidationError(where, "a list must hold values of one type")
        return items
    if isinstance(value, dict):
        raise ValidationError(where, "nested objects cannot be stored on a node; flatten them or store JSON text")
    raise ValidationError(where, f"unsupported value type {type(value).__name__}")


def _check_node_id(value: object, field_name: str) -> str:
    if not isinstance(value, str) or not _NODE_ID_RE.match(value):
        raise ValidationError(field_name, f"invalid node id {value!r}")
    return value


def _prepare_edges(spec_edges: Sequence[Edge], at: str) -> list[dict[str, Any]]:
    if len(spec_edges) > MAX_EDGES:
        raise ValidationError(f"{at}edges", f"at most {MAX_EDGES} edges per node")
    edges = []
    for j, edge in enumerate(spec_edges):
        where = f"{at}edges[{j}]"
        if edge.direction not in ("out", "in"):
            raise ValidationError(f"{where}.direction", "must be 'out' or 'in'")
        rel_props = {}
        for key, value in (edge.properties or {}).items():
            check_property_name(key, field=f"{where}.properties")
            rel_props[key] = _clean_value(key, value, f"{where}.properties")
        edges.append(
            {
                "type": check_relationship_type(edge.type, field=f"{where}.type"),
                "target": _check_node_id(edge.target, f"{where}.target"),
                "direction": edge.direction,
                "props": rel_props,
            }
        )
    return edges


class GraphWriter:
    """Writes nodes for one validated account, inside ``caller``'s view (default: the whole
    account). Thread-safe; reuse it."""

    def __init__(
        self,
        db: Database,
        account: ValidatedAccount,
        embedder: Embedder | None,
        *,
        caller: Caller | None = None,
        created_by: str = "admin",
        batch_size: int = 256,
        owner: str | None = None,
        community: bool = False,
    ):
        if not isinstance(account, ValidatedAccount):
            raise TypeError("GraphWriter needs a ValidatedAccount from maxy.accounts.validate_*")
        if caller is not None and caller.account_id != account.account_id:
            raise GraphWriteError("invalid-account-id", "the writer's caller belongs to another account")
        self.db = db
        self.account = account
        self.caller = caller or Caller(account.account_id)
        self.embedder = embedder
        self.created_by = created_by
        self.batch_size = batch_size
        self.owner = owner  # the domain writer it is (allowlist.owner_of), if any
        # acting for the community (its own writer, or the task store keeping a negotiation's task):
        # it reads the community's records, and every ordinary node it creates is one (COMMUNITY_RECORD)
        self.community = community or owner == COMMUNITY
        self._dims_checked = False

    # -- public API --------------------------------------------------------------------
    def write(self, spec: NodeSpec, *, account_id: str | None = None, created_by: str | None = None) -> WriteResult:
        return self.write_many([spec], account_id=account_id, created_by=created_by)[0]

    def write_many(
        self,
        specs: Iterable[NodeSpec],
        *,
        account_id: str | None = None,
        created_by: str | None = None,
        progress: Any = None,
        atomic: bool = False,
        before_write: Callable[[neo4j.ManagedTransaction], None] | None = None,
        pending_write: str | None = None,
    ) -> list[WriteResult]:
        """Write nodes in batches of ``batch_size``, each batch one transaction.

        ``atomic=True`` writes everything in a single transaction instead, after all
        embeddings are computed; ``before_write(tx)`` runs first inside that transaction
        (e.g. deleting the hierarchy being replaced), so a crash leaves old or new, never a mix.
        ``pending_write`` (a write's token) stamps ``pendingWrite`` on every node: the read guards hide
        them until the caller clears it, and edges may reach nodes pending under the same token.
        """
        started = time.perf_counter()
        agent = created_by or self.created_by
        prepared = self._validated(list(specs), account_id, agent, pending_write)

        results: list[WriteResult] = []
        batches = [prepared[i : i + self.batch_size] for i in range(0, len(prepared), self.batch_size)]
        if atomic or before_write is not None:
            for batch in batches:
                self._embed(batch)
            results = self._write_batches(batches, agent, before_write)
            if progress is not None:
                progress(len(results))
            batches = []
        # Embedding of batch i+1 overlaps the transaction of batch i.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="graph-write") as pool:
            pending: Future[list[WriteResult]] | None = None
            for batch in batches:
                self._embed(batch)
                if pending is not None:
                    results.extend(pending.result())
                    if progress is not None:
                        progress(len(results))
                pending = pool.submit(self._write_batches, [batch], agent, None)
            if pending is not None:
                results.extend(pending.result())
                if progress is not None:
                    progress(len(results))

        self._log_write(results, agent, started)
        return results

    def prepare(
        self,
        specs: Iterable[NodeSpec],
        *,
        account_id: str | None = None,
        created_by: str | None = None,
        pending_write: str | None = None,
    ) -> PreparedWrite:
        """Validate and embed ``specs`` for :meth:`commit`: the embedding half of an atomic
        ``write_many``, so a caller can embed its next write while this one's transaction runs."""
        started = time.perf_counter()
        agent = created_by or self.created_by
        prepared = self._validated(list(specs), account_id, agent, pending_write)
        for i in range(0, len(prepared), self.batch_size):
            self._embed(prepared[i : i + self.batch_size])
        return PreparedWrite(prepared, agent, started)

    def commit(
        self, write: PreparedWrite, *, before_write: Callable[[neo4j.ManagedTransaction], None] | None = None
    ) -> list[WriteResult]:
        """Write what :meth:`prepare` made ready in one transaction, ``before_write(tx)`` first in it."""
        nodes = write.nodes
        batches = [nodes[i : i + self.batch_size] for i in range(0, len(nodes), self.batch_size)]
        results = self._write_batches(batches, write.agent, before_write)
        self._log_write(results, write.agent, write.started)
        return results

    def _log_write(self, results: list[WriteResult], agent: str, started: float) -> None:
        label_set = sorted({label for r in results for label in r.labels})
        log_line(
            "graph-write",
            op="write",
            accountId=short(self.account.account_id),
            nodes=len(results),
            created=sum(r.created for r in results),
            embedded=sum(r.embedded for r in results),
            labels=label_set,
            agent=agent,
            ms=round((time.perf_counter() - started) * 1000),
        )

    def _validated(
        self, specs: list[NodeSpec], account_id: str | None, agent: str, pending_write: str | None
    ) -> list[_Prepared]:
        self._check_account(account_id, specs, agent)
        existing = self._existing_properties([s.node_id for s in specs if isinstance(s.node_id, str)])
        prepared = [self._prepare(i, spec, len(specs), existing) for i, spec in enumerate(specs)]
        ids = [p.node_id for p in prepared]
        if len(set(ids)) != len(ids):
            raise ValidationError("nodeId", "the same nodeId appears twice in one write")
        if pending_write is not None:
            for p in prepared:
                p.props[PENDING_PROPERTY] = pending_write
        self._check_dimensions()
        return prepared

    # -- validation --------------------------------------------------------------------
    def _check_account(self, account_id: str | None, specs: list[NodeSpec], agent: str) -> None:
        claimed = {account_id} if account_id is not None else set()
        for spec in specs:
            if isinstance(spec.properties, dict) and "accountId" in spec.properties:
                claimed.add(str(spec.properties["accountId"]))
        bad = [c for c in claimed if c != self.account.account_id]
        if bad:
            log_line(
                "graph-write",
                "reject",
                level=logging.WARNING,
                reason="invalid-account-id",
                got=short(bad[0]),
                expected=short(self.account.account_id),
                agent=agent,
            )
            raise GraphWriteError(
                "invalid-account-id",
                f"accountId {bad[0]!r} is not this process's validated ACCOUNT_ID; nothing was written",
            )

    def read_guard(self, var: str = "n", *, pending: str | None = None) -> Guard:
        """The nodes this writer may look up to change or link: the caller's (``node_guard``),
        and a community's records only for a writer acting for the community (``outside_community``)."""
        guard = node_guard(self.caller, var, pending=pending)
        return guard if self.community else both(guard, outside_community(var))

    def _existing_properties(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        """Current properties of nodes being updated, so the embedded text is the merged one."""
        if not ids:
            return {}
        guard = self.read_guard("n")
        rows = self.db.read(
            f"MATCH (n:{BASE_LABEL}) WHERE n.nodeId IN $ids AND {guard.clause} "
            "RETURN n.nodeId AS id, [k IN keys(n) WHERE k <> 'embedding' | [k, n[k]]] AS props",
            ids=ids,
            **guard.params,
        )
        return {r["id"]: dict(r["props"]) for r in rows}

    def _prepare(self, index: int, spec: NodeSpec, total: int, existing: dict[str, dict[str, Any]]) -> _Prepared:
        at = f"nodes[{index}]." if total > 1 else ""
        labels = tuple(check_labels(spec.labels, field=f"{at}labels"))
        if not isinstance(spec.properties, dict):
            raise ValidationError(f"{at}properties", "must be an object")
        if len(spec.properties) > MAX_PROPERTIES:
            raise ValidationError(f"{at}properties", f"at most {MAX_PROPERTIES} properties per node")
        props: dict[str, Any] = {}
        for key, value in spec.properties.items():
            if key == "accountId":
                continue  # already checked against the validated account
            check_property_name(key, field=f"{at}properties")
            props[key] = _clean_value(key, value, f"{at}properties")
        if spec.scope is not None and spec.scope not in SCOPE_VALUES:
            raise ValidationError(f"{at}scope", f"must be one of {list(SCOPE_VALUES)} or omitted")
        agents = None
        if spec.agents is not None:
            if isinstance(spec.agents, str):
                raise ValidationError(f"{at}agents", "must be a list of agent slugs")
            agents = sorted({check_agent_slug(a, field=f"{at}agents") for a in spec.agents})
        node_id = _check_node_id(spec.node_id, f"{at}nodeId") if spec.node_id is not None else str(uuid.uuid4())
        edges = _prepare_edges(spec.edges, at)
        merged = {**existing.get(node_id, {}), **props}  # an update keeps the properties it does not name
        owner = owner_of(labels, existing.get(node_id, {})) or owner_of(labels, merged)
        if owner is not None and owner != self.owner:
            raise ValidationError(
                f"{at}labels",
                f"these nodes are written only by the {owner}, through its own tools; nothing was written",
            )
        if self.community and node_id not in existing and not COMMUNITY_LABELS.intersection(labels):
            labels = (*labels, COMMUNITY_RECORD)  # created for the community: private to it
        if node_id not in existing or any(p in props for p in (*NAME_PROPS, *ALIAS_PROPS)):
            name_key, alias_keys = node_keys(labels, merged)
            props["nameKey"], props["aliasKeys"] = name_key, alias_keys or None
        if "validFrom" in props:
            props["dateText"] = date_text(props["validFrom"])
            merged["dateText"] = props["dateText"]
        return _Prepared(node_id, labels, props, spec.scope, agents, edges, embedding_text(labels, merged), at)

    def _check_dimensions(self) -> None:
        if self._dims_checked or self.embedder is None:
            return

        check_vector_dimensions(self.db, self.embedder.dimensions, self.embedder.name)
        self._dims_checked = True

    # -- embedding ---------------------------------------------------------------------
    def _embed(self, batch: list[_Prepared]) -> None:
        todo = [p for p in batch if p.text]
        if not todo or self.embedder is None:
            return
        unique = list(dict.fromkeys(p.text or "" for p in todo))  # a document, its section and its
        try:  # only chunk often share one text: embed it once
            by_text = dict(zip(unique, self.embedder.embed(unique), strict=True))
            vectors = [by_text[p.text or ""] for p in todo]
        except EmbeddingError as err:
            log_line(
                "graph-write",
                "warn",
                level=logging.WARNING,
                reason="embed-failed",
                nodes=len(todo),
                embedder=self.embedder.name,
                error=str(err)[:200],
                remedy="maxy reindex",
            )
            return
        for p, vec in zip(todo, vectors, strict=True):
            p.embedding = [float(x) for x in vec]

    # -- the transaction ---------------------------------------------------------------
    def _write_batches(
        self,
        batches: list[list[_Prepared]],
        agent: str,
        before_write: Callable[[neo4j.ManagedTransaction], None] | None,
    ) -> list[WriteResult]:
        """All ``batches`` in one transaction (retried as a whole on transient errors)."""

        def work(tx: neo4j.ManagedTransaction) -> list[WriteResult]:
            if before_write is not None:
                before_write(tx)
            now = datetime.now(UTC).isoformat()
            out: list[WriteResult] = []
            for batch in batches:
                out.extend(self._write_in_tx(tx, batch, agent, now))
            return out

        results = self.db.write_tx(work)
        if agent != SYSTEM_AGENT:
            for r in results:
                if r.provenance is False:
                    log_line(
                        "graph-write",
                        "warn",
                        level=logging.WARNING,
                        reason="missing-provenance",
                        labels=list(r.labels),
                        agent=agent,
                        nodeId=short(r.node_id),
                    )
        return results

    def _write_in_tx(
        self, tx: neo4j.ManagedTransaction, batch: list[_Prepared], agent: str, now: str
    ) -> list[WriteResult]:
        acc = self.account.account_id
        self._lock_existing(tx, batch)
        self._check_targets(tx, batch, agent)
        pending = next((p.props[PENDING_PROPERTY] for p in batch if PENDING_PROPERTY in p.props), None)
        guard = self.read_guard("b", pending=pending)  # a staged node may link to its own write's
        created: dict[str, bool] = {}
        groups: dict[tuple[str, ...], list[_Prepared]] = {}
        for p in batch:
            groups.setdefault(p.labels, []).append(p)
        for labels, members in groups.items():
            label_sql = ":".join(quote(label) for label in (BASE_LABEL, *labels))
            rows = [
                {
                    "nodeId": p.node_id,
                    "props": p.props,
                    "scope": p.scope,
                    "agents": p.agents,
                    "emb": p.embedding,
                    "stale": p.text is not None and p.embedding is None,
                }
                for p in members
            ]
            for rec in tx.run(
                f"""
                UNWIND $rows AS row
                MERGE (n:{quote(BASE_LABEL)} {{nodeId: row.nodeId}})
                ON CREATE SET n.createdAt = $now, n.accountId = $acc, n.createdBy = $agent
                SET n:{label_sql}, n += row.props, n.updatedAt = $now,
                    n.scope = coalesce(row.scope, n.scope), n.agents = coalesce(row.agents, n.agents),
                    n.embedding = CASE WHEN row.emb IS NOT NULL THEN row.emb
                                       WHEN row.stale THEN null ELSE n.embedding END
                RETURN n.nodeId AS id, n.createdAt = $now AS isNew
                """,
                rows=rows,
                now=now,
                acc=acc,
                agent=agent,
            ):
                created[rec["id"]] = rec["isNew"]
        edge_rows: dict[str, list[dict[str, Any]]] = {}
        for p in batch:
            for e in p.edges:
                key = f"{e['type']}:{e['direction']}"
                edge_rows.setdefault(key, []).append({"from": p.node_id, "to": e["target"], "props": e["props"]})
        for key, rows in edge_rows.items():
            rel_type, direction = key.split(":")
            pattern = f"(a)-[r:{quote(rel_type)}]->(b)" if direction == "out" else f"(a)<-[r:{quote(rel_type)}]-(b)"
            found = tx.run(
                f"""
                UNWIND $rows AS row
                MATCH (a:{BASE_LABEL} {{nodeId: row.from}})
                MATCH (b:{BASE_LABEL} {{nodeId: row.to}})
                WHERE {guard.clause}
                MERGE {pattern}
                SET r += row.props
                RETURN count(r) AS n
                """,
                rows=rows,
                **guard.params,
            ).single()
            if found is None or found["n"] != len(rows):
                missing = tx.run(
                    f"""
                    UNWIND $rows AS row
                    OPTIONAL MATCH (b:{BASE_LABEL} {{nodeId: row.to}})
                    WITH row, b WHERE b IS NULL OR NOT coalesce(({guard.clause}), false)
                    RETURN row.to AS id LIMIT 1
                    """,
                    rows=rows,
                    **guard.params,
                ).single()
                target = missing["id"] if missing else "?"
                self._log_reject(agent, target)
                raise GraphWriteError(
                    "not-writable",
                    f"edges: no node {target!r} that you can write for a {rel_type} edge; nothing was written",
                )
        gated = [p.node_id for p in batch if PROVENANCE_GATED_LABELS.intersection(p.labels)]
        provenance: dict[str, bool] = {}
        if gated:
            for rec in tx.run(
                f"""
                UNWIND $ids AS id
                MATCH (n:{BASE_LABEL} {{nodeId: id}})
                OPTIONAL MATCH (b)-[:PRODUCED]->(n)
                WHERE {guard.clause} AND any(l IN labels(b) WHERE l IN $sources)
                RETURN id, count(b) > 0 AS ok
                """,
                ids=gated,
                sources=sorted(PROVENANCE_SOURCE_LABELS),
                **guard.params,
            ):
                provenance[rec["id"]] = rec["ok"]
        return [
            WriteResult(
                p.node_id,
                p.labels,
                created.get(p.node_id, False),
                p.embedding is not None,
                provenance.get(p.node_id) if p.node_id in provenance else None,
            )
            for p in batch
        ]

    def _lock_existing(self, tx: neo4j.ManagedTransaction, batch: list[_Prepared]) -> None:
        """Lock every existing node of this account the batch updates or links to, in nodeId
        order, before anything else: writers that share nodes (many edges to one Organization)
        then queue for them instead of each holding one and waiting for another's (a deadlock,
        rolled back and retried)."""
        ids = sorted({p.node_id for p in batch} | {e["target"] for p in batch for e in p.edges})
        tx.run(_LOCK_EXISTING, ids=ids, acc=self.account.account_id).consume()

    def _check_targets(self, tx: neo4j.ManagedTransaction, batch: list[_Prepared], agent: str) -> None:
        """An existing node is updated only when the caller can read it (one refusal for absent,
        hidden and foreign ids alike); new nodes get the caller's default visibility; scope and
        agents never cross the caller's view."""
        guard = self.read_guard("n")
        state = {
            r["id"]: r
            for r in tx.run(
                f"MATCH (n:{BASE_LABEL}) WHERE n.nodeId IN $ids "
                f"RETURN n.nodeId AS id, coalesce(({guard.clause}), false) AS visible, n.scope AS scope, n.agents AS agents",
                ids=[p.node_id for p in batch],
                **guard.params,
            )
        }
        for p in batch:
            row = state.get(p.node_id)
            if row is None:
                p.scope, p.agents = default_visibility(self.caller, p.scope, p.agents)
                check_confined(self.caller, p.scope, p.agents, p.at)
            elif not row["visible"]:
                self._log_reject(agent, p.node_id)
                raise not_writable(f"{p.at}nodeId", p.node_id)
            else:
                resolve_update(self.caller, (row["scope"], row["agents"]), p.scope, p.agents, p.at)

    def _log_reject(self, agent: str, node_id: str) -> None:
        log_line(
            "graph-write",
            "reject",
            level=logging.WARNING,
            reason="not-writable",
            nodeId=short(node_id),
            view=self.caller.view_key or "account",
            agent=agent,
        )

    # -- maintenance -------------------------------------------------------------------
    def set_embeddings(self, vectors: dict[str, list[float]]) -> int:
        """Store embeddings computed later (``maxy reindex``); only this account's live nodes."""
        if not vectors:
            return 0
        self._check_dimensions()
        rows = [{"id": k, "emb": [float(x) for x in v]} for k, v in vectors.items()]
        guard = node_guard(self.caller, "n")
        result = self.db.write(
            f"""
            UNWIND $rows AS row
            MATCH (n:{BASE_LABEL} {{nodeId: row.id}})
            WHERE {guard.clause}
            SET n.embedding = row.emb
            RETURN count(n) AS n
            """,
            rows=rows,
            **guard.params,
        )
        return int(result[0]["n"]) if result else 0
