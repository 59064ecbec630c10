"""Apply ``schema.cypher`` idempotently and keep vector dimensions honest."""

from __future__ import annotations

import logging
import math
import re
import time
from dataclasses import dataclass
from importlib import resources
from typing import Any

import neo4j

from ..db import Database
from ..errors import SchemaError
from ..logs import log_line
from .text import embedding_text

PLACEHOLDER = "{{EMBED_DIMENSIONS}}"
FULLTEXT_INDEX = "entity_search"


def schema_text() -> str:
    return resources.files("maxy").joinpath("resources/schema.cypher").read_text()


def statements(dimensions: int, text: str | None = None) -> list[str]:
    if not isinstance(dimensions, int) or isinstance(dimensions, bool) or not 1 <= dimensions <= 4096:
        raise SchemaError(f"EMBED_DIMENSIONS must be an integer between 1 and 4096, got {dimensions!r}")
    body = _without_comments(text).replace(PLACEHOLDER, str(dimensions))
    return [s.strip() for s in body.split(";") if s.strip()]


def _without_comments(text: str | None) -> str:
    return "\n".join(line for line in (text or schema_text()).splitlines() if not line.strip().startswith("//"))


def expected_vector_indexes(text: str | None = None) -> dict[str, str]:
    """Index name -> label, as declared in the schema file."""
    return {name: spec["label"] for name, spec in declared_vector_indexes(text).items()}


# Vector index settings that decide how an index is built, by their key in OPTIONS and SHOW
# INDEXES -> the IndexInfo field holding the live value. A declared one the live index does not
# have makes apply_schema rebuild the index (IF NOT EXISTS would keep the old one); one left
# undeclared takes the server's default and is not compared.
VECTOR_SETTINGS = {
    "vector.quantization.type": "quantization",
    "vector.quantization.enabled": "quantization",
    "vector.hnsw.m": "hnsw_m",
    "vector.hnsw.ef_construction": "hnsw_ef_construction",
}
_SHOWN = {"quantization": "quantization.type", "hnsw_m": "hnsw.m", "hnsw_ef_construction": "hnsw.ef_construction"}
_SETTING = re.compile(r"`(vector\.[\w.]+)`:\s*('?)([\w.]+)\2")


def _upper(value: Any) -> str | None:
    return None if value is None else str(value).upper()  # Neo4j takes 'none', reports 'NONE'


def _quantization(kind: Any, enabled: Any) -> str | None:
    """The quantization as ``vector.quantization.type`` names it (Neo4j 2026.06+); from the older
    ``vector.quantization.enabled`` (every version Maxy supports takes it): false is NONE, true
    some quantization ("ENABLED", which differs from NONE)."""
    if kind is not None:
        return _upper(kind)
    if enabled is None:
        return None
    return "NONE" if str(enabled).lower() == "false" else "ENABLED"


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def declared_vector_indexes(text: str | None = None) -> dict[str, dict[str, Any]]:
    """Index name -> label, indexed properties (the vector property, then filter properties) and
    the declared build settings (``quantization``, ``hnsw_m``, ``hnsw_ef_construction``: None
    where the file leaves Neo4j's default)."""
    pattern = re.compile(
        r"CREATE VECTOR INDEX (\w+) IF NOT EXISTS FOR \(n:(\w+)\) ON n\.(\w+)(?:\s+WITH \[([^\]]*)\])?([^;]*)"
    )
    out = {}
    for m in pattern.finditer(_without_comments(text)):
        extra = [p.strip().removeprefix("n.") for p in (m.group(4) or "").split(",") if p.strip()]
        spec: dict[str, Any] = {"label": m.group(2), "properties": [m.group(3), *extra]}
        spec.update(dict.fromkeys(VECTOR_SETTINGS.values()))
        settings = {key: value for key, _, value in _SETTING.findall(m.group(5))}
        for key, value in settings.items():
            if key in VECTOR_SETTINGS and VECTOR_SETTINGS[key] != "quantization":
                spec[VECTOR_SETTINGS[key]] = _int(value)
        spec["quantization"] = _quantization(
            settings.get("vector.quantization.type"), settings.get("vector.quantization.enabled")
        )
        out[m.group(1)] = spec
    return out


