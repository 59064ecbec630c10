"""The account data operations without a database: the export format's values and checks, a
deleted account's folder, and the neo4j-admin commands backup and restore run."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from maxy.accounts import create_account, list_accounts
from maxy.dataops import account_files, jsonl
from maxy.dataops.backup import admin_command, dump_args, load_args
from maxy.dataops.importing import check_file
from maxy.errors import ValidationError
from maxy.neo4j.java import JavaInfo
from maxy.neo4j.runtime import Neo4jRuntime

ACC = "3f0c2a52-5f0e-4b7c-9d36-0a4f7f3e1c11"

scalars = st.one_of(
    st.text(max_size=20),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False),
)
values = st.one_of(
    scalars,
    st.lists(st.text(max_size=5), max_size=4),
    st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), max_size=4),
    st.lists(st.floats(allow_nan=False, width=64), max_size=384),
    st.lists(st.booleans(), max_size=4),
)
names = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,20}", fullmatch=True)


@given(st.dictionaries(names, values, max_size=8))
def test_every_storable_value_survives_a_json_line_with_its_type(props):
    jsonl.check_properties(props, "node")
    back = json.loads(json.dumps(props, separators=(",", ":")))
    assert back == props
    for key, value in props.items():
        assert type(back[key]) is type(value)
        if isinstance(value, list):
            assert [type(v) for v in back[key]] == [type(v) for v in value]


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ({"a": 1}, "cannot be exported"),
        ([1, "a"], "one type"),
        ([None], "only strings"),
        ([[1]], "only strings"),
        (math.nan, "NaN"),
    ],
)
def test_unstorable_values_are_named(value, reason):
    with pytest.raises(ValidationError, match=reason) as err:
        jsonl.check_value(value, "node n1.properties.x")
    assert err.value.field == "node n1.properties.x"


def _file(tmp_path: Path, lines: list[dict], counts: dict | None = None) -> Path:
    nodes = sum(1 for line in lines if line.get("kind") == "node")
    rels = sum(1 for line in lines if line.get("kind") == "relationship")
    header = {
        "kind": "header",
        "format": jsonl.FORMAT,
        "version": jsonl.VERSION,
        "accountId": ACC,
        "counts": counts or {"nodes": nodes, "relationships": rels},
    }
    account = {"kind": "account", "accountId": ACC, "name": "shop", "createdAt": "2026-01-01T00:00:00+00:00"}
    path = tmp_path / "export.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [header, account, *lines]))
    return path


def _node(node_id: str, labels: list[str] | None = None, **props) -> dict:
    return {
        "kind": "node",
        "nodeId": node_id,
        "labels": labels or ["Person"],
        "properties": {"nodeId": node_id, "accountId": ACC, **props},
    }


def test_a_good_file_is_counted(tmp_path):
    rel = {"kind": "relationship", "start": "a", "type": "KNOWS", "end": "b", "properties": {"since": 2020}}
    plan = check_file(_file(tmp_path, [_node("a", embedding=[0.1, 0.2]), _node("b"), rel]))
    assert (plan.account_id, plan.nodes, plan.relationships, plan.vectors) == (ACC, 2, 1, 1)


@pytest.mark.parametrize(
    ("lines", "where", "reason"),
    [
        ([_node("a", ["Spaceship"])], "line 3.labels", "unknown label"),
        ([_node("a", **{"bad-name": 1})], "line 3.properties", "invalid property name"),
        ([_node("a"), _node("a")], "line 4.nodeId", "appears twice"),
        ([{**_node("a"), "properties": {"nodeId": "a", "accountId": "other"}}], "line 3.properties", "must match"),
        ([_node("a"), {"kind": "relationship", "start": "a", "type": "LOVES", "end": "a"}], "line 4.type", "unknown"),
        ([_node("a"), {"kind": "relationship", "start": "a", "type": "KNOWS", "end": "z"}], "line 4.end", "not a node"),
        ([{"kind": "relationship", "start": "a", "type": "KNOWS", "end": "a"}, _node("a")], "line 3.start", "not a"),
        ([{"kind": "edge"}], "line 3.kind", "expected node or relationship"),
    ],
)
def test_a_bad_line_is_named(tmp_path, lines, where, reason):
    with pytest.raises(ValidationError, match=reason) as err:
        check_file(_file(tmp_path, lines))
    assert err.value.field == f"export.jsonl {where}"


def test_a_truncated_or_foreign_file_is_refused(tmp_path):
    with pytest.raises(ValidationError, match="the file is incomplete"):
        check_file(_file(tmp_path, [_node("a")], counts={"nodes": 2, "relationships": 0}))
    other = tmp_path / "notes.txt"
    other.write_text("hello\n")
    with pytest.raises(ValidationError, match="is this a `maxy export` file"):
        check_file(other)
    newer = _file(tmp_path, [])
    newer.write_text(newer.read_text().replace('"version": 1', '"version": 9'))
    with pytest.raises(ValidationError, match="this maxy reads version 1"):
        check_file(newer)


def test_a_deleted_account_folder_is_no_account_until_removed(tmp_path):
    data_root = tmp_path / "data"
    create_account(data_root, "shop", ACC)
    account_files.mark_deleted(data_root, ACC, "2026-01-01T00:00:00+00:00")
    assert list_accounts(data_root) == []
    assert account_files.deleted_accounts(data_root) == {ACC: "2026-01-01T00:00:00+00:00"}
    assert account_files.remove_deleted(data_root, ACC) and account_files.deleted_accounts(data_root) == {}
    with pytest.raises(ValidationError, match="not an account id"):
        account_files.canonical_id("../etc")


def test_dump_and_load_run_neo4j_admin_from_the_server_jars(tmp_path):
    java = JavaInfo(Path("/jdk/bin/java"), 25, "test")
    runtime = Neo4jRuntime(tmp_path / "home", 7999, "password", java=java)
    lib = Path("/cache/neo4j/lib")
    prefix = [
        "/jdk/bin/java",
        "--sun-misc-unsafe-memory-access=allow",
        "--enable-native-access=ALL-UNNAMED",
        "-cp",
        "/cache/neo4j/lib/*",
        "org.neo4j.cli.AdminTool",
    ]
    assert admin_command(runtime, lib, *dump_args("neo4j", Path("/out"))) == [
        *prefix,
        "database",
        "dump",
        "--to-path=/out",
        "--overwrite-destination=true",
        "neo4j",
    ]
    assert admin_command(runtime, lib, *load_args("neo4j")) == [
        *prefix,
        "database",
        "load",
        "--from-stdin",
        "--overwrite-destination=true",
        "neo4j",
    ]
    assert load_args("neo4j", info=True) == ["database", "load", "--info", "--from-stdin", "neo4j"]
