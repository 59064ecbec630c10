"""The write primitive against the real Neo4j."""

from __future__ import annotations

import logging

import pytest
from maxy.embeddings.base import EmbeddingError
from maxy.errors import GraphWriteError, SchemaError, ValidationError
from maxy.graph.write import Edge, GraphWriter, NodeSpec


def count_nodes(db, account_id: str) -> int:
    return db.read("MATCH (n:Node {accountId: $a}) RETURN count(n) AS c", a=account_id)[0]["c"]


def node(db, node_id: str) -> dict:
    rows = db.read("MATCH (n:Node {nodeId: $id}) RETURN n, labels(n) AS labels", id=node_id)
    assert rows, f"node {node_id} not found"
    return {**rows[0]["n"], "_labels": rows[0]["labels"]}


class BrokenEmbedder:
    """An outage of the configured model: same name and size, every call fails."""

    def __init__(self) -> None:
        from maxy.embeddings import get_embedder

        real = get_embedder()
        self.name, self.dimensions = real.name, real.dimensions

    def embed(self, texts):
        raise EmbeddingError("embedding service down (test)")


class WrongDimsEmbedder:
    name = "wrong-dims"
    dimensions = 768

    def embed(self, texts):
        return [[0.1] * 768 for _ in texts]


@pytest.fixture()
def writer(db, account, embedder):
    return GraphWriter(db, account, embedder)


def test_write_stamps_identity_scope_agents_and_embeds(db, writer, account, embedder):
    result = writer.write(
        NodeSpec(
            ["Service"], {"name": "Boiler repair", "description": "Fixes boilers"}, scope="public", agents=["alpha"]
        )
    )
    assert result.created and result.embedded and result.provenance is None
    n = node(db, result.node_id)
    assert n["accountId"] == account.account_id
    assert n["scope"] == "public" and n["agents"] == ["alpha"]
    assert n["createdBy"] == "admin" and n["createdAt"] == n["updatedAt"]
    assert set(n["_labels"]) == {"Node", "Service"}
    assert len(n["embedding"]) == embedder.dimensions


def test_update_by_node_id_keeps_created_at_and_reembeds(db, writer):
    first = writer.write(NodeSpec(["Service"], {"name": "Old name"}))
    before = node(db, first.node_id)
    second = writer.write(NodeSpec(["Service"], {"name": "New name"}, node_id=first.node_id))
    after = node(db, first.node_id)
    assert not second.created
    assert after["name"] == "New name" and after["createdAt"] == before["createdAt"]
    assert after["embedding"] != before["embedding"]


def test_mismatched_account_id_is_refused_with_reject_line(db, writer, account, caplog):
    caplog.set_level(logging.INFO, logger="maxy")
    with pytest.raises(GraphWriteError) as exc:
        writer.write(NodeSpec(["Note"], {"name": "x"}), account_id="00000000-0000-0000-0000-000000000000")
    assert exc.value.reason == "invalid-account-id"
    with pytest.raises(GraphWriteError):
        writer.write(NodeSpec(["Note"], {"name": "x", "accountId": "someone-else"}))
    assert "[graph-write] reject reason=invalid-account-id" in caplog.text
    assert count_nodes(db, account.account_id) == 0


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        (NodeSpec(["NoSuchLabel"], {"name": "x"}), "labels"),
        (NodeSpec(["Note`) DETACH DELETE n //"], {"name": "x"}), "labels"),
        (NodeSpec([], {"name": "x"}), "labels"),
        (NodeSpec(["Note"], {"bad name": 1}), "properties"),
        (NodeSpec(["Note"], {"x` = 1 SET n.y": 1}), "properties"),
        (NodeSpec(["Note"], {"embedding": [0.1]}), "properties"),
        (NodeSpec(["Note"], {"deletedAt": "2020"}), "properties"),
        (NodeSpec(["Note"], {"nested": {"a": 1}}), "properties.nested"),
        (NodeSpec(["Note"], {"mixed": [1, "a"]}), "properties.mixed"),
        (NodeSpec(["Note"], {"name": "x"}, scope="secret"), "scope"),
        (NodeSpec(["Note"], {"name": "x"}, agents=["Bad Slug"]), "agents"),
        (NodeSpec(["Note"], {"name": "x"}, agents="alpha"), "agents"),
        (NodeSpec(["Note"], {"name": "x"}, edges=[Edge("NOT_A_TYPE", "abc")]), "edges[0].type"),
        (NodeSpec(["Note"], {"name": "x"}, edges=[Edge("ABOUT", "abc", "sideways")]), "edges[0].direction"),
        (NodeSpec(["Note"], {"name": "x"}, node_id="has space"), "nodeId"),
    ],
)
def test_bad_input_names_the_field_and_writes_nothing(db, writer, account, spec, field):
    good = NodeSpec(["Note"], {"name": "fine"})
    with pytest.raises(ValidationError) as exc:
        writer.write_many([good, spec])
    assert exc.value.field == f"nodes[1].{field}"
    assert count_nodes(db, account.account_id) == 0