def expected_fulltext_indexes(text: str | None = None) -> dict[str, dict[str, Any]]:
    """Full-text index name -> declared labels, properties and analyzer."""
    pattern = re.compile(
        r"CREATE FULLTEXT INDEX (\w+) IF NOT EXISTS FOR \(n:([\w|]+)\)\s+ON EACH \[([^\]]+)\]"
        r"(?:\s+OPTIONS \{indexConfig: \{`fulltext.analyzer`: '(\w+)')?"
    )
    out = {}
    for m in pattern.finditer(text or schema_text()):
        props = [p.strip().removeprefix("n.") for p in m.group(3).split(",")]
        out[m.group(1)] = {"labels": sorted(m.group(2).split("|")), "properties": props, "analyzer": m.group(4)}
    return out


@dataclass(frozen=True)
class IndexInfo:
    name: str
    type: str
    state: str
    labels: list[str]
    properties: list[str]
    dimensions: int | None
    population_percent: float | None
    analyzer: str | None = None
    quantization: str | None = None  # vector.quantization.type: NONE, SCALAR or BINARY
    hnsw_m: int | None = None
    hnsw_ef_construction: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "state": self.state,
            "labels": self.labels,
            "properties": self.properties,
            "dimensions": self.dimensions,
            "quantization": self.quantization,
            "populationPercent": self.population_percent,
        }


def list_indexes(db: Database) -> list[IndexInfo]:
    rows = db.read(
        "SHOW INDEXES YIELD name, type, state, labelsOrTypes, properties, options, populationPercent "
        "RETURN name, type, state, labelsOrTypes, properties, options, populationPercent ORDER BY name"
    )
    out = []
    for r in rows:
        config = (r.get("options") or {}).get("indexConfig") or {}
        dims = config.get("vector.dimensions")
        out.append(
            IndexInfo(
                r["name"],
                r["type"],
                r["state"],
                list(r.get("labelsOrTypes") or []),
                list(r.get("properties") or []),
                int(dims) if dims is not None else None,
                r.get("populationPercent"),
                config.get("fulltext.analyzer"),
                _quantization(config.get("vector.quantization.type"), config.get("vector.quantization.enabled")),
                _int(config.get("vector.hnsw.m")),
                _int(config.get("vector.hnsw.ef_construction")),
            )
        )
    return out


def dimension_mismatches(db: Database, dimensions: int) -> list[IndexInfo]:
    return [i for i in list_indexes(db) if i.type == "VECTOR" and i.dimensions not in (None, dimensions)]


def check_vector_dimensions(db: Database, dimensions: int, embedder_name: str = "the embedder") -> None:
    """Refuse to run when a vector index expects other dimensions than the embedder produces,
    or when the database's vectors were made by another model."""
    bad = dimension_mismatches(db, dimensions)
    if bad:
        raise SchemaError(_mismatch_message(bad, dimensions, embedder_name))
    if embedder_name != "the embedder":
        recorded = recorded_embedder(db)
        if recorded is not None and recorded.get("model") != embedder_name:
            raise SchemaError(_model_mismatch_message(str(recorded.get("model")), embedder_name))


# -- which model made the stored vectors --------------------------------------------------
# Two models with the same dimensions (bge-small and MiniLM both give 384) fit the same
# indexes, so the dimension check alone cannot catch a model switch, and vectors of two
# models side by side make similarity meaningless. The model is recorded on one node
# outside the :Node hierarchy (no index, guard or search sees it).
META_LABEL = "MaxyMeta"
_META_KEY = "embedding"


def recorded_embedder(db: Database) -> dict[str, Any] | None:
    """``{"model", "dimensions"}`` recorded by the last ``apply_schema``, or None."""
    rows = db.read(
        f"MATCH (m:{META_LABEL} {{key: $key}}) RETURN m.model AS model, m.dimensions AS dimensions",
        key=_META_KEY,
    )
    return dict(rows[0]) if rows else None


