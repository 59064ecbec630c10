"""NEO4J_URI naming a server we do not manage: nothing is launched, routing URIs work,
reads are routed as reads and writes as writes."""

from __future__ import annotations

import neo4j
import pytest
from maxy.config import load_settings
from maxy.db import Database
from maxy.errors import DatabaseUnavailable
from maxy.graph.guards import Caller
from maxy.graph.write import GraphWriter, NodeSpec
from maxy.search import SearchRequest, hybrid


def _routing_settings(settings, **extra):
    host, port = settings.neo4j_host_port
    return load_settings(NEO4J_URI=f"neo4j://{host}:{port}", NEO4J_MANAGED="false", **extra)


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


def test_unreachable_external_server_is_a_clear_error(neo4j_ready):
    settings = load_settings(NEO4J_URI="neo4j://127.0.0.1:1", NEO4J_MANAGED="false")
    with Database(settings) as db, pytest.raises(DatabaseUnavailable) as exc:
        db.read("RETURN 1")
    assert "NEO4J_URI" in str(exc.value) and "127.0.0.1:1" in str(exc.value)
