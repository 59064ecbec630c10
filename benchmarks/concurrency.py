"""Many agents and ingest jobs on one account at once: the real ``maxy serve`` (a subprocess),
N concurrent MCP clients over streamable HTTP doing a mix of memory-search and memory-write,
and M concurrent ``maxy ingest`` processes into the same account, against one client alone
doing the same mix in the same run (the baseline).

    .venv/bin/python benchmarks/concurrency.py [--clients 32] [--calls 20] [--ingest 8] [--docs 3]
        [--write-share 0.3] [--dir path/to/scifact] [--json]

Each client opens its own MCP session with an admin API key of a throwaway account and makes
``--calls`` tool calls: a memory-search (a SciFact claim, or the text of a fact written
earlier) or, with probability ``--write-share``, a memory-write (a Fact, or a Person linked by
WORKS_FOR to one of four shared Organizations, so writers meet on the same nodes). Each ingest
process gets its own ``--docs`` markdown files made from SciFact abstracts.

It reports every error (a failed call, an ``isError`` answer, an ingest that failed, a server
log line at WARNING or above), reads every acknowledged write back by id through memory-get
(each written node, each ingested document), and prints p50/p95 per operation and throughput,
concurrent and alone. The account, its graph and its files are removed afterwards. Exit code 1
when anything failed or went missing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
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
from maxy.embeddings import get_embedder
from maxy.graph.write import GraphWriter, NodeSpec
from maxy.mcp.keys import create_api_key
from maxy.schema import apply_schema
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

DEFAULT_DIR = "/work/shared/eval/scifact-dev"
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

    async def work(self, org_ids: list[str], tag: str) -> None:
        headers = {"Authorization": f"Bearer {self.key}"}
        try:
            async with (
                httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60, read=120)) as http,
                streamable_http_client(self.url, http_client=http) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
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


async def run_clients(count: int, url: str, key: str, claims: list[str], org_ids: list[str], tag: str, args) -> Run:
    run = Run()
    clients = [Client(i, url, key, claims, run, args) for i in range(count)]
    started = time.perf_counter()
    await asyncio.gather(*(c.work(org_ids, tag) for c in clients))
    run.seconds = time.perf_counter() - started
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


def print_table(report: dict[str, Any]) -> None:
    alone, together = report["alone"], report["concurrent"]
    print(f"load before: {report['loadBefore']}  after: {report['loadAfter']}")
    print(f"{'':28} {'1 client':>18} {str(report['clients']) + ' clients + ingest':>26}")
    for kind in ("search", "write"):
        a, c = alone[kind], together[kind]
        print(f"{kind + ' p50 / p95 ms':28} {a['p50']:>8} / {a['p95']:<8} {c['p50']:>12} / {c['p95']:<10}")
        print(f"{kind + ' calls':28} {a['n']:>18} {c['n']:>26}")
    print(f"{'tool calls / s':28} {alone['callsPerS']:>18} {together['callsPerS']:>26}")
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
    print(f"errors: {len(report['errors'])}")
    for line in report["errors"]:
        print(f"  {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--calls", type=int, default=20, help="tool calls per client")
    parser.add_argument("--ingest", type=int, default=8, help="concurrent maxy ingest processes")
    parser.add_argument("--docs", type=int, default=3, help="documents per ingest process")
    parser.add_argument("--write-share", type=float, default=0.3)
    parser.add_argument("--dir", default=DEFAULT_DIR, help="a BEIR folder with corpus.jsonl and queries.jsonl")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--server-log", type=Path, help="keep the server's log (one line per tool call) in this file")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    data = Path(args.dir)
    if not (data / "corpus.jsonl").is_file() or not (data / "queries.jsonl").is_file():
        raise SystemExit(f"error: --dir: {data} has no corpus.jsonl and queries.jsonl; give a BEIR folder")

    settings = load_settings()
    embedder = get_embedder(settings)
    claims = [q["text"] for q in read_jsonl(data / "queries.jsonl", 300)]
    with tempfile.TemporaryDirectory(prefix="maxy-concurrency-") as tmp, Database(settings) as db:
        apply_schema(db, embedder.dimensions, embedder=embedder)
        root = Path(tmp)
        data_root = root / "data"
        data_root.mkdir()
        account = validate_account(data_root, create_account(data_root, "concurrency").account_id)
        key, _ = create_api_key(data_root, account.account_id, role="admin")
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
                run_clients(1, url, key, claims, org_ids, "warm", argparse.Namespace(**{**vars(args), "calls": 3}))
            )
            load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
            alone = asyncio.run(run_clients(1, url, key, claims, org_ids, "alone", args))
            started = time.perf_counter()
            jobs = start_ingest(folders, env, root)
            together = asyncio.run(run_clients(args.clients, url, key, claims, org_ids, "many", args))
            ingest = finish_ingest(jobs, started)
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
