"""Tool calls per second through 1, 2 and 3 ``maxy serve`` replicas on one Neo4j, the 1-replica
figure being the baseline measured in the same run.

    .venv/bin/python benchmarks/replicas.py [--replicas 1 2 3] [--clients 12] [--calls 20]
        [--client-processes 2] [--logs DIR] [--json]

For each replica count the replicas are started afresh (real ``maxy serve`` processes sharing
one DATA_ROOT and the configured Neo4j; tests/replicas.py starts them, and its log-problem
check is reused), and ``--clients`` MCP clients (the SDK's streamable HTTP client, stateful
sessions) are spread over them in turn, client i on replica i mod N, as a round-robin load
balancer with sticky sessions would place them. The clients run as asyncio tasks in
``--client-processes`` processes. Once every session is open and has made one call of each
kind, all clients make ``--calls`` calls of a cheap read (memory-get of one stored fact by id,
no neighbours), then, after all are done, ``--calls`` writes (memory-write of a new Fact,
which embeds its text). Calls per second is the calls of a phase over its wall time, from the
moment every client may start to the moment the last one ends.

It reports every failed call or error answer, every traceback or error line in a replica's
log, and reads every acknowledged write back by id through memory-get. The account and its
graph are removed afterwards. Exit code 1 when anything failed or went missing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import sys
import tempfile
import threading
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.replicas: the replicas' harness

from concurrency import percentile, text_of  # the same figures as the one-server benchmark
from maxy.accounts import create_account, validate_account
from maxy.config import load_settings
from maxy.db import Database
from maxy.embeddings import get_embedder
from maxy.graph.schema import apply_schema
from maxy.graph.write import GraphWriter, NodeSpec
from maxy.serving.keys import create_api_key
from mcp import ClientSession

from tests.replicas import Replicas, mcp_session

KINDS = ("read", "write")
GET_BATCH = 50  # memory-get's most ids per call


# -- the clients -----------------------------------------------------------------------
class Client:
    def __init__(self, number: int, url: str, key: str, target: str, tag: str, out: dict[str, Any]):
        self.number, self.url, self.key, self.target, self.tag, self.out = number, url, key, target, tag, out

    async def call(self, session: ClientSession, kind: str, n: int) -> None:
        if kind == "read":
            tool, arguments = "memory-get", {"nodeIds": [self.target], "hops": 0}
        else:
            text = f"replica benchmark {self.tag}: client {self.number} measured the boiler pressure at step {n}"
            tool, arguments = "memory-write", {"labels": ["Fact"], "properties": {"text": text}}
        started = time.perf_counter()
        try:
            result = await session.call_tool(tool, arguments)
        except Exception as err:  # noqa: BLE001 - every failure is counted and printed
            self.out["errors"].append(f"client {self.number}: {tool} raised {type(err).__name__}: {err}"[:300])
            return
        if result.is_error:
            self.out["errors"].append(f"client {self.number}: {tool} answered an error: {text_of(result)}"[:300])
            return
        self.out["latencies"][kind].append((time.perf_counter() - started) * 1000)
        if kind == "write":
            self.out["written"].append(result.structured_content["nodeId"])

    async def phase(self, session: ClientSession, kind: str, calls: int) -> None:
        for n in range(calls):
            await self.call(session, kind, n)


async def run_clients(
    numbers: list[int], urls: list[str], key: str, target: str, tag: str, calls: int, barrier: Any
) -> dict[str, Any]:
    """The clients ``numbers`` of one process, client i on ``urls[i % len(urls)]``, each with a
    session of its own; each phase starts when every process has passed ``barrier`` (the main
    process too), which is broken if this process cannot go on."""
    out: dict[str, Any] = {"latencies": {k: [] for k in KINDS}, "errors": [], "written": []}
    clients = [Client(n, urls[n % len(urls)], key, target, tag, out) for n in numbers]
    try:
        async with AsyncExitStack() as stack:
            sessions = [await stack.enter_async_context(mcp_session(c.url, key)) for c in clients]
            for kind in KINDS:  # warm: the first call of each kind, not timed
                await asyncio.gather(*(c.call(s, kind, -1) for c, s in zip(clients, sessions, strict=True)))
            out["latencies"] = {k: [] for k in KINDS}
            for kind in KINDS:
                await asyncio.to_thread(barrier.wait, 600)
                await asyncio.gather(*(c.phase(s, kind, calls) for c, s in zip(clients, sessions, strict=True)))
            await asyncio.to_thread(barrier.wait, 600)
    except Exception as err:  # noqa: BLE001 - reported; the other processes stop waiting
        barrier.abort()
        out["errors"].append(f"clients {numbers}: {type(err).__name__}: {err}"[:300])
    return out


def client_process(
    numbers: list[int], urls: list[str], key: str, target: str, tag: str, calls: int, barrier: Any, results: Any
) -> None:
    """One client process (spawned): its share of the clients; what they measured goes on ``results``."""
    results.put(asyncio.run(run_clients(numbers, urls, key, target, tag, calls, barrier)))


def measure(urls: list[str], key: str, target: str, args: argparse.Namespace) -> dict[str, Any]:
    """Every client's calls through ``urls``: per phase, calls per second and latency."""
    ctx = multiprocessing.get_context("spawn")
    processes = max(1, min(args.client_processes, args.clients))
    barrier = ctx.Barrier(processes + 1)
    results = ctx.Queue()
    tag = f"{len(urls)} replicas"
    children = [
        ctx.Process(
            target=client_process,
            args=(list(range(i, args.clients, processes)), urls, key, target, tag, args.calls, barrier, results),
        )
        for i in range(processes)
    ]
    for child in children:
        child.start()
    marks = []
    try:
        for _ in range(len(KINDS) + 1):  # each phase's start, and the end of the last one
            barrier.wait(600)
            marks.append(time.perf_counter())
    except threading.BrokenBarrierError:
        marks += [float("nan")] * (len(KINDS) + 1 - len(marks))  # a process gave up: its error says why
    parts = [results.get(timeout=600) for _ in children]
    for child in children:
        child.join()
    errors = [e for p in parts for e in p["errors"]]
    errors += [f"client process {c.pid} exited {c.exitcode}" for c in children if c.exitcode != 0]
    run: dict[str, Any] = {"replicas": len(urls), "errors": errors, "written": [w for p in parts for w in p["written"]]}
    for i, kind in enumerate(KINDS):
        values = [v for p in parts for v in p["latencies"][kind]]
        seconds = marks[i + 1] - marks[i]
        run[kind] = {
            "calls": len(values),
            "seconds": round(seconds, 2),
            "callsPerS": round(len(values) / seconds, 2),
            "p50": round(percentile(values, 50), 1),
            "p95": round(percentile(values, 95), 1),
        }
    return run


