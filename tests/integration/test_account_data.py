"""An account's data against the real Neo4j: delete (soft, purge), export and import back
(exact, re-runnable), with the same search answers before and after."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from maxy.accounts import list_accounts, validate_account
from maxy.dataops import account_files, importing
from maxy.dataops.deletion import delete_account, purge_deleted_accounts
from maxy.dataops.export import export_account
from maxy.dataops.importing import count_graph, import_account
from maxy.errors import AccountError, GraphWriteError, ValidationError
from maxy.graph.guards import Caller
from maxy.graph.write import Edge, GraphWriter, NodeSpec
from maxy.ingest.hierarchy import ingest_record
from maxy.search import SearchRequest, hybrid

from tests.cli_inprocess import maxy
from tests.conftest import purge_account
from tests.hypothesis_profile import examples
from tests.plugins_fixture.helpers import child_env

QUERIES = ("who fixes boilers", "Ada Lovelace at Globex", "how are chunks embedded")


@pytest.fixture()
def filled(db, account, embedder):
    """An account with entities, relationships with properties, a document and a forgotten node."""
    writer = GraphWriter(db, account, embedder)
    globex = writer.write(NodeSpec(["Organization"], {"name": "Globex", "employees": 120, "rating": 4.5}))
    writer.write(
        NodeSpec(
            ["Person"],
            {"name": "Ada Lovelace", "aliases": ["Ada", "Countess"], "active": True},
            scope="public",
            agents=["alpha"],
            edges=[Edge("WORKS_FOR", globex.node_id, properties={"since": 2021, "role": "analyst"})],
        )
    )
    writer.write(NodeSpec(["Service"], {"name": "Boiler repair", "description": "We fix gas boilers."}))
    gone = writer.write(NodeSpec(["Note"], {"name": "old note", "body": "forgotten"}))
    db.write("MATCH (n:Node {nodeId: $id}) SET n.deletedAt = $at", id=gone.node_id, at="2026-01-01T00:00:00+00:00")
    ingest_record(
        writer,
        "doc-1",
        "Embedding",
        "# Embedding\n\nChunks are embedded by their text. Sections by their title and summary.\n\n"
        "## Search\n\nSearch fuses vector and full-text hits.",
    )
    return account


def _search(db, embedder, account_id: str) -> list[list[tuple[str, float]]]:
    caller = Caller(account_id)
    return [
        [(h.node_id, h.score) for h in hybrid(db, caller, SearchRequest(q, limit=10, min_relevance=0.0), embedder).hits]
        for q in QUERIES
    ]


def _graph(db, account_id: str) -> tuple[list, list]:
    nodes = db.read(
        "MATCH (n:Node {accountId: $acc}) RETURN n.nodeId AS id, labels(n) AS labels, properties(n) AS props "
        "ORDER BY id",
        acc=account_id,
    )
    for row in nodes:
        row["labels"] = sorted(row["labels"])
    rels = db.read(
        "MATCH (a:Node {accountId: $acc})-[r]->(b:Node {accountId: $acc}) "
        "RETURN a.nodeId AS a, type(r) AS t, b.nodeId AS b, properties(r) AS p ORDER BY a, t, b",
        acc=account_id,
    )
    return nodes, rels


def _export(db, data_root: Path, account_id: str, path: Path, with_vectors: bool) -> dict:
    with open(path, "w", encoding="utf-8") as fh:
        return export_account(db, data_root, account_id, fh, with_vectors=with_vectors)


def test_export_purge_import_gives_the_same_graph_and_search(db, embedder, filled, data_root, tmp_path):
    acc = filled.account_id
    nodes_before, rels_before = _graph(db, acc)
    search_before = _search(db, embedder, acc)
    record_before = account_files.read_account_record(data_root, acc)
    path = tmp_path / "account.jsonl"
    header = _export(db, data_root, acc, path, with_vectors=False)
    assert header["counts"] == {"nodes": len(nodes_before), "relationships": len(rels_before)}
    assert header["model"] == embedder.name and header["withVectors"] is False
    assert all("embedding" not in json.loads(line).get("properties", {}) for line in path.read_text().splitlines())

    delete_account(db, data_root, acc, active_account_id=None, purge_now=True, confirmed=True)
    assert count_graph(db, acc) == {"nodes": 0, "relationships": 0}
    assert acc not in {a.account_id for a in list_accounts(data_root)}

    result = import_account(db, data_root, path, embedder=embedder)
    assert (result.nodes, result.relationships, result.vectors) == (len(nodes_before), len(rels_before), "re-embedded")
    assert account_files.read_account_record(data_root, acc) == record_before
    nodes_after, rels_after = _graph(db, acc)
    assert rels_after == rels_before
    strip = [dict(n, props={k: v for k, v in n["props"].items() if k != "embedding"}) for n in nodes_before]
    assert [dict(n, props={k: v for k, v in n["props"].items() if k != "embedding"}) for n in nodes_after] == strip
    # the same model on the same text: every live node gets back its vector; forgotten ones none
    for was, now in zip(nodes_before, nodes_after, strict=True):
        expected = None if "deletedAt" in was["props"] else was["props"].get("embedding")
        assert now["props"].get("embedding") == expected, was["id"]
    # the same hits in the same order; scores to rounding (BM25 statistics span the shared index)
    search_after = _search(db, embedder, acc)
    assert [[i for i, _ in hits] for hits in search_after] == [[i for i, _ in hits] for hits in search_before]
    for before, after in zip(search_before, search_after, strict=True):
        assert all(abs(a[1] - b[1]) < 0.01 for a, b in zip(before, after, strict=True))


def test_with_vectors_round_trip_is_identical(db, embedder, filled, data_root, tmp_path):
    acc = filled.account_id
    nodes_before, rels_before = _graph(db, acc)
    assert any("embedding" in n["props"] for n in nodes_before)
    search_before = _search(db, embedder, acc)
    path = tmp_path / "account.jsonl"
    _export(db, data_root, acc, path, with_vectors=True)
    delete_account(db, data_root, acc, active_account_id=None, purge_now=True, confirmed=True)

    result = import_account(db, data_root, path, embedder=None)
    assert result.vectors == "from-file"
    assert _graph(db, acc) == (nodes_before, rels_before)  # every vector equal, float for float
    assert _search(db, embedder, acc) == search_before


def test_soft_delete_hides_everything_and_purges_after_the_grace_period(db, embedder, filled, data_root):
    acc = filled.account_id
    with pytest.raises(AccountError, match="is the active ACCOUNT_ID: add --force"):
        delete_account(db, data_root, acc, active_account_id=acc)
    with pytest.raises(ValidationError, match="add --yes"):
        delete_account(db, data_root, acc, active_account_id=None, purge_now=True)
    assert count_graph(db, acc)["nodes"] and any(_search(db, embedder, acc))

    result = delete_account(db, data_root, acc, active_account_id=acc, force=True)
    assert result.stamped == count_graph(db, acc)["nodes"] - 1  # the forgotten note keeps its own stamp
    assert not any(_search(db, embedder, acc))
    with pytest.raises(AccountError):
        validate_account(data_root, acc)
    assert (account_files.deleted_folder(data_root, acc) / "account.json").is_file()
    again = delete_account(db, data_root, acc, active_account_id=None)
    assert again.alreadyDeleted and again.deletedAt == result.deletedAt and again.stamped == 0

    assert purge_deleted_accounts(db, data_root, grace_days=7) == {}
    assert count_graph(db, acc)["nodes"]
    later = datetime.now(UTC) + timedelta(days=8)
    held = count_graph(db, acc)["nodes"]
    assert purge_deleted_accounts(db, data_root, grace_days=7, now=later, dry_run=True) == {acc: held}
    assert count_graph(db, acc)["nodes"] == held
    assert purge_deleted_accounts(db, data_root, grace_days=7, now=later) == {acc: held}
    assert count_graph(db, acc)["nodes"] == 0
    assert not account_files.deleted_folder(data_root, acc).exists()
    with pytest.raises(AccountError, match="no such account"):
        delete_account(db, data_root, acc, active_account_id=None)


def test_import_refuses_a_live_account_and_replaces_it_only_when_asked(db, embedder, filled, data_root, tmp_path):
    acc = filled.account_id
    path = tmp_path / "account.jsonl"
    _export(db, data_root, acc, path, with_vectors=True)
    before = _graph(db, acc)
    with pytest.raises(GraphWriteError, match="already has .* --replace"):
        import_account(db, data_root, path)
    GraphWriter(db, filled, None).write(NodeSpec(["Note"], {"name": "written after the export"}))
    result = import_account(db, data_root, path, replace=True)
    assert result.cleared == len(before[0]) + 1
    assert _graph(db, acc) == before


def test_an_interrupted_import_is_run_again(db, embedder, filled, data_root, tmp_path, monkeypatch):
    acc = filled.account_id
    path = tmp_path / "account.jsonl"
    _export(db, data_root, acc, path, with_vectors=True)
    before = _graph(db, acc)
    delete_account(db, data_root, acc, active_account_id=None, purge_now=True, confirmed=True)

    def crash(*_args):
        raise KeyboardInterrupt

    monkeypatch.setattr(importing, "_write_relationships", crash)
    with pytest.raises(KeyboardInterrupt):
        import_account(db, data_root, path)
    assert account_files.import_pending(data_root, acc)
    assert count_graph(db, acc) == {"nodes": len(before[0]), "relationships": 0}
    monkeypatch.undo()
    result = import_account(db, data_root, path)
    assert result.resumed and not account_files.import_pending(data_root, acc)
    assert _graph(db, acc) == before

    # interrupted again, then started over with --replace
    delete_account(db, data_root, acc, active_account_id=None, purge_now=True, confirmed=True)
    monkeypatch.setattr(importing, "_write_relationships", crash)
    with pytest.raises(KeyboardInterrupt):
        import_account(db, data_root, path)
    monkeypatch.undo()
    result = import_account(db, data_root, path, replace=True)
    assert result.resumed and result.cleared == len(before[0])
    assert _graph(db, acc) == before


def test_a_bad_file_writes_nothing(db, filled, data_root, tmp_path):
    acc = filled.account_id
    path = tmp_path / "account.jsonl"
    _export(db, data_root, acc, path, with_vectors=False)
    delete_account(db, data_root, acc, active_account_id=None, purge_now=True, confirmed=True)
    lines = path.read_text().splitlines()
    node = json.loads(lines[2])
    cases = {
        "unknown label": dict(node, labels=["Spaceship"]),
        "bad property name": dict(node, properties={**node["properties"], "bad name": 1}),
        "nested value": dict(node, properties={**node["properties"], "x": {"a": 1}}),
    }
    for why, broken in cases.items():
        bad = tmp_path / "bad.jsonl"
        bad.write_text("\n".join([*lines[:2], json.dumps(broken), *lines[3:]]) + "\n")
        with pytest.raises(ValidationError, match="bad.jsonl line 3"):
            import_account(db, data_root, bad)
        assert count_graph(db, acc)["nodes"] == 0, why
    truncated = tmp_path / "short.jsonl"
    truncated.write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(ValidationError, match="the file is incomplete"):
        import_account(db, data_root, truncated)
    assert count_graph(db, acc)["nodes"] == 0 and not (data_root / "accounts" / acc).exists()


def test_the_commands_with_one_line_errors(db, filled, data_root, tmp_path):
    acc = filled.account_id
    env = child_env(data_root, ACCOUNT_ID=acc, MAXY_LOG_LEVEL="WARNING")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return maxy([*args], env, check=False)

    exported = run("export", "--with-vectors")
    assert exported.returncode == 0, exported.stderr
    (tmp_path / "a.jsonl").write_text(exported.stdout)
    assert json.loads(exported.stdout.splitlines()[0])["counts"]["nodes"] == count_graph(db, acc)["nodes"]

    refused = run("account", "delete", acc)
    assert refused.returncode != 0 and refused.stderr.count("\n") == 1 and "--force" in refused.stderr
    unknown = run("account", "delete", "not-an-id")
    assert unknown.returncode == 2 and unknown.stderr.count("\n") == 1
    assert unknown.stderr.startswith("error: NAME_OR_ID: not-an-id matches no account"), unknown.stderr
    deleted = run("account", "delete", acc, "--force", "--purge", "--yes", "--json")
    assert deleted.returncode == 0, deleted.stderr
    assert json.loads(deleted.stdout)["purged"] is True and count_graph(db, acc)["nodes"] == 0
    gone = run("export", "--account", acc)
    assert gone.returncode == 2 and gone.stdout == ""
    assert gone.stderr.startswith(f"error: --account: {acc}: no readable account under"), gone.stderr

    imported = run("import", str(tmp_path / "a.jsonl"), "--json")
    assert imported.returncode == 0, imported.stderr
    assert json.loads(imported.stdout)["vectors"] == "from-file"
    again = run("import", str(tmp_path / "a.jsonl"))
    assert again.returncode != 0 and again.stderr.count("\n") == 1 and "--replace" in again.stderr


def test_import_brings_back_a_soft_deleted_account(db, embedder, filled, data_root, tmp_path):
    acc = filled.account_id
    before = _graph(db, acc)
    search_before = _search(db, embedder, acc)
    path = tmp_path / "account.jsonl"
    _export(db, data_root, acc, path, with_vectors=True)
    delete_account(db, data_root, acc, active_account_id=None)
    assert not any(_search(db, embedder, acc))

    result = import_account(db, data_root, path)
    assert result.cleared == len(before[0]) and not account_files.deleted_folder(data_root, acc).exists()
    assert validate_account(data_root, acc).account_id == acc
    assert _graph(db, acc) == before  # the note forgotten before the export keeps its own deletedAt
    assert _search(db, embedder, acc) == search_before


_ints = st.integers(min_value=-(2**63), max_value=2**63 - 1)
_values = st.one_of(
    st.text(max_size=30),
    st.booleans(),
    _ints,
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.text(max_size=8), min_size=1, max_size=4),
    st.lists(_ints, min_size=1, max_size=4),
    st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=4),
)
_props = st.dictionaries(st.from_regex(r"[a-z][A-Za-z0-9_]{0,12}", fullmatch=True), _values, max_size=6)


@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=_props, second=_props, rel=_props)
def test_any_storable_properties_come_back_exactly(db, account, data_root, tmp_path, first, second, rel):
    """Whatever a node or relationship holds comes back with the same values and types."""
    acc = account.account_id
    db.write(
        """
        CREATE (a:Node:Note {nodeId: $acc + ':a', accountId: $acc}) SET a += $first
        CREATE (b:Node:Fact {nodeId: $acc + ':b', accountId: $acc}) SET b += $second
        CREATE (a)-[r:MENTIONS]->(b) SET r = $rel
        """,
        acc=acc,
        first={k: v for k, v in first.items() if k not in ("nodeId", "accountId")},
        second={k: v for k, v in second.items() if k not in ("nodeId", "accountId")},
        rel=rel,
    )
    before = _graph(db, acc)
    path = tmp_path / "props.jsonl"
    _export(db, data_root, acc, path, with_vectors=True)
    purge_account(db, acc)
    import_account(db, data_root, path, replace=True)
    after = _graph(db, acc)
    assert after == before
    for was, now in zip(before[0], after[0], strict=True):
        assert {k: type(v) for k, v in now["props"].items()} == {k: type(v) for k, v in was["props"].items()}
    purge_account(db, acc)


def test_an_import_larger_than_a_batch_writes_every_relationships_ends_first(
    db, embedder, filled, data_root, tmp_path, monkeypatch
):
    acc = filled.account_id
    path = tmp_path / "account.jsonl"
    _export(db, data_root, acc, path, with_vectors=True)
    before = _graph(db, acc)
    # a batch size that leaves some nodes pending when the first batch of relationships is full
    batch = next(b for b in (2, 3, 4, 5) if len(before[0]) % b)
    assert len(before[1]) >= batch
    delete_account(db, data_root, acc, active_account_id=None, purge_now=True, confirmed=True)
    monkeypatch.setattr(importing, "BATCH", batch)
    result = import_account(db, data_root, path)
    assert (result.nodes, result.relationships) == (len(before[0]), len(before[1]))
    assert _graph(db, acc) == before
