"""The sweep: fire the negotiation timers that are due and resume negotiations a stopped process
left mid-step. ``maxy negotiations sweep`` runs it once; ``maxy serve`` runs it in the
background (:class:`SweepLoop`, every ``MAXY_SWEEP_INTERVAL_S``). Of several ``maxy serve``
replicas on one database, one runs each round: a round takes the ``negotiation-sweep`` lease
(:mod:`maxy.graph.leases`), and the others skip it.

- ``claim`` due: the turn returns to the queue (``claimed`` -> ``waiting_for_agent``) and the
  fallback timer is set again for 24 hours after the turn was first parked.
- ``fallback`` due: the system negotiator takes the parked turn.
- ``timeout`` due (personal vs personal): the negotiation stalls (reason ``timeout``).

Each firing is a compare-and-set against the version the timer was set at; a timer whose
negotiation has moved on is cancelled instead, so no timer acts twice or on a later turn.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta
from typing import Any

from ...accounts import list_accounts, validate_account
from ...config import Settings
from ...db import Database
from ...errors import MaxyError
from ...graph.leases import Heartbeat, Leases, run_round
from ...logs import log_line, short
from . import state as st
from .engine import Negotiations
from .timers import Timer

MAX_ROUNDS = 10  # a claim expiring past its fallback fires both in one sweep
LEASE = "negotiation-sweep"
MIN_LEASE_TTL_S = 2.0


def lease_ttl_s(interval_s: float) -> float:
    """Two intervals (at least 2 s): renewed every third of it while a round runs, so a slow
    database stalls a renewal without losing the round; a replica killed mid-round delays the
    next round by at most two intervals."""
    return max(2 * interval_s, MIN_LEASE_TTL_S)


def _fire(negotiations: Negotiations, timer: Timer) -> str:
    """Fire one due timer; what happened: fired, stale or busy."""
    n = st.load(negotiations.db, negotiations.view, timer.negotiation_id)
    if n is None:
        return "stale"
    writer = negotiations.writer
    if timer.kind == "timeout":
        if n.state in ("completed", "finalizing"):
            st.cancel_timer(writer, n.id, "timeout", timer.version)
            return "stale"
        if n.state == "working" and n["leaseUntil"] and datetime.fromisoformat(n["leaseUntil"]) > negotiations.now():
            return "busy"  # a turn is being taken right now: the next sweep stalls it
        off = {"state": "cancelled"}
        st.change(
            writer,
            n,
            states=frozenset({"working", "waiting_for_agent", "claimed"}),
            props={"state": "working", "timedOut": True, "claimedBy": None, "waitingMemberId": None},
            timers={"timeout": {"state": "fired"}, "fallback": off, "claim": off},
        )
        negotiations.advance(n.id)
        return "fired"
    if n.version != timer.version:
        st.cancel_timer(writer, n.id, timer.kind, timer.version)
        return "stale"
    if timer.kind == "claim" and n.state == "claimed":
        first = n["firstParkedAt"] or negotiations.now().isoformat()
        fallback_due = (datetime.fromisoformat(first) + timedelta(hours=24)).isoformat()
        claimed = st.change(
            writer,
            n,
            states=frozenset({"claimed"}),
            props={"state": "waiting_for_agent", "claimedBy": None, "claimedAt": None, "claimDeadline": None},
            timers={
                "claim": {"state": "fired"},
                "fallback": {"state": "scheduled", "dueAt": fallback_due, "version": n.version + 1},
            },
        )
        negotiations._progress(claimed)
        log_line("negotiation", op="claim-expired", negotiation=short(n.id), agent=short(n["claimedBy"]))
        return "fired"
    if timer.kind == "fallback" and n.state == "waiting_for_agent":
        st.change(
            writer,
            n,
            states=frozenset({"waiting_for_agent"}),
            props={"state": "working", "takeoverTurn": len(n.turns), "waitingMemberId": None},
            timers={"fallback": {"state": "fired"}},
        )
        log_line("negotiation", op="fallback", negotiation=short(n.id), member=n["waitingMemberId"])
        negotiations.advance(n.id)
        return "fired"
    st.cancel_timer(writer, n.id, timer.kind, timer.version)
    return "stale"


def sweep(negotiations: Negotiations) -> dict[str, Any]:
    """Fire every due timer and resume every lapsed negotiation once; a summary of what it did."""
    fired: list[dict[str, str]] = []
    stale = busy = 0
    for _ in range(MAX_ROUNDS):
        now = negotiations.now().isoformat()
        due = st.due_timers(negotiations.db, negotiations.view, now)
        acted = False
        for timer in due:
            try:
                result = _fire(negotiations, timer)
            except st.Stale:
                result = "stale"  # it moved while we looked: the next round sees it as it is
            if result == "fired":
                fired.append({"negotiationId": timer.negotiation_id, "kind": timer.kind})
                acted = True
            elif result == "stale":
                stale += 1
                acted = True
            else:
                busy += 1
        if not acted:
            break
    resumed = []
    for nid in st.lapsed(negotiations.db, negotiations.view, negotiations.now().isoformat()):
        negotiations.advance(nid)
        resumed.append(nid)
    summary = {"fired": fired, "resumed": resumed, "staleTimers": stale, "busy": busy}
    log_line(
        "negotiation",
        op="sweep",
        accountId=short(negotiations.account.account_id),
        fired=len(fired),
        resumed=len(resumed),
        stale=stale,
        busy=busy,
    )
    return summary


class SweepLoop:
    """``maxy serve``'s background sweep of every account: every ``interval_s`` (default
    ``MAXY_SWEEP_INTERVAL_S``) it asks for the ``negotiation-sweep`` lease, which a round gets only
    when no replica started one within the last interval; the replica that gets it sweeps."""

    def __init__(
        self, settings: Settings, db: Database, embedder: Any, interval_s: float | None = None, lease: str = LEASE
    ):
        self.settings = settings
        self.db = db
        self.embedder = embedder
        self.interval_s = settings.MAXY_SWEEP_INTERVAL_S if interval_s is None else interval_s
        self.ttl_s = lease_ttl_s(self.interval_s)
        self.lease = lease
        self.leases = Leases(db)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="negotiation-sweep", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                run_round(self.leases, self.lease, self._round, ttl_s=self.ttl_s, every_s=self.interval_s)
            except MaxyError as err:  # the database is down: the next round tries again
                log_line("negotiation", "sweep-failed", error=str(err)[:200])

    def _round(self, beat: Heartbeat) -> None:
        for entry in list_accounts(self.settings.data_root):
            if beat.lost.is_set() or self._stop.is_set():
                return  # another replica has the lease now (or the server stops): it carries on
            try:
                account = validate_account(self.settings.data_root, entry.account_id)
                sweep(Negotiations(self.db, account, self.settings, embedder=self.embedder))
            except (MaxyError, OSError) as err:  # the next round tries again
                log_line("negotiation", "sweep-failed", accountId=short(entry.account_id), error=str(err)[:200])
