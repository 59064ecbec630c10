"""Leases: of the processes sharing one database (``maxy serve`` replicas, MCP servers), one runs
each round of a periodic job and the others skip it.

A lease is one ``(:Lease {name})`` node, outside the ``:Node`` hierarchy (no guard, search or
export sees it): ``holder`` (the replica id of the process that took the latest round,
``host:pid:random``), ``until`` (epoch ms at which it lapses), ``round`` (rounds started so far),
``acquiredAt`` (when the latest round started), ``renewedAt``, ``releasedAt``, ``outcome`` of the
latest round (``running``, ``done``, ``failed``, ``lost``) and ``checkedAt`` (when any process last
asked for it). Each round also leaves a ``(:LeaseRound {name, round, holder, startedAt,
finishedAt, outcome})``; the last :data:`ROUNDS_KEPT` of each lease are kept, and a uniqueness
constraint on ``(name, round)`` means no round number is ever taken twice.

Time is the database's: each statement reads ``timestamp()`` (one value for the whole
statement), so the replicas' own clocks, which may disagree, never decide who holds a lease.
A ``clock`` given to :class:`Leases` replaces it (tests step through time with it).

Every statement first writes ``checkedAt``, which takes the node's write lock, and only then
reads ``holder`` and ``until``: two processes asking at once are serialised by the database and
the second sees what the first wrote.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from ..db import Database
from ..logs import log_line

T = TypeVar("T")

ROUNDS_KEPT = 1000  # LeaseRound records per lease: a day of rounds at 90 s, six weeks of hourly ones
OUTCOMES = ("running", "done", "failed", "lost")

_ACQUIRE = """
MERGE (l:Lease {name: $name})
  ON CREATE SET l.round = 0
WITH l, coalesce($now, timestamp()) AS now
SET l.checkedAt = now
WITH l, now,
     (l.until IS NULL OR l.until <= now OR l.holder = $holder)
     AND (l.acquiredAt IS NULL OR l.acquiredAt <= now - $everyMs) AS won
CALL (l, now, won) {
  WITH l, now, won, l.round + 1 AS next WHERE won
  SET l.round = next, l.holder = $holder, l.acquiredAt = now, l.until = now + $ttlMs,
      l.renewedAt = null, l.releasedAt = null, l.outcome = 'running'
  CREATE (:LeaseRound {name: $name, round: next, holder: $holder, startedAt: now, outcome: 'running'})
  WITH next
  OPTIONAL MATCH (old:LeaseRound {name: $name}) WHERE old.round <= next - $kept
  DELETE old
}
RETURN won, l.holder AS holder, l.round AS round, l.until AS until, l.acquiredAt AS acquiredAt, now
"""

_RENEW = """
MATCH (l:Lease {name: $name})
WITH l, coalesce($now, timestamp()) AS now
SET l.checkedAt = now
WITH l, now WHERE l.holder = $holder AND l.round = $round AND l.releasedAt IS NULL
SET l.until = now + $ttlMs, l.renewedAt = now
RETURN l.until AS until
"""

_RELEASE = """
MATCH (l:Lease {name: $name})
WITH l, coalesce($now, timestamp()) AS now
SET l.checkedAt = now
WITH l, now, (l.holder = $holder AND l.round = $round AND l.releasedAt IS NULL) AS mine
CALL (l, now, mine) {
  WITH l, now WHERE mine
  SET l.until = now, l.releasedAt = now, l.outcome = $outcome
}
WITH now, mine
OPTIONAL MATCH (r:LeaseRound {name: $name, round: $round, holder: $holder})
SET r.finishedAt = now, r.outcome = CASE WHEN mine THEN $outcome ELSE 'lost' END
RETURN mine
"""

_STATUS = """
MATCH (l:Lease) WHERE $prefix IS NULL OR l.name STARTS WITH $prefix
RETURN l.name AS name, l.holder AS holder, l.round AS round, l.acquiredAt AS acquiredAt, l.until AS until,
       l.releasedAt AS releasedAt, l.outcome AS outcome, l.checkedAt AS checkedAt,
       l.until > coalesce($now, timestamp()) AS held, coalesce($now, timestamp()) AS now
ORDER BY name
"""

_ROUNDS = """
MATCH (r:LeaseRound {name: $name}) WHERE r.round > $after
RETURN r.round AS round, r.holder AS holder, r.startedAt AS startedAt, r.finishedAt AS finishedAt,
       r.outcome AS outcome
