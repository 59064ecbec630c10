"""Many agents and ingest jobs on one account at once: the real ``maxy serve`` (a subprocess),
N concurrent MCP clients over streamable HTTP doing a mix of memory-search and memory-write,
and M concurrent ``maxy ingest`` processes into the same account, against one client alone
doing the same mix in the same run (the baseline).

    .venv/bin/python benchmarks/concurrency.py --dir path/to/scifact [--clients 32]
        [--client-processes 4] [--calls 20] [--alone-calls 60] [--tenants 1000] [--ingest 8]
        [--docs 3] [--write-share 0.3] [--server-log FILE] [--json]

The server holds ``--tenants`` other accounts, each with an API key, beside the one measured.
The clients are spread over ``--client-processes`` processes (asyncio tasks in each), as
separate agents would be. Each opens its own MCP session with an admin API key of a throwaway
account; once every session is open, all of them (and the ingest processes) start together,
and each client makes ``--calls`` tool calls: a memory-search (a SciFact claim, or the text of
a fact it wrote earlier) or, with probability ``--write-share``, a memory-write (a Fact, or a
Person linked by WORKS_FOR to one of four shared Organizations, so writers meet on the same
nodes; three Persons in ten take one of six names every client uses, so writers create the
same entity at once). Each ingest process gets its own ``--docs`` markdown files made from
SciFact abstracts. The baseline is one client alone making ``--alone-calls`` calls of the same
mix, before the rest.

It reports every error (a failed call, an ``isError`` answer, an ingest that failed, a server
log line at WARNING or above), reads every acknowledged write back by id through memory-get
(each written node, each ingested document), counts the shared names that became more than one
Person, the transient errors the server retried and the writers that found their new entity
made meanwhile, and prints p50/p95 per operation and throughput, concurrent and alone. The
accounts, their graphs and files are removed afterwards. Exit code 1 when anything failed or
went missing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
from maxy.accounts import create_account, validate_account
from maxy.config import load_settings
from maxy.db import Database
from maxy.embeddings import get_embedder, without_cache
from maxy.graph.schema import apply_schema
from maxy.graph.write import GraphWriter, NodeSpec
from maxy.serving.keys import ApiKeyStore, create_api_key
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

ORGANIZATIONS = ("Northwind Labs", "Globex Research", "Initech Biology", "Umbrella Clinical")
SHARED_NAMES = 6  # Person names many clients write: each must end up as one node
SHARED_NAME_SHARE = 0.3
GET_BATCH = 50  # memory-get's most ids per call
# a Person written with no Task or Conversation behind it is stored, with this warning
EXPECTED_WARNING = "reason=missing-provenance"
SERVER_LOG_PROBLEM = re.compile(r" (warn|error|tool-crash|not-persisted)\b|Traceback|Exception", re.IGNORECASE)


@dataclass
class Run:
    """What one phase (alone, or concurrent) measured."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: {"search": [], "write": []})
    errors: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)  # nodeIds of acknowledged writes
    seconds: float = 0.0


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))  # nearest rank
    return ordered[rank]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def maxy_command() -> list[str]:
    script = Path(sys.executable).with_name("maxy")
    return [str(script)] if script.exists() else [sys.executable, "-m", "maxy"]


def read_jsonl(path: Path, limit: int) -> list[dict[str, Any]]:
    rows = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                rows.append(json.loads(line))
            if len(rows) >= limit:
                break
    return rows


def text_of(result: Any) -> str:
    return "\n".join(getattr(b, "text", "") for b in result.content)


