"""A tiny stand-in for PyPI's mcp-neo4j-cypher, run as the graph proxy's upstream: the same
tool names and arguments, run against the real Neo4j.

It reads the upstream's variables (NEO4J_URI, NEO4J_USERNAME, NEO4J_PASSWORD, NEO4J_DATABASE);
a FIXTURE_-prefixed one wins, so a test can send the proxy's probe somewhere else than the
upstream. Like some Cypher servers (not mcp-neo4j-cypher), the read tool runs each
``;``-separated statement in turn, which gives the probe a query Neo4j refuses to plan.
"""

from __future__ import annotations

import json
import os
from typing import Any

from mcp.server.mcpserver import MCPServer
from neo4j import GraphDatabase, RoutingControl


def _env(name: str, default: str | None = None) -> str | None:
    return os.environ.get(f"FIXTURE_{name}") or os.environ.get(name) or default


driver = GraphDatabase.driver(
    _env("NEO4J_URI", "bolt://127.0.0.1:7687"),
    auth=(_env("NEO4J_USERNAME", "neo4j"), _env("NEO4J_PASSWORD", "")),
    notifications_min_severity="OFF",  # as an upstream that drops them: the proxy's probe finds them
)
database = _env("NEO4J_DATABASE")
COUNTERS = ("nodes_created", "nodes_deleted", "properties_set", "labels_added")
server = MCPServer("cypher-upstream")


def _run(query: str, params: dict[str, Any] | None, routing: RoutingControl) -> Any:
    return driver.execute_query(query, params or {}, routing_=routing, database_=database)


@server.tool(name="read_neo4j_cypher", description="Execute a read Cypher query.")
def read_neo4j_cypher(query: str, params: dict[str, Any] | None = None) -> str:
    rows: list[dict[str, Any]] = []
    for statement in filter(str.strip, query.split(";")):
        records, _, _ = _run(statement, params, RoutingControl.READ)
        rows.extend(r.data() for r in records)
    return json.dumps(rows, default=str)


@server.tool(name="write_neo4j_cypher", description="Execute a write Cypher query.")
def write_neo4j_cypher(query: str, params: dict[str, Any] | None = None) -> str:
    _, summary, _ = _run(query, params, RoutingControl.WRITE)
    counters = summary.counters
    return json.dumps({name: getattr(counters, name) for name in COUNTERS})


@server.tool(name="get_neo4j_schema", description="Labels in the graph's schema.")
def get_neo4j_schema() -> str:
    # the labels the indexes name: the same from one call to the next while other tests write
    query = "SHOW INDEXES YIELD labelsOrTypes, entityType WHERE entityType = 'NODE' RETURN labelsOrTypes"
    records, _, _ = _run(query, None, RoutingControl.READ)
    return json.dumps(sorted({label for r in records for label in r["labelsOrTypes"] or ()}))


if __name__ == "__main__":
    server.run()
