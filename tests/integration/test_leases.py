"""Leases against the real Neo4j: one holder when threads and processes ask at once, a lapsed
lease handed over, a renewing holder keeping it, rounds spaced by ``every_s``, and the primitive
against a plain model over arbitrary sequences of acquire, renew, release and time passing."""

from __future__ import annotations

import json
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from maxy.graph import leases as leases_mod
from maxy.graph.leases import Lease, Leases, replica_id, run_round

from tests.hypothesis_profile import examples
from tests.plugins_fixture.helpers import run_at_once


def _name(tag: str) -> str:
    return f"test-{tag}-{uuid.uuid4().hex[:8]}"


@pytest.fixture()
def names(db):
    """Lease names made by a test, removed afterwards with their rounds."""
    made: list[str] = []

    def make(tag: str) -> str:
        made.append(_name(tag))
        return made[-1]

    yield make
    db.write("MATCH (l:Lease|LeaseRound) WHERE any(n IN $names WHERE l.name STARTS WITH n) DETACH DELETE l", names=made)


def _node(db, name: str) -> dict[str, Any]:
    return db.read("MATCH (l:Lease {name: $name}) RETURN properties(l) AS p", name=name)[0]["p"]


class Clock:
    """Epoch ms the test moves by hand."""

    def __init__(self, start: int = 1_000_000) -> None:
        self.now = start

    def __call__(self) -> int:
        return self.now


def test_replica_id_is_host_pid_random_and_made_once() -> None:
    import os
    import socket

    first = replica_id()
    host, pid, tail = first.rsplit(":", 2)
    assert (host, pid) == (socket.gethostname(), str(os.getpid())) and len(tail) == 6
    assert replica_id() == first


def test_threads_asking_at_once_one_holds_each_round(db, names) -> None:
    threads = 8
    for _ in range(10):
        name = names("threads")
        barrier = threading.Barrier(threads)

        def ask(i: int, name: str = name, barrier: threading.Barrier = barrier) -> Lease | None:
            mine = Leases(db, holder=f"thread-{i}")
            barrier.wait()
            return mine.acquire(name, 30)

        with ThreadPoolExecutor(threads) as pool:
            got = [g for g in pool.map(ask, range(threads)) if g is not None]
        assert len(got) == 1, got
        node = _node(db, name)
        assert (node["holder"], node["round"]) == (got[0].holder, 1)
        assert [r["holder"] for r in Leases(db).rounds(name)] == [got[0].holder]


def test_a_lapsed_lease_goes_to_exactly_one_of_many_and_its_holder_cannot_renew_it(db, names) -> None:
    clock = Clock()
    for _ in range(5):
        name = names("takeover")
        old = Leases(db, holder="old", clock=clock)
        held = old.acquire(name, 1.0)
        assert held is not None
        clock.now += 1000  # until <= now: lapsed
        barrier = threading.Barrier(7)

        def take(
            i: int, name: str = name, barrier: threading.Barrier = barrier, old: Leases = old, held: Lease = held
        ) -> Any:
            barrier.wait()
            if i == 0:
                return ("renew", old.renew(held, 1.0))
            return ("acquire", Leases(db, holder=f"new-{i}", clock=clock).acquire(name, 1.0))

        with ThreadPoolExecutor(7) as pool:
            results = list(pool.map(take, range(7)))
        winners = [r for r in results if r[1] is not None]
        assert len(winners) == 1, results  # the holder renewing first, or one newcomer: never both
        node = _node(db, name)
        if winners[0][0] == "acquire":
            assert (node["holder"], node["round"]) == (winners[0][1].holder, 2)
            assert old.renew(held, 1.0) is None and old.release(held) is False
            rounds = Leases(db).rounds(name)
            assert [(r["round"], r["holder"], r["outcome"]) for r in rounds] == [
                (1, "old", "lost"),
                (2, winners[0][1].holder, "running"),
            ]
        else:
            assert (node["holder"], node["round"], node["until"]) == ("old", 1, clock.now + 1000)
        clock.now += 10_000


