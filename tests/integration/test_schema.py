"""schema.cypher agrees with the allow-lists, applies idempotently, guards vector dimensions and
rebuilds an index whose live definition (quantization included) drifted from the file."""

from __future__ import annotations

import logging
import random
from pathlib import Path

import pytest
from maxy.errors import SchemaError
from maxy.graph.allowlist import COMMUNITY_EMBEDDED_LABELS, INDEXED_LABELS, SEARCHABLE_LABELS
from maxy.graph.schema import (
    apply_schema,
    check_vector_dimensions,
    declared_vector_indexes,
    expected_fulltext_indexes,
    expected_vector_indexes,
    list_indexes,
    schema_text,
    statements,
)
from maxy.graph.text import _BODY_PROPS, _HEAD_PROPS

pytestmark = pytest.mark.alone  # creates, drops and rebuilds indexes every account shares, and records another model

ROOT = Path(__file__).resolve().parents[2]


def test_root_schema_file_is_the_packaged_one():
    assert (ROOT / "schema.cypher").read_text() == schema_text()


def test_one_vector_index_per_searchable_label():
    declared = expected_vector_indexes()
    assert sorted(declared.values()) == sorted(INDEXED_LABELS) == sorted(SEARCHABLE_LABELS + COMMUNITY_EMBEDDED_LABELS)
    assert declared["organization_embedding"] == "Organization" and declared["note_embedding"] == "Note"
    assert declared["message_embedding"] == "Message"


def test_entity_search_covers_every_searchable_label_and_embedded_text_property():
    ft = expected_fulltext_indexes()["entity_search"]
    assert ft["labels"] == sorted(SEARCHABLE_LABELS)
    # every property whose text is embedded is BM25-searchable too
    assert {*_HEAD_PROPS, *_BODY_PROPS, "summary"} <= set(ft["properties"])
    assert ft["properties"][-1] == "accountId"  # accountId: in-index filter only
    # a community's records are member-private: found by meaning through the member guard only
    assert not set(COMMUNITY_EMBEDDED_LABELS) & set(ft["labels"])


@pytest.mark.parametrize("dims", [0, -1, 5000, "384", True])
def test_statements_reject_bad_dimensions(dims):
    with pytest.raises(SchemaError):
        statements(dims)  # type: ignore[arg-type]


def test_statements_substitute_dimensions():
    stmts = statements(384)
    assert all("{{" not in s for s in stmts)
    assert sum("`vector.dimensions`: 384" in s for s in stmts) == len(INDEXED_LABELS)


def test_every_vector_index_declares_no_quantization():
    """Neo4j 2026.08 defaults to BINARY, which loses recall at 100k vectors (docs/benchmarks.md)."""
    declared = declared_vector_indexes()
    assert {spec["quantization"] for spec in declared.values()} == {"NONE"}
    assert sum("`vector.quantization.enabled`: false" in s for s in statements(384)) == len(declared)


def test_declared_vector_settings_are_parsed_as_neo4j_reports_them():
    text = (
        QUANT_SCHEMA.replace("'none'", "'scalar', `vector.hnsw.m`: 32, `vector.hnsw.ef_construction`: 200")
        + "// CREATE VECTOR INDEX commented_out IF NOT EXISTS FOR (n:Gone) ON n.embedding;\n"
    )
    assert declared_vector_indexes(text) == {
        "zz_quant_test_embedding": {
            "label": "ZzQuantTest",
            "properties": ["embedding", "accountId"],
            "quantization": "SCALAR",
            "hnsw_m": 32,
            "hnsw_ef_construction": 200,
        }
    }
    unset = declared_vector_indexes(TEST_SCHEMA)["zz_schema_test_embedding"]
    assert (unset["quantization"], unset["hnsw_m"], unset["hnsw_ef_construction"]) == (None, None, None)


def test_apply_is_idempotent_and_everything_is_online(db, embedder):
    summary = apply_schema(db, embedder.dimensions)
    assert summary["created"] == [] and summary["dropped"] == [] and summary["rebuilt"] == {}
    indexes = {i.name: i for i in list_indexes(db)}
    for name in expected_vector_indexes():
        assert indexes[name].state == "ONLINE" and indexes[name].dimensions == embedder.dimensions
        assert indexes[name].quantization == "NONE"
    assert indexes["entity_search"].state == "ONLINE"