def test_edges_link_same_account_nodes_in_either_direction(db, writer):
    doc = writer.write(NodeSpec(["KnowledgeDocument"], {"title": "Manual", "summary": "About boilers"}))
    sec = writer.write(
        NodeSpec(["Section"], {"title": "Intro", "summary": "Start"}, edges=[Edge("HAS_SECTION", doc.node_id, "in")])
    )
    rows = db.read(
        "MATCH (d:Node {nodeId: $d})-[r:HAS_SECTION]->(s:Node {nodeId: $s}) RETURN count(r) AS c",
        d=doc.node_id,
        s=sec.node_id,
    )
    assert rows[0]["c"] == 1


def test_edge_to_another_accounts_node_is_refused_and_nothing_written(db, writer, account, make_account, embedder):
    other = GraphWriter(db, make_account("other"), embedder)
    foreign = other.write(NodeSpec(["Note"], {"name": "theirs"}))
    with pytest.raises(GraphWriteError) as exc:
        writer.write_many(
            [
                NodeSpec(["Note"], {"name": "a"}),
                NodeSpec(["Note"], {"name": "b"}, edges=[Edge("ABOUT", foreign.node_id)]),
            ]
        )
    assert exc.value.reason == "not-writable"
    assert count_nodes(db, account.account_id) == 0
    with pytest.raises(GraphWriteError) as absent:
        writer.write(NodeSpec(["Note"], {"name": "b"}, edges=[Edge("ABOUT", "no-such-node")]))
    # a foreign target and a missing one get the same answer: the refusal confirms no id
    assert str(exc.value).replace(foreign.node_id, "X") == str(absent.value).replace("no-such-node", "X")


def test_reusing_another_accounts_node_id_is_refused(db, writer, make_account, embedder):
    other = GraphWriter(db, make_account("other"), embedder)
    theirs = other.write(NodeSpec(["Note"], {"name": "theirs"}))
    with pytest.raises(GraphWriteError) as exc:
        writer.write(NodeSpec(["Note"], {"name": "hijack"}, node_id=theirs.node_id))
    assert exc.value.reason == "not-writable"
    assert str(exc.value) == f"nodeId: no node {theirs.node_id!r} that you can write; nothing was written"
    assert node(db, theirs.node_id)["name"] == "theirs"


def test_provenance_gate_warns_without_produced_edge(db, writer, caplog):
    caplog.set_level(logging.INFO, logger="maxy")
    bare = writer.write(NodeSpec(["Person"], {"name": "Ada Lovelace"}))
    assert bare.provenance is False
    assert "[graph-write] warn reason=missing-provenance labels=Person agent=admin" in caplog.text

    caplog.clear()
    task = writer.write(NodeSpec(["Task"], {"name": "import contacts", "kind": "contact-import"}))
    ok = writer.write(NodeSpec(["Person"], {"name": "Grace Hopper"}, edges=[Edge("PRODUCED", task.node_id, "in")]))
    assert ok.provenance is True
    assert "missing-provenance" not in caplog.text

    system = writer.write(NodeSpec(["AdminUser"], {"name": "owner"}), created_by="system")
    assert system.provenance is False
    assert "missing-provenance" not in caplog.text


def test_failed_embedding_stores_node_without_vector(db, account, caplog):
    caplog.set_level(logging.INFO, logger="maxy")
    writer = GraphWriter(db, account, BrokenEmbedder())
    result = writer.write(NodeSpec(["Event"], {"name": "Launch party"}))
    assert not result.embedded
    stored = node(db, result.node_id)
    assert stored["name"] == "Launch party" and "embedding" not in stored
    assert "reason=embed-failed" in caplog.text


def test_embedder_with_other_dimensions_is_a_clear_error(db, account):
    writer = GraphWriter(db, account, WrongDimsEmbedder())
    with pytest.raises(SchemaError) as exc:
        writer.write(NodeSpec(["Event"], {"name": "x"}))
    assert "--recreate-vector-indexes" in str(exc.value)
    assert count_nodes(db, account.account_id) == 0


def test_batched_write_many(db, account, embedder):
    writer = GraphWriter(db, account, embedder, batch_size=64)
    done: list[int] = []
    results = writer.write_many(
        [NodeSpec(["Chunk"], {"content": f"passage number {i}", "summary": f"passage {i}"}) for i in range(150)],
        progress=done.append,
    )
    assert len({r.node_id for r in results}) == 150 and all(r.embedded for r in results)
    assert done[-1] == 150
    assert count_nodes(db, account.account_id) == 150


def test_partial_update_keeps_scope_agents_and_embeds_the_merged_text(db, writer, embedder):
    first = writer.write(
        NodeSpec(["Service"], {"name": "Boiler repair", "description": "gas boilers"}, scope="admin", agents=["alpha"])
    )
    writer.write(NodeSpec(["Service"], {"phone": "0123"}, node_id=first.node_id))
    n = node(db, first.node_id)
    assert n["scope"] == "admin" and n["agents"] == ["alpha"], "an update that names no scope keeps it"
    assert n["name"] == "Boiler repair" and n["phone"] == "0123"
    expected = embedder.embed(["Boiler repair\ngas boilers\nphone: 0123"])[0]  # an entity embeds its other values
    assert n["embedding"] == pytest.approx(expected, abs=1e-5), "the embedding covers the merged properties"
