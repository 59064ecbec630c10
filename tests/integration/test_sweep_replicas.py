"""Three processes run ``maxy serve``'s negotiation sweep loop on one database, a round every
0.4 s: each round runs once, in one of them, and when the one holding a round is killed with
SIGKILL another takes the next round once the lease lapses."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from maxy.community.negotiation.sweep import lease_ttl_s
from maxy.graph.leases import Leases

from tests.plugins_fixture.helpers import child_env

INTERVAL_S = 0.4
WORK_S = 0.3  # each account's sweep is slowed by this: a round long enough to be killed in

# One replica: the real SweepLoop over the accounts of DATA_ROOT, until its stdin closes.
_REPLICA = """
import importlib, sys, time
from maxy.config import load_settings
from maxy.db import Database
from maxy.logs import configure

sw = importlib.import_module("maxy.community.negotiation.sweep")  # the module, not its sweep()
configure("INFO")
lease, interval, work = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
real = sw.sweep

def slowed(negotiations):
    time.sleep(work)
    return real(negotiations)

sw.sweep = slowed
settings = load_settings()
db = Database(settings)
db.read("RETURN 1 AS one")
loop = sw.SweepLoop(settings, db, None, interval_s=interval, lease=lease)
loop.start()
print("started", flush=True)
sys.stdin.read()
loop.stop()
db.close()
"""


def _lines(path: Path, pattern: str) -> list[re.Match[str]]:
    return [m for line in path.read_text().splitlines() if (m := re.match(pattern, line))]


def _wait(what: str, check: Any, timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


def test_three_replicas_run_each_sweep_round_once_and_take_over_from_a_killed_one(
    db, account, data_root: Path, tmp_path: Path
) -> None:
    lease = f"test-sweep-{uuid.uuid4().hex[:8]}"
    ttl_ms = lease_ttl_s(INTERVAL_S) * 1000
    leases = Leases(db)
    logs = [tmp_path / f"replica-{i}.log" for i in range(3)]
    procs = []
    try:
        for log in logs:
            with log.open("w") as err:
                procs.append(
                    subprocess.Popen(
                        [sys.executable, "-c", _REPLICA, lease, str(INTERVAL_S), str(WORK_S)],
                        env=child_env(data_root),
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        stderr=err,
                        text=True,
                    )
                )
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "started"
        started = time.monotonic()
        time.sleep(4)

        # Kill the replica holding a round, early in it (its work has most of WORK_S to go).
        def running() -> dict[str, Any] | None:
            rows = leases.status(lease)
            fresh = rows and rows[0]["outcome"] == "running" and rows[0]["now"] - rows[0]["acquiredAt"] < 100
            return rows[0] if fresh else None

        holding = _wait("a round in progress", running, 10)
        pid = int(holding["holder"].split(":")[-2])
        victim = next(p for p in procs if p.pid == pid)
        os.kill(pid, signal.SIGKILL)
        victim.wait(timeout=10)
        killed = leases.status(lease)[0]  # as the killed replica left it (its last renewal included)
        assert (killed["holder"], killed["outcome"]) == (holding["holder"], "running")
        after = _wait(
            "the next round",
            lambda: [r for r in leases.rounds(lease, after=killed["round"])],
            (ttl_ms / 1000) + INTERVAL_S + 10,
        )
        time.sleep(2)
        for proc in procs:
            if proc is not victim:
                proc.communicate(input="", timeout=30)  # stops the loop after the round in progress
                assert proc.returncode == 0, proc.returncode
        elapsed_s = time.monotonic() - started
    finally:
        for proc in procs:
            proc.kill()
            proc.wait(timeout=10)

    try:
        rounds = leases.rounds(lease)
        numbers = [r["round"] for r in rounds]
        assert numbers == list(range(1, len(rounds) + 1))  # the database never gives a round number twice
        assert 8 <= len(rounds) <= elapsed_s / INTERVAL_S + 1  # a round per interval, not three

        # The killed round stayed unfinished; the next one went to another replica once the lease lapsed.
        by_round = {r["round"]: r for r in rounds}
        assert [r["round"] for r in rounds if r["outcome"] != "done"] == [killed["round"]]
        assert by_round[killed["round"]]["finishedAt"] is None
        nxt = by_round[killed["round"] + 1]
        assert nxt == after[0] | {"finishedAt": nxt["finishedAt"], "outcome": nxt["outcome"]}
        assert nxt["holder"] != killed["holder"]
        assert killed["until"] <= nxt["startedAt"] <= killed["until"] + (INTERVAL_S + 3) * 1000
        assert killed["holder"] not in {r["holder"] for r in rounds if r["round"] > killed["round"]}

        # Rounds never overlap and start at least an interval apart.
        for a, b in zip(rounds, rounds[1:], strict=False):
            assert b["startedAt"] - a["startedAt"] >= INTERVAL_S * 1000
            if a["finishedAt"] is not None:
                assert b["startedAt"] >= a["finishedAt"]

        # Each finished round has one [lease] round line, in the log of the replica that ran it,
        # and the sweep's own work ran once per round.
        seen: dict[int, str] = {}
        for log, proc in zip(logs, procs, strict=True):
            ran = _lines(log, rf"\[lease\] round name={lease} round=(\d+) holder=(\S+) outcome=(\w+) ms=\d+$")
            for m in ran:
                n = int(m.group(1))
                assert n not in seen, f"round {n} logged by {seen.get(n)} and {m.group(2)}"
                seen[n] = m.group(2)
                assert m.group(2).split(":")[-2] == str(proc.pid) and m.group(3) == "done"
            swept = _lines(log, rf"\[negotiation\] op=sweep accountId={account.account_id[:8]} ")
            extra = 1 if proc is victim else 0  # the killed round may have swept before it died
            assert len(ran) <= len(swept) <= len(ran) + extra, log.read_text()[-3000:]
        assert seen == {r["round"]: r["holder"] for r in rounds if r["outcome"] == "done"}
        assert len(set(seen.values())) >= 2
    finally:
        db.write("MATCH (l:Lease|LeaseRound {name: $name}) DETACH DELETE l", name=lease)
