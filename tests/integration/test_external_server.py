"""NEO4J_URI naming a server we do not manage: nothing is launched, routing URIs work,
reads are routed as reads and writes as writes.

The local Community server answers a ``neo4j://`` URI as its own router: one member that is
router, reader and writer at once. That is as close to a cluster or Aura as this machine gets:
these tests prove what the driver sends (each transaction's access mode and bookmarks, read from
the Bolt messages it logs), not how a real cluster spreads the load."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

import neo4j
import pytest
from maxy.config import load_settings
from maxy.db import Database
from maxy.errors import DatabaseUnavailable
from maxy.graph.guards import Caller
from maxy.graph.write import GraphWriter, NodeSpec
from maxy.memory.neighbourhood import get_nodes
from maxy.search import SearchRequest, hybrid


def _routing_settings(settings, **extra):
    host, port = settings.neo4j_host_port
    return load_settings(NEO4J_URI=f"neo4j://{host}:{port}", NEO4J_MANAGED="false", **extra)


class _BoltLog(logging.Handler):
    """The BEGIN and RUN messages the driver sends, as its ``neo4j.io`` debug log writes them
    (``[#0A1B]  C: BEGIN {'mode': 'r', 'db': 'neo4j', ...}``), and the bookmarks the server
    answers a commit with (``S: SUCCESS {'bookmark': 'FB:...'}``)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.sent: list[str] = []
        self.bookmarks: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "C: BEGIN" in message or "C: RUN" in message:
            self.sent.append(message.split("C: ", 1)[1])
        elif "S: SUCCESS" in message and "'bookmark': '" in message:
            self.bookmarks.append(message.split("'bookmark': '", 1)[1].split("'", 1)[0])


@contextmanager
def _bolt_log() -> Iterator[_BoltLog]:
    logger = logging.getLogger("neo4j.io")
    handler, level = _BoltLog(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _modes(sent: list[str]) -> set[str]:
    """The access mode of each transaction: a BEGIN (or an auto-commit RUN) carries
    ``'mode': 'r'`` for a read; a write carries no mode."""
    opened = [m for m in sent if m.startswith("BEGIN")] or [m for m in sent if m.startswith("RUN")]
    return {"read" if "'mode': 'r'" in m else "write" for m in opened}


def test_routing_uri_reads_and_writes_without_launching_anything(neo4j_ready, account, embedder):
    settings = _routing_settings(neo4j_ready)
    assert not settings.neo4j_is_managed
    from maxy.neo4j.runtime import ensure_running

    status = ensure_running(settings)
    assert status["managed"] is False and status["bolt_reachable"] is True
    with Database(settings) as db:
        written = GraphWriter(db, account, embedder).write(NodeSpec(["Note"], {"name": "routed write"}))
        hits = hybrid(db, Caller(account.account_id), SearchRequest("routed write"), embedder).hits
        assert written.node_id in {h.node_id for h in hits}
        # A write sent as a read is refused by the server: proof the routing flag is honoured.
        with pytest.raises(neo4j.exceptions.Neo4jError):
            db.read("CREATE (:Node {nodeId: 'should-not-exist'})")
        db.write("MATCH (n:Node {nodeId: $id}) DETACH DELETE n", id=written.node_id)


def test_each_path_asks_for_its_access_mode_and_reads_follow_writes(neo4j_ready, account, embedder):
    with Database(_routing_settings(neo4j_ready)) as db:
        assert isinstance(db.driver, neo4j.Neo4jDriver)  # the routing driver, not a direct connection
        caller = Caller(account.account_id)
        with _bolt_log() as log:
            written = GraphWriter(db, account, embedder).write(NodeSpec(["Note"], {"name": "routed guarded read"}))
        assert "write" in _modes(log.sent)  # its look-ups (name resolution) go out as reads
        committed = log.bookmarks[-1]
        # The read right after a managed write transaction carries that write's bookmark, so a
        # cluster member that answers it waits until it has the write.
        with _bolt_log() as log:
            found = get_nodes(db, caller, [written.node_id], hops=1)
        assert [n["nodeId"] for n in found["nodes"]] == [written.node_id]
        assert _modes(log.sent) == {"read"}
        assert committed in log.sent[0]
        with _bolt_log() as log:
            hits = hybrid(db, caller, SearchRequest("routed guarded read"), embedder).hits
        assert written.node_id in {h.node_id for h in hits}
        assert _modes(log.sent) == {"read"}
        with _bolt_log() as log:
            db.read("RETURN 1 AS ok")
        assert _modes(log.sent) == {"read"}
        with _bolt_log() as log:
            db.write("MATCH (n:Node {nodeId: $id}) SET n.touched = true", id=written.node_id)
        assert _modes(log.sent) == {"write"}
        with _bolt_log() as log:
            db.write_tx(
                lambda tx: tx.run("MATCH (n:Node {nodeId: $id}) SET n.touched = false", id=written.node_id).consume()
            )
        assert _modes(log.sent) == {"write"}
        with _bolt_log() as log:
            db.autocommit(
                "MATCH (n:Node {nodeId: $id}) CALL (n) { SET n.touched = true } IN TRANSACTIONS OF 10 ROWS",
                id=written.node_id,
            )
        assert _modes(log.sent) == {"write"} and not any(m.startswith("BEGIN") for m in log.sent)
        committed = log.bookmarks[-1]
        with _bolt_log() as log:
            assert db.read("MATCH (n:Node {nodeId: $id}) RETURN n.touched AS t", id=written.node_id) == [{"t": True}]
        assert committed in log.sent[0]  # the auto-commit batch's bookmark, too


def test_a_local_routing_uri_is_still_the_managed_server(neo4j_ready):
    """``neo4j://127.0.0.1:<port>`` with NEO4J_MANAGED=auto is the local server Maxy runs."""
    host, port = neo4j_ready.neo4j_host_port
    settings = load_settings(NEO4J_URI=f"neo4j://{host}:{port}", NEO4J_MANAGED="auto")
    assert settings.neo4j_is_managed
    from maxy.neo4j.runtime import Neo4jRuntime, ensure_running

    assert ensure_running(settings)["bolt_reachable"] is True  # already running: nothing relaunched
    assert Neo4jRuntime.from_settings(settings).uri == f"bolt://{host}:{port}"
    with Database(settings) as db:
        assert db.read("RETURN 1 AS ok") == [{"ok": 1}]


def test_unreachable_external_server_is_a_clear_error(neo4j_ready):
    settings = load_settings(NEO4J_URI="neo4j://127.0.0.1:1", NEO4J_MANAGED="false")
    with Database(settings) as db, pytest.raises(DatabaseUnavailable) as exc:
        db.read("RETURN 1")
    assert "NEO4J_URI" in str(exc.value) and "127.0.0.1:1" in str(exc.value)