def test_dimension_change_is_a_clear_error_naming_the_remedy(db, embedder):
    with pytest.raises(SchemaError) as exc:
        apply_schema(db, embedder.dimensions * 2)
    assert "--recreate-vector-indexes" in str(exc.value)
    with pytest.raises(SchemaError):
        check_vector_dimensions(db, embedder.dimensions * 2, "bigger-model")
    check_vector_dimensions(db, embedder.dimensions)


TEST_SCHEMA = """
CREATE VECTOR INDEX zz_schema_test_embedding IF NOT EXISTS FOR (n:ZzSchemaTest) ON n.embedding
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine'}};
CREATE FULLTEXT INDEX zz_schema_test_ft IF NOT EXISTS FOR (n:ZzSchemaTest) ON EACH [n.name]
  OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};
"""


def test_recreate_rebuilds_vector_index_and_clears_stale_vectors(db):
    try:
        apply_schema(db, 8, text=TEST_SCHEMA)
        db.write("CREATE (:ZzSchemaTest {name: 'probe', embedding: [1.0,0,0,0,0,0,0,0]})")
        with pytest.raises(SchemaError):
            apply_schema(db, 16, text=TEST_SCHEMA)
        summary = apply_schema(db, 16, text=TEST_SCHEMA, recreate_vector_indexes=True)
        assert summary["dropped"] == ["zz_schema_test_embedding"]
        dims = {i.name: i.dimensions for i in list_indexes(db)}
        assert dims["zz_schema_test_embedding"] == 16
        assert db.read("MATCH (n:ZzSchemaTest) RETURN n.embedding AS e")[0]["e"] is None
        # A full-text index whose definition drifted from the file is rebuilt, not kept.
        drifted = TEST_SCHEMA.replace("ON EACH [n.name]", "ON EACH [n.name, n.title]")
        summary = apply_schema(db, 16, text=drifted)
        assert summary["dropped"] == ["zz_schema_test_ft"]
        ft = {i.name: i for i in list_indexes(db)}["zz_schema_test_ft"]
        assert ft.properties == ["name", "title"]
    finally:
        db.write("MATCH (n:ZzSchemaTest) DETACH DELETE n")
        db.write("DROP INDEX zz_schema_test_embedding IF EXISTS")
        db.write("DROP INDEX zz_schema_test_ft IF EXISTS")


def test_model_switch_with_same_dimensions_is_refused_until_recreate(db, embedder):
    """bge-small and MiniLM both give 384 dimensions: the recorded model catches the switch."""
    from maxy.graph.schema import _record_embedder, recorded_embedder

    assert recorded_embedder(db) == {"model": embedder.name, "dimensions": embedder.dimensions}
    with pytest.raises(SchemaError) as exc:
        apply_schema(db, embedder.dimensions, embedder_name="some-other-384-model")
    message = str(exc.value)
    assert f"made by {embedder.name}" in message and "maxy reindex --recreate" in message
    with pytest.raises(SchemaError, match="some-other-384-model"):
        check_vector_dimensions(db, embedder.dimensions, "some-other-384-model")  # the writer's check
    assert recorded_embedder(db)["model"] == embedder.name  # a refusal changes nothing
    # --recreate with a schema of one test label: its vectors are dropped, the index kept,
    # and the new model recorded.
    try:
        apply_schema(db, 8, text=TEST_SCHEMA, embedder_name=embedder.name)
        db.write("CREATE (:ZzSchemaTest {name: 'probe', embedding: [1.0,0,0,0,0,0,0,0]})")
        summary = apply_schema(db, 8, text=TEST_SCHEMA, recreate_vector_indexes=True, embedder_name="model-b")
        assert summary["modelChanged"] is True and summary["dropped"] == []
        assert db.read("MATCH (n:ZzSchemaTest) RETURN n.embedding AS e")[0]["e"] is None
        assert recorded_embedder(db) == {"model": "model-b", "dimensions": 8}
    finally:
        _record_embedder(db, embedder.name, embedder.dimensions)
        db.write("MATCH (n:ZzSchemaTest) DETACH DELETE n")
        db.write("DROP INDEX zz_schema_test_embedding IF EXISTS")
        db.write("DROP INDEX zz_schema_test_ft IF EXISTS")
    check_vector_dimensions(db, embedder.dimensions, embedder.name)