_PROCESS_RACE = """
import json, sys, time
from maxy.db import Database
from maxy.graph.leases import Leases
prefix, count, start = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
leases = Leases(Database())
leases.db.read("RETURN 1 AS one")  # connected before the first slot
won = []
for i in range(count):
    time.sleep(max(0.0, start + i * 0.15 - time.time()))
    if leases.acquire(f"{prefix}-{i}", 30) is not None:
        won.append(i)
print(json.dumps({"holder": leases.holder, "won": won}))
"""


def test_processes_asking_at_once_one_holds_each_round(db, data_root: Path) -> None:
    prefix, count = _name("procs"), 12
    outs = run_at_once(_PROCESS_RACE, [prefix, str(count)], 4, data_root)
    try:
        assert all(code == 0 for code, _, _ in outs), [err[-2000:] for _, _, err in outs]
        reports = [json.loads(out.strip().splitlines()[-1]) for _, out, _ in outs]
        assert len({r["holder"] for r in reports}) == 4
        won = sorted(i for r in reports for i in r["won"])
        assert won == list(range(count)), reports  # each name once, none twice, none missing
        rows = db.read(
            "MATCH (l:Lease) WHERE l.name STARTS WITH $p RETURN l.name AS name, l.holder AS holder, l.round AS round",
            p=prefix,
        )
        holder_of = {f"{prefix}-{i}": r["holder"] for r in reports for i in r["won"]}
        assert {r["name"]: (r["holder"], r["round"]) for r in rows} == {n: (h, 1) for n, h in holder_of.items()}
    finally:
        db.write("MATCH (l:Lease|LeaseRound) WHERE l.name STARTS WITH $p DETACH DELETE l", p=prefix)


def test_a_holder_renewing_keeps_the_lease_until_it_releases(db, names) -> None:
    name = names("renew")
    ttl = 0.6
    other = Leases(db, holder="other")
    stolen: list[Lease] = []
    stop = threading.Event()

    def contend() -> None:
        while not stop.wait(0.05):
            got = other.acquire(name, ttl)
            if got is not None:
                stolen.append(got)
                return

    mine = Leases(db, holder="mine")
    watcher = threading.Thread(target=contend)

    def work(beat: Any) -> float:
        watcher.start()
        time.sleep(ttl * 3)  # three TTLs: held only because the heartbeat renews it
        return float(_node(db, name)["renewedAt"] - _node(db, name)["acquiredAt"])

    done = run_round(mine, name, work, ttl_s=ttl)
    assert done is not None
    lease, renewed_after_ms = done
    assert renewed_after_ms >= ttl * 1000  # renewed past the first TTL
    watcher.join(timeout=10)
    stop.set()
    rounds = Leases(db).rounds(name)
    assert [(r["holder"], r["outcome"]) for r in rounds] == [("mine", "done"), ("other", "running")]
    assert [s.round for s in stolen] == [lease.round + 1]  # free once released, not before
    assert stolen[0].acquired_at >= rounds[0]["finishedAt"] >= lease.acquired_at + ttl * 3000


def test_a_round_whose_lease_was_taken_stops_as_lost(db, names, caplog) -> None:
    import logging

    caplog.set_level(logging.INFO, logger="maxy")
    name = names("lost")
    ttl = 0.6
    far = Leases(db, holder="skewed", clock=lambda: int(time.time() * 1000) + 3_600_000)  # sees it lapsed

    def work(beat: Any) -> bool:
        assert far.acquire(name, 60) is not None
        return beat.lost.wait(ttl * 3)

    done = run_round(Leases(db, holder="first"), name, work, ttl_s=ttl)
    assert done is not None and done[1] is True  # the heartbeat told the round
    assert [(r["holder"], r["outcome"]) for r in Leases(db).rounds(name)] == [("first", "lost"), ("skewed", "running")]
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("[lease] ")]
    assert f"[lease] warn lost name={name} round=1" in lines
    assert any(line.startswith(f"[lease] round name={name} round=1 holder=first outcome=lost ms=") for line in lines)


