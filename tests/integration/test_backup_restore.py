"""``maxy backup`` / ``maxy restore`` on a managed server of the test's own (its own config
folder, home and port, never the shared server on 7687), through the command line."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import neo4j
import pytest

from tests.cli_inprocess import maxy
from tests.integration.test_neo4j_runtime import free_port
from tests.plugins_fixture.helpers import PLATFORM, REPO

pytestmark = pytest.mark.slow  # neo4j-admin (a JVM) dumps and loads the database

PASSWORD = "backup-test-" + os.urandom(6).hex()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("backup")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "MAXY_", "ACCOUNT_ID"))}
    env.update(
        MAXY_CONFIG_DIR=str(root / "cfg"),
        DATA_ROOT=str(root / "data"),
        NEO4J_URI=f"bolt://127.0.0.1:{port}",
        NEO4J_PASSWORD=PASSWORD,
        NEO4J_HEAP="256m",
        NEO4J_PAGECACHE="64m",
        MAXY_LOG_LEVEL="WARNING",
        PYTHONPATH=os.pathsep.join([str(PLATFORM), str(REPO)]),
    )

    def run(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return maxy([*args], {**env, **extra}, check=False)

    started = run("neo4j", "start")
    assert started.returncode == 0, started.stderr
    try:
        yield run, f"bolt://127.0.0.1:{port}", root
    finally:
        run("neo4j", "stop")


def _query(uri: str, query: str) -> list[dict]:
    with neo4j.GraphDatabase.driver(uri, auth=("neo4j", PASSWORD)) as driver:
        records, _, _ = driver.execute_query(query)
        return [r.data() for r in records]


def _ids(uri: str) -> list[str]:
    return [r["id"] for r in _query(uri, "MATCH (n:Node) RETURN n.nodeId AS id ORDER BY id")]


def test_backup_then_restore_brings_the_database_back(server):
    run, uri, root = server
    assert not uri.endswith(":7687")
    _query(uri, "UNWIND range(1, 40) AS i CREATE (:Node {nodeId: 'n' + i, accountId: 'a'})")
    _query(uri, "MATCH (a:Node {nodeId: 'n1'}), (b:Node {nodeId: 'n2'}) CREATE (a)-[:KNOWS {since: 2020}]->(b)")
    original = _ids(uri)

    backed = run("backup", "--out", str(root / "backups"), "--json")
    assert backed.returncode == 0, backed.stderr
    info = json.loads(backed.stdout)
    dump = Path(info["file"])
    assert dump.is_file() and dump.stat().st_size == info["bytes"] > 0
    assert info["counts"] == {"nodes": 40, "relationships": 1} and info["restarted"] is True
    assert json.loads(Path(f"{dump}.json").read_text())["counts"] == info["counts"]
    assert _ids(uri) == original  # the server answers again, unchanged

    _query(uri, "MATCH (n:Node) WHERE n.nodeId IN ['n1', 'n3'] DETACH DELETE n")
    _query(uri, "CREATE (:Node {nodeId: 'later', accountId: 'a'})")

    unconfirmed = run("restore", str(dump))
    assert unconfirmed.returncode != 0 and unconfirmed.stderr.count("\n") == 1 and "--yes" in unconfirmed.stderr
    garbage = root / "garbage.dump"
    garbage.write_bytes(b"not a dump at all")
    refused = run("restore", str(garbage), "--yes")
    assert refused.returncode != 0 and refused.stderr.count("\n") == 1 and "neo4j-admin" in refused.stderr
    assert "later" in _ids(uri)  # a bad archive is refused before the server is stopped

    restored = run("restore", str(dump), "--yes", "--json")
    assert restored.returncode == 0, restored.stderr
    result = json.loads(restored.stdout)
    assert result["counts"] == result["expected"] == {"nodes": 40, "relationships": 1}
    assert _ids(uri) == original
    assert _query(uri, "MATCH ()-[r:KNOWS]->() RETURN r.since AS since") == [{"since": 2020}]


def test_an_external_server_is_refused_with_what_to_use_instead(server):
    run, _, root = server
    for command in (["backup"], ["restore", str(root / "x.dump"), "--yes"]):
        refused = run(*command, NEO4J_MANAGED="false")
        assert refused.returncode != 0 and refused.stderr.count("\n") == 1, refused.stderr
        assert "maxy export" in refused.stderr and "NEO4J_MANAGED=false" in refused.stderr