def _record_embedder(db: Database, model: str, dimensions: int) -> None:
    db.write(
        f"MERGE (m:{META_LABEL} {{key: $key}}) SET m.model = $model, m.dimensions = $dims, m.updatedAt = datetime()",
        key=_META_KEY,
        model=model,
        dims=dimensions,
    )


def legacy_vectors_match(db: Database, embedder: Any, account_id: str | None = None, sample: int = 5) -> bool | None:
    """For a database with vectors but no record of their model (made before Maxy recorded
    it): does ``embedder`` reproduce a sample of them? None when there is nothing to compare.

    Each sampled node's embedding text is rebuilt exactly as the writer builds it and
    re-embedded; the same model gives the same vector (cosine ~1), another model does not.
    """
    where = "AND n.accountId = $acc" if account_id else ""
    rows = db.read(
        f"MATCH (n:Node) WHERE n.embedding IS NOT NULL AND n.deletedAt IS NULL {where} "
        "RETURN labels(n) AS labels, properties(n) AS props LIMIT $sample",
        acc=account_id,
        sample=sample,
    )
    pairs = [(embedding_text(r["labels"], r["props"]), r["props"]["embedding"]) for r in rows]
    pairs = [(text, stored) for text, stored in pairs if text and len(stored) == embedder.dimensions]
    if not pairs:
        return None
    fresh = embedder.embed([text for text, _ in pairs])
    same = 0
    for vec, (_, stored) in zip(fresh, pairs, strict=True):
        dot = sum(a * b for a, b in zip(vec, stored, strict=True))
        norm = math.sqrt(sum(a * a for a in vec)) * math.sqrt(sum(b * b for b in stored)) or 1.0
        same += dot / norm >= 0.98
    return same * 2 > len(pairs)


def _model_mismatch_message(recorded: str, current: str) -> str:
    return (
        f"the vectors in this database were made by {recorded} but the embedder is now {current}; "
        f"vectors of two models cannot be compared. Either set EMBED_MODEL back to {recorded}, or run "
        f"`maxy reindex --recreate` to drop every stored vector and re-embed with {current} "
        "(once per account: ACCOUNT_ID=<id> maxy reindex)"
    )


def _mismatch_message(bad: list[IndexInfo], dimensions: int, embedder_name: str) -> str:
    names = ", ".join(f"{i.name} ({i.dimensions})" for i in bad[:5]) + (" ..." if len(bad) > 5 else "")
    return (
        f"{embedder_name} produces {dimensions}-dimensional vectors but vector index(es) {names} expect other "
        "dimensions. Either set EMBED_MODEL/EMBED_DIMENSIONS back to the model the indexes were built for, or "
        "rebuild them with `maxy schema apply --recreate-vector-indexes` and then `maxy reindex` to re-embed"
    )


def _model_changed(db: Database, embedder_name: str, embedder: Any, recreate_vector_indexes: bool) -> bool:
    """Whether the stored vectors come from another model than ``embedder_name``; refused
    (SchemaError) unless the vectors are to be recreated."""
    if embedder_name == "the embedder":
        return False
    recorded = recorded_embedder(db)
    if recorded is not None and recorded.get("model") != embedder_name:
        if not recreate_vector_indexes:
            raise SchemaError(_model_mismatch_message(str(recorded.get("model")), embedder_name))
        return True
    if recorded is None and embedder is not None and legacy_vectors_match(db, embedder) is False:
        # Vectors from before the model was recorded, and this embedder does not make them.
        if not recreate_vector_indexes:
            raise SchemaError(_model_mismatch_message("an earlier model (not recorded)", embedder_name))
        return True
    return False


def _drop_wrong_dimensions(db: Database, bad: list[IndexInfo]) -> list[str]:
    dropped: list[str] = []
    for index in bad:
        db.write(f"DROP INDEX {_quote_name(index.name)} IF EXISTS")
        # Vectors of the old size are useless to the new index: clear them so reindex refills them.
        for label in index.labels:
            _clear_embeddings(db, label)
        dropped.append(index.name)
    return dropped