def test_rounds_are_spaced_by_every_and_a_failed_round_is_recorded(db, names, caplog) -> None:
    import logging

    caplog.set_level(logging.DEBUG, logger="maxy")
    clock = Clock()
    name = names("every")
    a, b = Leases(db, holder="a", clock=clock), Leases(db, holder="b", clock=clock)
    assert run_round(a, name, lambda beat: "ok", ttl_s=10, every_s=5) is not None
    clock.now += 4999
    assert b.acquire(name, 10, every_s=5) is None and a.acquire(name, 10, every_s=5) is None
    clock.now += 1

    def boom(beat: Any) -> None:
        raise RuntimeError("the round's work failed")

    with pytest.raises(RuntimeError):
        run_round(b, name, boom, ttl_s=10, every_s=5)
    rounds = Leases(db).rounds(name)
    assert [(r["round"], r["holder"], r["outcome"]) for r in rounds] == [(1, "a", "done"), (2, "b", "failed")]
    assert rounds[1]["startedAt"] - rounds[0]["startedAt"] == 5000
    skips = [r.getMessage() for r in caplog.records if r.getMessage().startswith(f"[lease] skip name={name}")]
    assert skips and all(r.levelname == "DEBUG" for r in caplog.records if r.getMessage() in skips)
    assert skips[0] == f"[lease] skip name={name} reason=recent round=1 holder=a me=b"


def test_round_records_are_kept_for_the_last_rounds_only(db, names, monkeypatch) -> None:
    monkeypatch.setattr(leases_mod, "ROUNDS_KEPT", 3)
    clock = Clock()
    name = names("kept")
    mine = Leases(db, holder="a", clock=clock)
    for _ in range(6):
        lease = mine.acquire(name, 1)
        assert lease is not None and mine.release(lease)
    assert [r["round"] for r in mine.rounds(name)] == [4, 5, 6]


def test_the_database_refuses_a_round_number_twice(db, names) -> None:
    from neo4j.exceptions import ConstraintError

    name = names("unique")
    assert Leases(db, holder="a").acquire(name, 1) is not None
    with pytest.raises(ConstraintError):
        db.write("CREATE (:LeaseRound {name: $name, round: 1, holder: 'b'})", name=name)


# ---- the primitive against a model ------------------------------------------------------------


@dataclass
class Model:
    holder: str | None = None
    until: int | None = None
    round: int = 0
    acquired: int | None = None
    released: bool = False
    rounds: dict[int, list[str]] = field(default_factory=dict)  # round -> [holder, outcome]

    def acquire(self, who: str, now: int, ttl: int, every: int) -> int | None:
        free = self.until is None or self.until <= now or self.holder == who
        if not (free and (self.acquired is None or self.acquired <= now - every)):
            return None
        self.round += 1
        self.holder, self.acquired, self.until, self.released = who, now, now + ttl, False
        self.rounds[self.round] = [who, "running"]
        return self.round

    def mine(self, who: str, rnd: int) -> bool:
        return self.holder == who and self.round == rnd and not self.released

    def renew(self, who: str, rnd: int, now: int, ttl: int) -> int | None:
        if not self.mine(who, rnd):
            return None
        self.until = now + ttl
        return self.until

    def release(self, who: str, rnd: int, now: int, outcome: str) -> bool:
        mine = self.mine(who, rnd)
        if mine:
            self.until, self.released = now, True
        if rnd in self.rounds and self.rounds[rnd][0] == who:
            self.rounds[rnd][1] = outcome if mine else "lost"
        return mine


WHO = st.sampled_from(["a", "b", "c"])
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("acquire"), WHO, st.integers(0, 3000), st.sampled_from([0, 0, 500, 2000])),
        st.tuples(st.just("renew"), WHO, st.integers(0, 3000)),
        st.tuples(st.just("release"), WHO, st.sampled_from(["done", "failed"])),
        st.tuples(st.just("advance"), st.integers(0, 2500)),
    ),
    max_size=14,
)