# -- the clients -----------------------------------------------------------------------
class Client:
    """One agent: its own HTTP connection and MCP session, a seeded random mix of calls."""

    def __init__(self, number: int, url: str, key: str, claims: list[str], run: Run, args: argparse.Namespace):
        self.number = number
        self.url = url
        self.key = key
        self.claims = claims
        self.run = run
        self.args = args
        self.rng = random.Random(args.seed * 1000 + number)
        self.facts: list[str] = []

    async def work(self, org_ids: list[str], tag: str, ready: Any = None, go: Any = None) -> None:
        """Open the session, say ``ready``, wait for ``go`` (asyncio events), then make the calls."""
        headers = {"Authorization": f"Bearer {self.key}"}
        try:
            async with (
                httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60, read=120)) as http,
                streamable_http_client(self.url, http_client=http) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                if ready is not None:
                    ready()
                if go is not None:
                    await go.wait()
                for i in range(self.args.calls):
                    if self.rng.random() < self.args.write_share:
                        await self._write(session, org_ids, f"{tag}-{self.number}-{i}")
                    else:
                        await self._search(session)
        except Exception as err:  # noqa: BLE001 - every failure is counted and printed
            self.run.errors.append(f"client {self.number}: session failed: {type(err).__name__}: {err}"[:300])

    async def _call(self, session: ClientSession, kind: str, tool: str, arguments: dict[str, Any]) -> Any:
        started = time.perf_counter()
        try:
            result = await session.call_tool(tool, arguments)
        except Exception as err:  # noqa: BLE001
            self.run.errors.append(f"client {self.number}: {tool} raised {type(err).__name__}: {err}"[:300])
            return None
        self.run.latencies[kind].append((time.perf_counter() - started) * 1000)
        if result.is_error:
            self.run.errors.append(f"client {self.number}: {tool} answered an error: {text_of(result)}"[:300])
            return None
        return result

    async def _search(self, session: ClientSession) -> None:
        query = self.rng.choice(self.facts) if self.facts and self.rng.random() < 0.3 else self.rng.choice(self.claims)
        await self._call(session, "search", "memory-search", {"query": query, "limit": 10})

    async def _write(self, session: ClientSession, org_ids: list[str], tag: str) -> None:
        if self.rng.random() < 0.5:
            claim = self.rng.choice(self.claims)
            text = f"Observation {tag}: {claim}"
            arguments: dict[str, Any] = {"labels": ["Fact"], "properties": {"text": text}}
            self.facts.append(text)
        else:
            shared = self.rng.random() < SHARED_NAME_SHARE  # several agents name the same person at once
            name = f"Shared Researcher {self.rng.randrange(SHARED_NAMES)}" if shared else f"Researcher {tag}"
            arguments = {
                "labels": ["Person"],
                "properties": {"name": name, f"seenBy{self.number}": tag},
                "edges": [{"type": "WORKS_FOR", "target": self.rng.choice(org_ids)}],
            }
        result = await self._call(session, "write", "memory-write", arguments)
        if result is not None:
            self.run.written.append(result.structured_content["nodeId"])


async def run_clients(
    numbers: list[int], url: str, key: str, claims: list[str], org_ids: list[str], tag: str, args, barrier: Any = None
) -> Run:
    """The clients ``numbers`` as asyncio tasks of this process: every session opened first, then
    (after ``barrier``, shared with the other client processes) every client's calls at once."""
    run = Run()
    clients = [Client(n, url, key, claims, run, args) for n in numbers]
    go = asyncio.Event()
    opened: list[int] = []

    async def start() -> None:
        while len(opened) + sum(t.done() for t in tasks) < len(clients):  # open, or failed to open
            await asyncio.sleep(0.05)
        if barrier is not None:
            await asyncio.to_thread(barrier.wait, 300)
        go.set()

    tasks = [asyncio.ensure_future(c.work(org_ids, tag, lambda: opened.append(1), go)) for c in clients]
    await start()
    started = time.perf_counter()
    await asyncio.gather(*tasks)
    run.seconds = time.perf_counter() - started
    return run


def client_process(
    numbers: list[int],
    url: str,
    key: str,
    claims: list[str],
    org_ids: list[str],
    tag: str,
    args: dict[str, Any],
    barrier: Any,
    results: Any,
) -> None:
    """One client process (spawned): its share of the clients; what they measured goes on ``results``."""
    run = asyncio.run(run_clients(numbers, url, key, claims, org_ids, tag, argparse.Namespace(**args), barrier))
    results.put({"latencies": run.latencies, "errors": run.errors, "written": run.written, "seconds": run.seconds})


def run_spread(
    count: int, processes: int, url: str, key: str, claims: list[str], org_ids: list[str], args, on_start: Any
) -> Run:
    """``count`` clients spread over ``processes`` processes (as separate agents would be), all
    starting their calls together once every session is open; ``on_start()`` runs then."""
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(processes + 1)
    results = ctx.Queue()
    shares = [list(range(i, count, processes)) for i in range(processes)]
    children = [
        ctx.Process(
            target=client_process, args=(share, url, key, claims, org_ids, "many", vars(args), barrier, results)
        )
        for share in shares
    ]
    for child in children:
        child.start()
    barrier.wait(300)
    on_start()
    started = time.perf_counter()
    run = Run()
    for _ in children:
        part = results.get(timeout=3600)
        for kind, values in part["latencies"].items():
            run.latencies[kind].extend(values)
        run.errors.extend(part["errors"])
        run.written.extend(part["written"])
    run.seconds = time.perf_counter() - started
    for child in children:
        child.join()
        if child.exitcode != 0:
            run.errors.append(f"client process {child.pid} exited {child.exitcode}")
    return run