def _list_change(what: str, have: list[str], want: list[str]) -> str:
    """``properties +title -body`` (or ``properties order``): how a live list differs from the file's."""
    change = [f"+{p}" for p in want if p not in have] + [f"-{p}" for p in have if p not in want]
    return " ".join([what, *(change or ["order"])])


def _vector_differences(have: IndexInfo, want: dict[str, Any]) -> list[str]:
    out = []
    if have.properties != want["properties"]:
        out.append(_list_change("properties", have.properties, want["properties"]))
    for field in dict.fromkeys(VECTOR_SETTINGS.values()):  # quantization once, under either key
        declared, live = want[field], getattr(have, field)
        # A server that does not report the key does not know it: a rebuild could not change it.
        if declared is not None and live is not None and live != declared:
            out.append(f"{_SHOWN[field]} {live} -> {declared}")
    return out


def _fulltext_differences(have: IndexInfo, want: dict[str, Any]) -> list[str]:
    out = []
    if sorted(have.labels) != want["labels"]:
        out.append(_list_change("labels", sorted(have.labels), want["labels"]))
    if have.properties != want["properties"]:
        out.append(_list_change("properties", have.properties, want["properties"]))
    if want["analyzer"] and have.analyzer != want["analyzer"]:
        out.append(f"analyzer {have.analyzer} -> {want['analyzer']}")
    return out


def _drifted(existing: dict[str, IndexInfo], text: str | None, dropped: list[str]) -> dict[str, str]:
    """Declared indexes, not dropped yet, whose live definition differs from the file, each with
    how it differs: the vector indexes first, then the full-text ones, each in file order."""
    reasons = {}
    for name, want in declared_vector_indexes(text).items():
        have = existing.get(name)
        if have is not None and name not in dropped and (diff := _vector_differences(have, want)):
            reasons[name] = "; ".join(diff)
    for name, want in expected_fulltext_indexes(text).items():
        have = existing.get(name)
        if have is not None and (diff := _fulltext_differences(have, want)):
            reasons[name] = "; ".join(diff)
    return reasons


def _rebuild(db: Database, index: IndexInfo, reason: str) -> None:
    """Drop a drifted index for the CREATE that follows; a vector index is rebuilt from the
    vectors stored on its nodes (nothing is re-embedded), which takes a while on a large label."""
    fields: dict[str, Any] = {"index": index.name, "reason": reason}
    if index.type == "VECTOR" and len(index.labels) == 1:
        # the count store: instant, and tells the operator how long the wait below will be
        rows = db.read(f"MATCH (n:{_quote_name(index.labels[0])}) RETURN count(n) AS nodes")
        fields["nodes"] = rows[0]["nodes"] if rows else 0
    log_line("schema", "rebuild", level=logging.WARNING, **fields)
    db.write(f"DROP INDEX {_quote_name(index.name)} IF EXISTS")


def _clear_all_vectors(db: Database, text: str | None) -> None:
    labels = {want["label"] for want in declared_vector_indexes(text).values()}
    if text is None:
        labels.add("Node")  # every node, also those of labels without an index
    for label in sorted(labels):
        _clear_embeddings(db, label)


def _create_and_wait(db: Database, stmts: list[str], wait_seconds: int) -> tuple[list[IndexInfo], list[str]]:
    """Run the statements, wait for every index to come online; the indexes and the names created."""
    before = {i.name for i in list_indexes(db)}
    for stmt in stmts:
        db.write(stmt)
    try:
        db.write(f"CALL db.awaitIndexes({int(wait_seconds)})", timeout_=wait_seconds + 30)  # past NEO4J_QUERY_TIMEOUT_S
    except neo4j.exceptions.ClientError as err:
        # Its own timeout (a rebuild of many vectors): say which indexes, as below, not the raw error.
        if "awaitIndexes" not in (err.message or ""):
            raise
    indexes = list_indexes(db)
    not_online = [i for i in indexes if i.state != "ONLINE"]
    if not_online:
        names = ", ".join(f"{i.name} ({i.state} {i.population_percent or 0:.0f}%)" for i in not_online)
        remedy = (
            "they are still being built (a vector index reads every stored vector of its label); "
            "re-run `maxy schema apply` to wait for them"
            if all(i.state == "POPULATING" for i in not_online)
            else "check `maxy neo4j logs` and re-run `maxy schema apply`"
        )
        raise SchemaError(f"index(es) not online after {wait_seconds}s: {names}; {remedy}")
    return indexes, sorted({i.name for i in indexes} - before)