@settings(max_examples=examples(60), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_leases_behave_as_the_model(db, ops: list[tuple[Any, ...]]) -> None:
    name = _name("model")
    clock = Clock()
    model = Model()
    real = {who: Leases(db, holder=who, clock=clock) for who in "abc"}
    held: dict[str, Lease] = {}
    try:
        for op in ops:
            if op[0] == "advance":
                clock.now += op[1]
            elif op[0] == "acquire":
                _, who, ttl, every = op
                got = real[who].acquire(name, ttl / 1000, every_s=every / 1000)
                assert (got.round if got else None) == model.acquire(who, clock.now, ttl, every), op
                if got is not None:
                    held[who] = got
            elif op[1] in held:
                who, lease = op[1], held[op[1]]
                if op[0] == "renew":
                    renewed = real[who].renew(lease, op[2] / 1000)
                    assert (renewed.until if renewed else None) == model.renew(who, lease.round, clock.now, op[2])
                else:
                    assert real[who].release(lease, op[2]) == model.release(who, lease.round, clock.now, op[2])
        rows = db.read("MATCH (l:Lease {name: $name}) RETURN properties(l) AS p", name=name)
        if model.round == 0:
            assert rows == [] or rows[0]["p"]["round"] == 0
            return
        node = rows[0]["p"]
        assert (node["holder"], node["round"], node["until"], node["acquiredAt"]) == (
            model.holder,
            model.round,
            model.until,
            model.acquired,
        )
        assert (node.get("releasedAt") is not None) == model.released
        rounds = Leases(db).rounds(name)
        assert {r["round"]: [r["holder"], r["outcome"]] for r in rounds} == model.rounds
    finally:
        db.write("MATCH (l:Lease|LeaseRound {name: $name}) DETACH DELETE l", name=name)


def test_maxy_status_shows_the_latest_round_of_each_job_and_only_this_accounts_own(db, names) -> None:
    from maxy.status import background_line, background_rounds

    clock = Clock(int(time.time() * 1000) - 30_000)  # 30 s ago by the database's clock
    shared, mine_name, theirs = names("status"), names("status-job") + ":acc-1", names("status-job") + ":acc-2"
    mine = Leases(db, holder="h:1:aa", clock=clock)
    run_round(mine, shared, lambda beat: None, ttl_s=5)
    assert mine.acquire(mine_name, 5) is not None  # its process stopped in the middle of this round
    assert mine.acquire(theirs, 5) is not None
    rows = {r["name"]: r for r in background_rounds(db, "acc-1") if r["name"] in (shared, mine_name, theirs)}
    assert sorted(rows) == sorted([shared, mine_name])
    assert rows[shared]["outcome"] == "done" and rows[shared]["finishedAt"] is not None
    assert rows[mine_name]["job"] == mine_name.split(":")[0] and not rows[mine_name]["held"]
    assert 29 <= rows[shared]["secondsAgo"] <= 60
    line = background_line([rows[shared], rows[mine_name]])
    ago = rows[shared]["secondsAgo"]
    assert line == (
        f"rounds    {shared} round 1 by h:1:aa {ago} s ago (done); "
        f"{rows[mine_name]['job']} (this account) round 1 by h:1:aa {ago} s ago (stopped mid-round)"
    )
    assert background_line([]) == "rounds    none yet"


def test_an_accounts_leases_go_when_it_is_forgotten(db, names) -> None:
    base = names("forget")
    mine = Leases(db, holder="a")
    for name in (f"{base}:acc-1", f"{base}-other:acc-1", f"{base}:acc-2"):
        assert mine.acquire(name, 1) is not None
    assert mine.forget("acc-1") == 4  # two leases, a round each
    rows = db.read("MATCH (l:Lease|LeaseRound) WHERE l.name STARTS WITH $b RETURN DISTINCT l.name AS n", b=base)
    assert [r["n"] for r in rows] == [f"{base}:acc-2"]
