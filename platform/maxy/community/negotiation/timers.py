"""Durable timers of a negotiation: what is due, and when a new one falls due.

Each negotiation has three timer nodes in the graph (``NegotiationTimer``), one per kind:

- ``fallback``  a parked turn nobody claimed: the system negotiator takes it (24 hours after parking)
- ``claim``     a claimed turn nobody answered: it returns to the queue (6 hours after the pickup)
- ``timeout``   personal vs personal: the negotiation stalls (24 hours after it started)

A timer is ``idle`` until scheduled, then ``scheduled`` with its ``dueAt`` and the negotiation
``version`` it was set at, then ``fired`` or ``cancelled``. A timer fires only while the
negotiation is still at that version, so a timer left over from an earlier turn never acts on a
later one. Due times are compared with a clock the caller passes (tests move it forward).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

FALLBACK_S = 24 * 3600
CLAIM_S = 6 * 3600
TIMEOUT_S = 24 * 3600
KINDS: tuple[str, ...] = ("fallback", "claim", "timeout")
STATES: tuple[str, ...] = ("idle", "scheduled", "fired", "cancelled")

Clock = Callable[[], datetime]


def system_clock() -> datetime:
    return datetime.now(UTC)


def timer_id(negotiation_id: str, kind: str) -> str:
    return f"{negotiation_id}:{kind}"


def due_at(now: datetime, kind: str) -> str:
    seconds = {"fallback": FALLBACK_S, "claim": CLAIM_S, "timeout": TIMEOUT_S}[kind]
    return (now + timedelta(seconds=seconds)).isoformat()


@dataclass(frozen=True)
class Timer:
    negotiation_id: str
    kind: str
    state: str
    due: str | None
    version: int | None

    def is_due(self, now: datetime) -> bool:
        """Scheduled and its time has come."""
        return self.state == "scheduled" and self.due is not None and datetime.fromisoformat(self.due) <= now


def due(timers: list[Timer], now: datetime) -> list[Timer]:
    """The timers due at ``now``, the earliest first."""
    return sorted((t for t in timers if t.is_due(now)), key=lambda t: (t.due or "", t.kind))