def test_status_reports_which_model_made_the_vectors(db, embedder, settings):
    from maxy.graph.schema import _record_embedder
    from maxy.status import collect_status

    report = collect_status(settings)
    assert report["embedder"]["vectorsFrom"] == embedder.name and report["healthy"], report["problems"]
    try:
        _record_embedder(db, "some-other-384-model", embedder.dimensions)
        report = collect_status(settings)
        assert not report["healthy"]
        assert any("some-other-384-model" in p and "maxy reindex --recreate" in p for p in report["problems"])
    finally:
        _record_embedder(db, embedder.name, embedder.dimensions)


class _OtherModel:
    """Another 384-dimension model: the real embedder's vectors, coordinates reversed."""

    def __init__(self, real):
        self.real, self.name, self.dimensions = real, "other-384-model", real.dimensions

    def embed(self, texts):
        return [list(reversed(v)) for v in self.real.embed(texts)]


def test_vectors_from_before_models_were_recorded_are_checked_by_re_embedding(db, embedder, account, monkeypatch):
    from maxy.graph import schema
    from maxy.graph.schema import _record_embedder, legacy_vectors_match, recorded_embedder
    from maxy.graph.write import GraphWriter, NodeSpec

    GraphWriter(db, account, embedder).write_many(
        [
            NodeSpec(["Event"], {"name": f"Legacy {i}", "description": f"an event stored long ago, number {i}"})
            for i in range(3)
        ]
    )
    assert legacy_vectors_match(db, embedder, account_id=account.account_id) is True
    assert legacy_vectors_match(db, _OtherModel(embedder), account_id=account.account_id) is False
    assert legacy_vectors_match(db, embedder, account_id="no-such-account") is None
    # apply_schema on a database with vectors but no record: a mismatch is refused like a
    # recorded one (the sample is taken database-wide; its verdict is pinned here).
    db.write("MATCH (m:MaxyMeta {key: 'embedding'}) DELETE m")
    try:
        monkeypatch.setattr(schema, "legacy_vectors_match", lambda db, emb, **kw: False)
        with pytest.raises(SchemaError, match="an earlier model"):
            apply_schema(db, embedder.dimensions, embedder=embedder)
        assert recorded_embedder(db) is None  # refused: nothing recorded
        monkeypatch.setattr(schema, "legacy_vectors_match", lambda db, emb, **kw: True)
        apply_schema(db, embedder.dimensions, embedder=embedder)
        assert recorded_embedder(db) == {"model": embedder.name, "dimensions": embedder.dimensions}
    finally:
        _record_embedder(db, embedder.name, embedder.dimensions)


# The old way (no quantization option: Neo4j 2026.08's BINARY) and the declared one, as in
# schema.cypher: Cypher 25, the account as filter property.
QUANT_SCHEMA = """
CYPHER 25 CREATE VECTOR INDEX zz_quant_test_embedding IF NOT EXISTS FOR (n:ZzQuantTest) ON n.embedding
  WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine',
    `vector.quantization.type`: 'none'}};
"""
OLD_QUANT_SCHEMA = QUANT_SCHEMA.replace(",\n    `vector.quantization.type`: 'none'", "")


def _search(db, index: str, label: str, vector: list[float], account_id: str, k: int) -> list[str]:
    return [
        r["name"]
        for r in db.read(
            f"CYPHER 25 MATCH (n:{label}) SEARCH n IN (VECTOR INDEX {index} FOR $v WHERE n.accountId = $acc "
            "LIMIT $k) SCORE AS s RETURN n.name AS name ORDER BY s DESC",
            v=vector,
            acc=account_id,
            k=k,
        )
    ]