def apply_schema(
    db: Database,
    dimensions: int,
    *,
    recreate_vector_indexes: bool = False,
    wait_seconds: int = 300,
    embedder_name: str = "the embedder",
    text: str | None = None,
    embedder: Any = None,
) -> dict[str, Any]:
    """Create what is missing, wait for every index to come online, return a summary.

    ``text`` replaces the packaged schema.cypher (tests, migrations). ``embedder`` (or just
    ``embedder_name``) is recorded as the maker of the stored vectors; with the embedder
    itself, vectors stored before models were recorded are checked against it too.
    """
    started = time.perf_counter()
    if embedder is not None and embedder_name == "the embedder":
        embedder_name = embedder.name
    stmts = statements(dimensions, text)
    declared = expected_vector_indexes(text)
    bad = [i for i in dimension_mismatches(db, dimensions) if i.name in declared]
    if bad and not recreate_vector_indexes:
        raise SchemaError(_mismatch_message(bad, dimensions, embedder_name))
    model_changed = _model_changed(db, embedder_name, embedder, recreate_vector_indexes)
    dropped = _drop_wrong_dimensions(db, bad)
    # An index whose definition drifted from the file is rebuilt (IF NOT EXISTS would keep the
    # old one): a full-text index missing labels silently hides them from BM25, a vector index
    # without its filter property cannot serve the account-filtered SEARCH, and one with another
    # quantization than declared loses recall (a database made before the schema declared it).
    existing = {i.name: i for i in list_indexes(db)}
    rebuilt = _drifted(existing, text, dropped)
    for name, reason in rebuilt.items():
        _rebuild(db, existing[name], reason)
        dropped.append(name)
    if model_changed:  # same dimensions, other model: keep the indexes, drop every vector
        _clear_all_vectors(db, text)
    indexes, created = _create_and_wait(db, stmts, wait_seconds)
    if embedder_name != "the embedder":
        _record_embedder(db, embedder_name, dimensions)
    summary = {
        "dimensions": dimensions,
        "statements": len(stmts),
        "created": created,
        "dropped": dropped,
        "rebuilt": rebuilt,
        "vectorIndexes": sum(1 for i in indexes if i.type == "VECTOR"),
        "fulltext": any(i.name == FULLTEXT_INDEX and i.state == "ONLINE" for i in indexes),
        "modelChanged": model_changed,
        "ms": round((time.perf_counter() - started) * 1000),
    }
    log_line(
        "schema",
        "apply",
        dimensions=dimensions,
        created=len(created),
        dropped=len(dropped),
        rebuilt=len(rebuilt),
        vector=summary["vectorIndexes"],
        fulltext=summary["fulltext"],
        ms=summary["ms"],
    )
    _notify_schema_change()
    return summary


def _clear_embeddings(db: Database, label: str) -> None:
    # The label comes from SHOW INDEXES metadata, not from a caller; still, only plain identifiers.
    db.autocommit(
        f"MATCH (n:{_quote_name(label)}) WHERE n.embedding IS NOT NULL "
        "CALL (n) { SET n.embedding = null } IN TRANSACTIONS OF 5000 ROWS"
    )


def _quote_name(name: str) -> str:
    if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
        raise SchemaError(f"unexpected index name {name!r}")
    return f"`{name}`"


_listeners: list[Any] = []


def on_schema_change(callback: Any) -> None:
    """Caches of index names (the search layer's label->index map) register here."""
    _listeners.append(callback)


def _notify_schema_change() -> None:
    for callback in list(_listeners):
        callback()