async def read_back(url: str, key: str, ids: list[str]) -> list[str]:
    """The ids memory-get did not return."""
    missing: list[str] = []
    async with mcp_session(url, key) as session:
        for i in range(0, len(ids), GET_BATCH):
            batch = ids[i : i + GET_BATCH]
            result = await session.call_tool("memory-get", {"nodeIds": batch, "hops": 0})
            found = set() if result.is_error else {n["nodeId"] for n in result.structured_content["nodes"]}
            missing.extend(x for x in batch if x not in found)
    return missing


# -- the report ------------------------------------------------------------------------
def print_table(report: dict[str, Any]) -> None:
    print(
        f"{report['cores']} cores, load before {report['loadBefore']}, after {report['loadAfter']}; "
        f"{report['clients']} clients in {report['clientProcesses']} processes, {report['calls']} calls "
        "of each kind per client"
    )
    print(
        f"{'replicas':>8} {'reads/s':>9} {'x 1':>6} {'read p50/p95 ms':>16} "
        f"{'writes/s':>9} {'x 1':>6} {'write p50/p95 ms':>17} {'errors':>7}"
    )
    base = report["runs"][0]
    for run in report["runs"]:
        r, w = run["read"], run["write"]
        print(
            f"{run['replicas']:>8} {r['callsPerS']:>9.1f} {r['callsPerS'] / base['read']['callsPerS']:>6.2f} "
            f"{r['p50']:>7.0f} / {r['p95']:<6.0f} {w['callsPerS']:>9.1f} {w['callsPerS'] / base['write']['callsPerS']:>6.2f} "
            f"{w['p50']:>8.0f} / {w['p95']:<6.0f} {len(run['errors']):>7}"
        )
    rb = report["readBack"]
    print(f"read back: {rb['found']} / {rb['acknowledged']} acknowledged writes found by memory-get")
    for line in report["errors"]:
        print(f"  {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--replicas", type=int, nargs="+", default=[1, 2, 3], help="replica counts, the first the baseline"
    )
    parser.add_argument("--clients", type=int, default=12)
    parser.add_argument("--calls", type=int, default=20, help="calls of each kind per client")
    parser.add_argument("--client-processes", type=int, default=2, help="processes the clients are spread over")
    parser.add_argument("--logs", type=Path, help="keep the replicas' logs in this folder")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    for name in ("clients", "calls", "client_processes"):
        if getattr(args, name) < 1:
            raise SystemExit(f"error: --{name.replace('_', '-')}: must be at least 1; give a positive whole number")
    if min(args.replicas) < 1:
        raise SystemExit("error: --replicas: each count must be at least 1; e.g. --replicas 1 2 3")

    settings = load_settings()
    embedder = get_embedder(settings)
    with tempfile.TemporaryDirectory(prefix="maxy-replicas-") as tmp, Database(settings) as db:
        apply_schema(db, embedder.dimensions, embedder=embedder)
        data_root = Path(tmp) / "data"
        data_root.mkdir()
        account = validate_account(data_root, create_account(data_root, "replicas-benchmark").account_id)
        key, _ = create_api_key(data_root, account.account_id, role="admin")
        target = GraphWriter(db, account, embedder, created_by="benchmark").write(
            NodeSpec(["Fact"], {"text": "the boiler's pressure is checked every morning"})
        )
        runs, errors, written, missing = [], [], [], []
        load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
        try:
            for count in args.replicas:
                logs = args.logs / f"{count}-replicas" if args.logs else Path(tmp) / f"logs-{count}"
                fleet = Replicas(data_root, logs, count)
                try:
                    fleet.start()
                except RuntimeError as err:  # one did not start: its own output says why
                    fleet.stop()
                    raise SystemExit(f"error: --replicas {count}: {err}") from None
                try:
                    run = measure(fleet.urls, key, target.node_id, args)
                    written += run.pop("written")
                    run["errors"] += [f"replica {i}: {line}"[:300] for i in range(count) for line in fleet.problems(i)]
                    if count == args.replicas[-1]:
                        missing = asyncio.run(read_back(fleet.urls[0], key, written))
                finally:
                    fleet.stop()
                runs.append(run)
                errors += run["errors"]
            load_after = " ".join(f"{x:.2f}" for x in os.getloadavg())
        finally:
            db.autocommit(
                "MATCH (n:Node {accountId: $acc}) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 2000 ROWS",
                acc=account.account_id,
            )
    errors += [f"acknowledged write not found by memory-get: {x}" for x in missing]
    report = {
        "cores": os.cpu_count(),
        "clients": args.clients,
        "clientProcesses": max(1, min(args.client_processes, args.clients)),
        "calls": args.calls,
        "loadBefore": load_before,
        "loadAfter": load_after,
        "runs": runs,
        "readBack": {"acknowledged": len(written), "found": len(written) - len(missing)},
        "errors": errors,
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_table(report)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