def test_vector_index_of_other_quantization_is_rebuilt_from_its_vectors(db, caplog):
    """A database made before the schema declared the quantization: apply rebuilds the index
    with the declared one from the vectors on the nodes, says so, and waits for it."""
    caplog.set_level(logging.INFO, logger="maxy")
    rng = random.Random(7)
    vectors = [[rng.gauss(0, 1) for _ in range(16)] for _ in range(300)]
    try:
        apply_schema(db, 16, text=OLD_QUANT_SCHEMA)
        old = {i.name: i for i in list_indexes(db)}["zz_quant_test_embedding"]
        assert old.quantization == "BINARY"  # the server's default when none is declared
        db.write(
            "UNWIND range(0, size($vecs) - 1) AS i "
            "CREATE (:ZzQuantTest {name: 'v' + i, accountId: 'zz-quant', embedding: $vecs[i]})",
            vecs=vectors,
        )
        before = _search(db, "zz_quant_test_embedding", "ZzQuantTest", vectors[42], "zz-quant", 5)
        assert before[0] == "v42"
        caplog.clear()
        summary = apply_schema(db, 16, text=QUANT_SCHEMA)
        assert summary["rebuilt"] == {"zz_quant_test_embedding": "quantization.type BINARY -> NONE"}
        assert summary["dropped"] == ["zz_quant_test_embedding"] == summary["created"]
        rebuilt = [r.getMessage() for r in caplog.records if r.getMessage().startswith("[schema] rebuild ")]
        assert rebuilt == [
            '[schema] rebuild index=zz_quant_test_embedding reason="quantization.type BINARY -> NONE" nodes=300'
        ]
        assert all(r.levelno == logging.WARNING for r in caplog.records if "[schema] rebuild " in r.getMessage())
        now = {i.name: i for i in list_indexes(db)}["zz_quant_test_embedding"]
        assert (now.quantization, now.state, now.properties) == ("NONE", "ONLINE", ["embedding", "accountId"])
        # The vectors stayed on the nodes and the new index holds every one of them.
        for i in (0, 42, 299):
            assert _search(db, "zz_quant_test_embedding", "ZzQuantTest", vectors[i], "zz-quant", 5)[0] == f"v{i}"
        assert len(_search(db, "zz_quant_test_embedding", "ZzQuantTest", vectors[0], "zz-quant", 300)) == 300
        again = apply_schema(db, 16, text=QUANT_SCHEMA)
        assert again["rebuilt"] == {} and again["dropped"] == [] and again["created"] == []
    finally:
        db.write("MATCH (n:ZzQuantTest) DETACH DELETE n")
        db.write("DROP INDEX zz_quant_test_embedding IF EXISTS")


def test_schema_indexes_made_binary_by_an_older_maxy_are_migrated(db, embedder, account):
    """The packaged schema on a database whose note_embedding was created the old way: apply
    rebuilds that index alone, and search finds the account's notes through it afterwards."""
    from maxy.graph.guards import Caller
    from maxy.graph.write import GraphWriter, NodeSpec
    from maxy.search.vector import vector_search

    notes = GraphWriter(db, account, embedder).write_many(
        [
            NodeSpec(["Note"], {"name": "Boiler service", "description": "the boiler is serviced every October"}),
            NodeSpec(["Note"], {"name": "Roses", "description": "prune the roses in late winter"}),
        ]
    )
    old_way = next(s for s in statements(embedder.dimensions) if "INDEX note_embedding " in s)
    old_way = old_way.replace(", `vector.quantization.enabled`: false", "")
    assert "quantization" not in old_way
    try:
        db.write("DROP INDEX note_embedding")
        db.write(old_way)
        db.write("CALL db.awaitIndexes(300)")
        assert {i.name: i for i in list_indexes(db)}["note_embedding"].quantization == "BINARY"
        summary = apply_schema(db, embedder.dimensions, embedder=embedder)
        assert summary["rebuilt"] == {"note_embedding": "quantization.type BINARY -> NONE"}
        assert summary["dropped"] == ["note_embedding"] == summary["created"]
        index = {i.name: i for i in list_indexes(db)}["note_embedding"]
        assert (index.quantization, index.state) == ("NONE", "ONLINE")
        query = embedder.embed(["when is the boiler serviced?"])[0]
        assert _search(db, "note_embedding", "Note", query, account.account_id, 2)[0] == "Boiler service"
        hits = vector_search(db, Caller(account.account_id), [query], ["Note"], 5)[0]
        assert [h.node_id for h in hits][:1] == [notes[0].node_id]
        assert apply_schema(db, embedder.dimensions, embedder=embedder)["rebuilt"] == {}
    finally:
        apply_schema(db, embedder.dimensions, embedder=embedder)  # the declared index, whatever happened