async def read_back(url: str, key: str, ids: list[str]) -> tuple[list[str], list[str]]:
    """(ids memory-get did not return, errors)."""
    missing: list[str] = []
    errors: list[str] = []
    headers = {"Authorization": f"Bearer {key}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60, read=120)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for i in range(0, len(ids), GET_BATCH):
            batch = ids[i : i + GET_BATCH]
            result = await session.call_tool("memory-get", {"nodeIds": batch, "hops": 0})
            if result.is_error:
                errors.append(f"memory-get answered an error: {text_of(result)}"[:300])
                missing.extend(batch)
                continue
            found = {n["nodeId"] for n in result.structured_content["nodes"]}
            missing.extend(x for x in batch if x not in found)
    return missing, errors


# -- the ingest processes --------------------------------------------------------------
def make_documents(root: Path, corpus: Path, processes: int, per_process: int) -> list[Path]:
    rows = read_jsonl(corpus, processes * per_process)
    folders = []
    for p in range(processes):
        folder = root / f"ingest-{p}"
        folder.mkdir(parents=True)
        for row in rows[p * per_process : (p + 1) * per_process]:
            body = f"# {row['title'] or row['_id']}\n\n{row['text']}\n"
            (folder / f"scifact-{row['_id']}.md").write_text(body, encoding="utf-8")
        folders.append(folder)
    return folders


def start_ingest(folders: list[Path], env: dict[str, str], logs: Path) -> list[tuple[subprocess.Popen, Path, Path]]:
    jobs = []
    for i, folder in enumerate(folders):
        out, err = logs / f"ingest-{i}.json", logs / f"ingest-{i}.err"
        with out.open("w") as fo, err.open("w") as fe:
            proc = subprocess.Popen([*maxy_command(), "ingest", str(folder), "--json"], env=env, stdout=fo, stderr=fe)
        jobs.append((proc, out, err))
    return jobs


def finish_ingest(jobs: list[tuple[subprocess.Popen, Path, Path]], started: float) -> dict[str, Any]:
    documents: list[str] = []
    errors: list[str] = []
    chunks = 0
    seconds: list[float] = []
    for i, (proc, out, err) in enumerate(jobs):
        code = proc.wait()
        seconds.append(time.perf_counter() - started)
        problems = [line for line in err.read_text().splitlines() if line.strip()]
        if code != 0:
            errors.append(f"ingest {i}: exit {code}: {' | '.join(problems[-3:])}"[:300])
            continue
        report = json.loads(out.read_text())
        for doc in report["documents"]:
            if doc.get("error"):
                errors.append(f"ingest {i}: {doc.get('path')}: {doc['error']}"[:300])
            elif not doc.get("skipped"):
                documents.append(doc["documentId"])
        chunks += int(report.get("chunks", 0))
        errors.extend(f"ingest {i}: {line}"[:300] for line in problems if SERVER_LOG_PROBLEM.search(line))
    return {"documents": documents, "chunks": chunks, "errors": errors, "seconds": max(seconds, default=0.0)}


# -- the server ------------------------------------------------------------------------
def start_server(env: dict[str, str], port: int, log: Path) -> subprocess.Popen:
    with log.open("w") as f:
        proc = subprocess.Popen(
            [*maxy_command(), "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            stdout=f,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"error: maxy serve exited {proc.returncode}: {log.read_text()[-800:]}")
        try:
            if httpx2.get(f"http://127.0.0.1:{port}/health/live", timeout=1).status_code == 200:
                return proc
        except httpx2.HTTPError:
            pass
        time.sleep(0.3)
    proc.kill()
    raise SystemExit("error: maxy serve did not answer within 120 s")


def stop_server(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def time_key_lookup(data_root: Path, key: str, repeat: int = 20) -> dict[str, float]:
    """Milliseconds to resolve an API key as the server does for every request: the first time
    (every account's files read) and once it has been seen (its own account only)."""
    store = ApiKeyStore(data_root)
    started = time.perf_counter()
    store.resolve(key)
    first = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    for _ in range(repeat):
        store.resolve(key)
    return {"firstMs": round(first, 2), "seenMs": round((time.perf_counter() - started) * 1000 / repeat, 2)}


def server_counts(log: Path) -> dict[str, int]:
    text = log.read_text(errors="replace")
    return {
        "retries": text.count("[db] retry"),
        "deadlocks": text.count("DeadlockDetected"),
        "nameRaces": text.count("[memory] name-race"),
    }


def duplicate_entities(db: Database, account_id: str) -> dict[str, int]:
    """Shared names written by many clients that ended up as more than one Person."""
    rows = db.read(
        "MATCH (n:Person {accountId: $acc}) WHERE n.name STARTS WITH 'Shared Researcher' "
        "WITH n.name AS name, count(n) AS copies WHERE copies > 1 RETURN name, copies",
        acc=account_id,
    )
    return {r["name"]: r["copies"] for r in rows}


def server_problems(log: Path) -> list[str]:
    lines = log.read_text(errors="replace").splitlines()
    return [line[:300] for line in lines if SERVER_LOG_PROBLEM.search(line) and EXPECTED_WARNING not in line]


# -- the report ------------------------------------------------------------------------
def summary(run: Run) -> dict[str, Any]:
    calls = sum(len(v) for v in run.latencies.values())
    out: dict[str, Any] = {"calls": calls, "seconds": round(run.seconds, 2), "callsPerS": round(calls / run.seconds, 2)}
    for kind, values in run.latencies.items():
        out[kind] = {
            "n": len(values),
            "p50": round(percentile(values, 50), 1),
            "p95": round(percentile(values, 95), 1),
            "max": round(max(values, default=float("nan")), 1),
        }
    return out


def _ms(figures: dict[str, Any]) -> str:
    return f"{figures['p50']:.0f} / {figures['p95']:.0f} / {figures['max']:.0f}"


def print_table(report: dict[str, Any]) -> None:
    alone, together = report["alone"], report["concurrent"]
    print(
        f"load before: {report['loadBefore']}  after: {report['loadAfter']}  other accounts: {report['otherAccounts']}"
    )
    many = f"{report['clients']} clients + {report['ingest']['processes']} ingest"
    print(f"{'':24} {'1 client':>24} {many:>28}")
    for kind in ("search", "write"):
        a, c = alone[kind], together[kind]
        print(f"{kind + ' p50/p95/max ms':24} {_ms(a):>24} {_ms(c):>28}")
        print(f"{kind + ' calls':24} {a['n']:>24} {c['n']:>28}")
    print(f"{'tool calls / s':24} {alone['callsPerS']:>24} {together['callsPerS']:>28}")
    ing = report["ingest"]
    print(
        f"ingest: {ing['processes']} processes, {ing['documents']} documents, {ing['chunks']} chunks "
        f"in {ing['seconds']} s ({ing['documentsPerS']} documents/s)"
    )
    rb = report["readBack"]
    print(f"read back: {rb['found']} / {rb['acknowledged']} acknowledged writes found by memory-get")
    sv = report["server"]
    print(
        f"server: {sv['retries']} transient errors retried ({sv['deadlocks']} deadlocks), "
        f"{sv['nameRaces']} writers resolved into an entity made meanwhile; "
        f"{report['duplicateEntities']} duplicate entities"
    )
    kl = report["keyLookup"]
    print(
        f"API key lookup among {report['otherAccounts'] + 1} accounts: {kl['firstMs']} ms first, {kl['seenMs']} ms once seen"
    )
    print(f"errors: {len(report['errors'])}")
    for line in report["errors"]:
        print(f"  {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--calls", type=int, default=20, help="tool calls per client")
    parser.add_argument("--client-processes", type=int, default=4, help="processes the clients are spread over")
    parser.add_argument("--alone-calls", type=int, default=60, help="tool calls of the one-client baseline")
    parser.add_argument("--tenants", type=int, default=1000, help="other accounts (with API keys) the server holds")
    parser.add_argument("--ingest", type=int, default=8, help="concurrent maxy ingest processes")
    parser.add_argument("--docs", type=int, default=3, help="documents per ingest process")
    parser.add_argument("--write-share", type=float, default=0.3)
    parser.add_argument("--dir", required=True, help="a BEIR folder with corpus.jsonl and queries.jsonl (SciFact)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--server-log", type=Path, help="keep the server's log (one line per tool call) in this file")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    data = Path(args.dir)
    if not (data / "corpus.jsonl").is_file() or not (data / "queries.jsonl").is_file():
        raise SystemExit(f"error: --dir: {data} has no corpus.jsonl and queries.jsonl; give a BEIR folder")

    settings = load_settings()
    embedder = without_cache(get_embedder(settings))  # the model timed, not the cache
    claims = [q["text"] for q in read_jsonl(data / "queries.jsonl", 300)]
    with tempfile.TemporaryDirectory(prefix="maxy-concurrency-") as tmp, Database(settings) as db:
        apply_schema(db, embedder.dimensions, embedder=embedder)
        root = Path(tmp)
        data_root = root / "data"
        data_root.mkdir()
        for i in range(args.tenants):  # other accounts on the same server, each with its key file
            create_api_key(data_root, create_account(data_root, f"tenant-{i}").account_id, role="admin")
        account = validate_account(data_root, create_account(data_root, "concurrency").account_id)
        key, _ = create_api_key(data_root, account.account_id, role="admin")
        key_lookup = time_key_lookup(data_root, key)
        writer = GraphWriter(db, account, embedder, created_by="benchmark")
        org_ids = [w.node_id for w in writer.write_many(NodeSpec(["Organization"], {"name": n}) for n in ORGANIZATIONS)]
        folders = make_documents(root / "docs", data / "corpus.jsonl", args.ingest, args.docs)
        env = {
            **os.environ,
            "DATA_ROOT": str(data_root),
            "ACCOUNT_ID": account.account_id,
            "AUDIT_RETENTION_DAYS": "0",
        }
        port = free_port()
        url = f"http://127.0.0.1:{port}/mcp"
        log = root / "serve.log"
        server = start_server(env, port, log)
        try:
            asyncio.run(
                run_clients([0], url, key, claims, org_ids, "warm", argparse.Namespace(**{**vars(args), "calls": 3}))
            )
            load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
            baseline = argparse.Namespace(**{**vars(args), "calls": args.alone_calls})
            alone = asyncio.run(run_clients([0], url, key, claims, org_ids, "alone", baseline))
            jobs: list[tuple[subprocess.Popen, Path, Path]] = []
            started = [0.0]

            def start_jobs() -> None:  # the ingest processes start as the clients do
                started[0] = time.perf_counter()
                jobs.extend(start_ingest(folders, env, root))

            processes = max(1, min(args.client_processes, args.clients))
            together = run_spread(args.clients, processes, url, key, claims, org_ids, args, start_jobs)
            ingest = finish_ingest(jobs, started[0])
            load_after = " ".join(f"{x:.2f}" for x in os.getloadavg())
            acknowledged = alone.written + together.written + ingest["documents"]
            missing, read_errors = asyncio.run(read_back(url, key, acknowledged))
            duplicates = duplicate_entities(db, account.account_id)
        finally:
            stop_server(server)
            if args.server_log is not None:
                args.server_log.write_text(log.read_text(errors="replace"))
            db.autocommit(
                "MATCH (n:Node {accountId: $acc}) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 2000 ROWS",
                acc=account.account_id,
            )
        errors = alone.errors + together.errors + ingest["errors"] + read_errors + server_problems(log)
        errors += [f"acknowledged write not found by memory-get: {x}" for x in missing]
        errors += [f"{name!r} is {n} Person nodes, not one" for name, n in duplicates.items()]
        report = {
            "clients": args.clients,
            "clientProcesses": max(1, min(args.client_processes, args.clients)),
            "otherAccounts": args.tenants,
            "keyLookup": key_lookup,
            "callsPerClient": args.calls,
            "writeShare": args.write_share,
            "loadBefore": load_before,
            "loadAfter": load_after,
            "alone": summary(alone),
            "concurrent": summary(together),
            "ingest": {
                "processes": args.ingest,
                "documents": len(ingest["documents"]),
                "chunks": ingest["chunks"],
                "seconds": round(ingest["seconds"], 1),
                "documentsPerS": round(len(ingest["documents"]) / ingest["seconds"], 2) if ingest["seconds"] else 0,
            },
            "readBack": {"acknowledged": len(acknowledged), "found": len(acknowledged) - len(missing)},
            "server": server_counts(log),
            "duplicateEntities": len(duplicates),
            "errors": errors,
        }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_table(report)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
