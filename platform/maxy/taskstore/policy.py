"""When a failed attempt is retried, how long to wait, and when the circuit opens.

Failures count from the last time the circuit was closed by a reset (a task starts closed):
the first two are retried on the same runtime after a bounded exponential backoff, the
third attempt may run on a stronger runtime (``escalate``), and after a third failure no
fourth attempt starts: the circuit opens. A spec gate that keeps finding a mismatch opens it
too, on the third mismatch after two rework loops. Pure functions; the store persists what
they decide.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

BACKOFF_BASE_S = 30.0
BACKOFF_CAP_S = 600.0
MAX_FAILED_ATTEMPTS = 3  # this many failures since the last reset open the circuit
MAX_SPEC_REWORKS = 2  # rework loops from spec_gate before another mismatch opens the circuit
STALE_AFTER_S = 600.0  # a running attempt silent this long may be superseded by the orchestrator


@dataclass(frozen=True)
class Decision:
    """What to do after a failure: ``retry`` after ``backoff_s`` (``escalate``: the next attempt may
    run on a stronger runtime), or ``open_circuit``."""

    action: Literal["retry", "open_circuit"]
    backoff_s: float
    escalate: bool

    def as_dict(self) -> dict[str, object]:
        return {"action": self.action, "backoffS": self.backoff_s, "escalate": self.escalate}


def decide(failed_attempts: int, *, base_s: float = BACKOFF_BASE_S, cap_s: float = BACKOFF_CAP_S) -> Decision:
    """The decision after ``failed_attempts`` failures since the last reset."""
    if failed_attempts >= MAX_FAILED_ATTEMPTS:
        return Decision("open_circuit", 0.0, False)
    backoff = 0.0 if failed_attempts <= 0 else min(cap_s, base_s * 2 ** (failed_attempts - 1))
    return Decision("retry", backoff, failed_attempts == MAX_FAILED_ATTEMPTS - 1)


def may_start_attempt(failed_attempts: int) -> bool:
    """A new attempt starts only while the failures since the last reset are below the limit."""
    return failed_attempts < MAX_FAILED_ATTEMPTS


def spec_mismatch(reworks: int) -> Literal["rework", "open_circuit"]:
    """After a spec gate mismatch, with ``reworks`` loops from spec_gate since the last reset."""
    return "rework" if reworks < MAX_SPEC_REWORKS else "open_circuit"


@dataclass(frozen=True)
class RetryPolicy:
    """The policy's knobs (tests run with ``base_s=0``)."""

    base_s: float = BACKOFF_BASE_S
    cap_s: float = BACKOFF_CAP_S
    stale_after_s: float = STALE_AFTER_S

    def __post_init__(self) -> None:
        if self.base_s < 0 or self.cap_s < 0 or self.stale_after_s < 0:
            raise ValueError("RetryPolicy: base_s, cap_s and stale_after_s are seconds >= 0")

    def decide(self, failed_attempts: int) -> Decision:
        return decide(failed_attempts, base_s=self.base_s, cap_s=self.cap_s)