ORDER BY round
"""

_FORGET = """
MATCH (l:Lease|LeaseRound) WHERE l.name ENDS WITH $suffix
DETACH DELETE l
RETURN count(l) AS removed
"""

_replica: tuple[int, str] | None = None


def replica_id() -> str:
    """This process's id as a lease holder, ``host:pid:random``: made once per process (a forked
    child makes its own), random so a restarted process reusing a pid is another holder."""
    global _replica
    pid = os.getpid()
    if _replica is None or _replica[0] != pid:
        _replica = (pid, f"{socket.gethostname()}:{pid}:{secrets.token_hex(3)}")
    return _replica[1]


def _ms(seconds: float) -> int:
    return max(0, round(seconds * 1000))


@dataclass(frozen=True)
class Lease:
    """A round this process holds: the lease's name, its holder (this process), the round
    number, when it started and until when it is held (epoch ms, the database's clock)."""

    name: str
    holder: str
    round: int
    acquired_at: int
    until: int


class Leases:
    """Acquire, renew and release leases as ``holder`` (default: this process's replica id)."""

    def __init__(self, db: Database, holder: str | None = None, clock: Callable[[], int] | None = None):
        self.db = db
        self.holder = holder or replica_id()
        self.clock = clock  # epoch ms; None: the database's timestamp()

    def _now(self) -> int | None:
        return None if self.clock is None else int(self.clock())

    def acquire(self, name: str, ttl_s: float, *, every_s: float = 0.0) -> Lease | None:
        """Start a new round of ``name``, held for ``ttl_s``, when nobody else holds it and the
        last round started at least ``every_s`` ago; None (and a DEBUG line) otherwise."""
        row = self.db.write(
            _ACQUIRE,
            name=name,
            holder=self.holder,
            ttlMs=_ms(ttl_s),
            everyMs=_ms(every_s),
            kept=ROUNDS_KEPT,
            now=self._now(),
        )[0]
        if not row["won"]:
            held = row["until"] is not None and row["until"] > row["now"] and row["holder"] != self.holder
            log_line(
                "lease",
                "skip",
                level=logging.DEBUG,
                name=name,
                reason="held" if held else "recent",
                round=row["round"],
                holder=row["holder"],
                me=self.holder,
            )
            return None
        return Lease(name, self.holder, int(row["round"]), int(row["acquiredAt"]), int(row["until"]))

    def renew(self, lease: Lease, ttl_s: float) -> Lease | None:
        """Hold ``lease`` for ``ttl_s`` more; None when it was lost (released, or another
        process took a later round after it lapsed)."""
        rows = self.db.write(
            _RENEW, name=lease.name, holder=lease.holder, round=lease.round, ttlMs=_ms(ttl_s), now=self._now()
        )
        if not rows:
            return None
        return Lease(lease.name, lease.holder, lease.round, lease.acquired_at, int(rows[0]["until"]))

    def release(self, lease: Lease, outcome: str = "done") -> bool:
        """End the round: the lease is free at once (the next round still waits for ``every_s``)
        and its LeaseRound records ``outcome``; False when it was no longer held."""
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome: {outcome!r} is not one of {', '.join(OUTCOMES)}")
        rows = self.db.write(
            _RELEASE, name=lease.name, holder=lease.holder, round=lease.round, outcome=outcome, now=self._now()
        )
        return bool(rows and rows[0]["mine"])

    def status(self, prefix: str | None = None) -> list[dict[str, Any]]:
        """Every lease (or those whose name starts with ``prefix``) as the database holds it."""
        return self.db.read(_STATUS, prefix=prefix, now=self._now())

    def forget(self, owner: str) -> int:
        """Remove the leases named ``<job>:<owner>`` and their rounds (an account purged for good)."""
        return int(self.db.write(_FORGET, suffix=f":{owner}")[0]["removed"])

    def rounds(self, name: str, after: int = 0) -> list[dict[str, Any]]:
        """The kept LeaseRound records of ``name`` after round ``after``, oldest first."""
        return self.db.read(_ROUNDS, name=name, after=after)


class Heartbeat:
    """Renews a lease every third of its TTL while a round runs; ``lost`` is set when a renewal
    finds it gone, and the round should stop at its next step."""

    def __init__(self, leases: Leases, lease: Lease, ttl_s: float):
        self.leases = leases
        self.lease = lease
        self.ttl_s = ttl_s
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"lease-{lease.name}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=self.ttl_s)

    def _run(self) -> None:
        while not self._stop.wait(self.ttl_s / 3):
            try:
                renewed = self.leases.renew(self.lease, self.ttl_s)
            except Exception as err:  # noqa: BLE001 - an unreachable database: try again, the TTL decides
                log_line("lease", "warn", "renew-failed", level=logging.WARNING, name=self.lease.name, error=err)
                continue
            if renewed is None:
                self.lost.set()
                log_line("lease", "warn", "lost", level=logging.WARNING, name=self.lease.name, round=self.lease.round)
                return


def run_round(
    leases: Leases, name: str, work: Callable[[Heartbeat], T], *, ttl_s: float, every_s: float = 0.0
) -> tuple[Lease, T] | None:
    """Run one round of ``name`` when this process wins it: acquire, renew in the background while
    ``work`` runs, release with its outcome and log one ``[lease] round`` line. None when another
    process holds the lease or ran a round within ``every_s``."""
    lease = leases.acquire(name, ttl_s, every_s=every_s)
    if lease is None:
        return None
    started = time.monotonic()
    beat = Heartbeat(leases, lease, ttl_s)
    beat.start()
    outcome = "failed"
    try:
        result = work(beat)
        outcome = "done"
    finally:
        beat.stop()
        if beat.lost.is_set():
            outcome = "lost"
        try:
            leases.release(lease, outcome)
        except Exception as err:  # noqa: BLE001 - unreleased, the lease lapses after its TTL
            log_line("lease", "warn", "release-failed", level=logging.WARNING, name=name, error=err)
        log_line(
            "lease",
            "round",
            name=name,
            round=lease.round,
            holder=lease.holder,
            outcome=outcome,
            ms=round((time.monotonic() - started) * 1000),
        )
    return lease, result
