"""Graph proxy overhead: what ``maxy mcp proxy`` adds to a read tool call, now that each read is
followed by an EXPLAIN probe for Neo4j's "does not exist" warnings.

    .venv/bin/python benchmarks/graph_proxy.py [--calls 100] [--json]

The upstream is the small stdio MCP server the tests use (``tests/plugins_fixture/cypher_upstream.py``:
the read, write and schema tools of mcp-neo4j-cypher, each read run against the Neo4j of Maxy's
settings, whose variables it is given as a client config would give them). Two queries, a clean one and one naming a property that does not exist (so the
probe finds a warning and the proxy stitches the block in). For each, the same number of
``tools/call read_neo4j_cypher`` round trips, one at a time over stdio, in the same run:

* direct: the client talks to the upstream itself (the baseline);
* proxied: the client talks to ``maxy mcp proxy -- <upstream>``, which relays, probes and rewrites.

The first three calls of each run warm the connections and are not counted. Printed: p50 and p95
in milliseconds per call, and the added p50.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
UPSTREAM = [sys.executable, str(REPO / "tests" / "plugins_fixture" / "cypher_upstream.py")]
PROXY = [sys.executable, "-m", "maxy", "mcp", "proxy", "--"]
QUERIES = {
    "clean": "MATCH (n:Node) RETURN count(n) AS n",
    "warning": "MATCH (n:Node) WHERE n.benchmarkMissingProperty = 1 RETURN n LIMIT 1",
}
WARMUP = 3


def _round_trips(command: list[str], query: str, calls: int) -> tuple[list[float], dict[str, Any]]:
    import time

    env = {
        **os.environ,
        **_upstream_env(),
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=REPO
    )
    assert proc.stdin is not None and proc.stdout is not None

    def ask(message: dict[str, Any]) -> dict[str, Any] | None:
        proc.stdin.write((json.dumps(message) + "\n").encode())  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
        if "id" not in message:
            return None
        line = proc.stdout.readline()  # type: ignore[union-attr]
        if not line:
            raise SystemExit(f"{command[-1]} closed its output: is Neo4j running (`maxy neo4j start`)?")
        return json.loads(line)

    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
    ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello})
    ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
    took = []
    for i in range(calls + WARMUP):
        started = time.perf_counter()
        answer = ask(
            {
                "jsonrpc": "2.0",
                "id": i + 1,
                "method": "tools/call",
                "params": {"name": "read_neo4j_cypher", "arguments": {"query": query}},
            }
        )
        took.append((time.perf_counter() - started) * 1000)
        if answer is None or "error" in answer or answer.get("result", {}).get("isError"):
            raise SystemExit(f"the read failed: {json.dumps(answer)[:300]}")
    proc.stdin.close()
    proc.wait(timeout=30)
    assert answer is not None
    return took[WARMUP:], answer


def _upstream_env() -> dict[str, str]:
    """The upstream's Neo4j variables, as a client config would give them: Maxy's own settings."""
    from maxy.config import load_settings

    settings = load_settings()
    env = {"NEO4J_URI": settings.NEO4J_URI, "NEO4J_USERNAME": settings.NEO4J_USER}
    if settings.NEO4J_PASSWORD:
        env["NEO4J_PASSWORD"] = settings.NEO4J_PASSWORD
    if settings.NEO4J_DATABASE:
        env["NEO4J_DATABASE"] = settings.NEO4J_DATABASE
    return env


def _summary(took: list[float]) -> dict[str, float]:
    ordered = sorted(took)
    return {
        "p50": round(statistics.median(ordered), 1),
        "p95": round(ordered[max(0, int(0.95 * len(ordered)) - 1)], 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=100, help="Counted calls per query and path (default 100).")
    parser.add_argument("--json", action="store_true", help="One JSON object instead of the table.")
    args = parser.parse_args(argv)
    if not 1 <= args.calls <= 10_000:
        parser.error("--calls: a whole number from 1 to 10000")
    figures: dict[str, Any] = {}
    for name, query in QUERIES.items():
        direct_took, _ = _round_trips(UPSTREAM, query, args.calls)
        proxied_took, last = _round_trips([*PROXY, *UPSTREAM], query, args.calls)
        first_block = last["result"]["content"][0].get("text", "")
        if ("01N52" in first_block) != (name == "warning"):  # the probe really ran (or really found nothing)
            raise SystemExit(f"unexpected first block for the {name} query: {first_block[:200]!r}")
        direct, proxied = _summary(direct_took), _summary(proxied_took)
        figures[name] = {"direct": direct, "proxied": proxied, "addedP50": round(proxied["p50"] - direct["p50"], 1)}
    if args.json:
        print(json.dumps({"calls": args.calls, "queries": figures}))
        return 0
    print(f"read_neo4j_cypher, {args.calls} calls per row, ms per call")
    print("query    direct p50 / p95    proxied p50 / p95    added p50")
    for name, row in figures.items():
        d, p = row["direct"], row["proxied"]
        print(
            f"{name:<8} {d['p50']:>6.1f} / {d['p95']:<8.1f}   {p['p50']:>6.1f} / {p['p95']:<8.1f}   {row['addedP50']:>6.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
