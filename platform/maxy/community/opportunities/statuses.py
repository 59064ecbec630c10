"""The statuses of an opportunity and the one table of moves between them.

    latent -> draft -> pending -> accepted | rejected | expired   (discovery, then a send)
    negotiating -> pending | rejected | stalled                   (a negotiation's outcome)

Discovery stores an opportunity ``latent`` (ambient) or ``negotiating`` (a negotiation starts
on it at once); sending promotes ``latent`` or ``draft`` to ``pending``; the member it was sent
to accepts or rejects a ``pending`` one. A stalled negotiation may be negotiated again.
"""

from __future__ import annotations

from ...errors import ValidationError

STATUSES: tuple[str, ...] = (
    "latent",
    "draft",
    "negotiating",
    "pending",
    "accepted",
    "rejected",
    "stalled",
    "expired",
)

TRANSITIONS: dict[str, tuple[str, ...]] = {
    "latent": ("draft", "pending", "negotiating", "expired"),
    "draft": ("pending", "negotiating", "expired"),
    "negotiating": ("pending", "rejected", "stalled", "expired"),
    "pending": ("accepted", "rejected", "expired"),
    "stalled": ("negotiating", "expired"),
    "accepted": (),
    "rejected": (),
    "expired": (),
}

FINISHED: frozenset[str] = frozenset(s for s, targets in TRANSITIONS.items() if not targets)
# Opportunities still in play: a rediscovery of the same pair in the same network reports them.
OPEN: frozenset[str] = frozenset({"latent", "draft", "negotiating", "pending", "stalled"})
SENDABLE: frozenset[str] = frozenset({"latent", "draft"})
# Where a negotiation's outcome moves its opportunity (003: has an opportunity, rejected, stalled).
OUTCOME_STATUS = {"accepted": "pending", "rejected": "rejected", "stalled": "stalled"}


def check_status(value: object, field: str = "status") -> str:
    if not isinstance(value, str) or value not in TRANSITIONS:
        raise ValidationError(field, f"one of {', '.join(STATUSES)} (got {value!r})")
    return value


def allowed(from_status: str, to_status: str) -> bool:
    """True when the table has the move ``from_status -> to_status``."""
    return to_status in TRANSITIONS.get(from_status, ())


def check_transition(from_status: str, to_status: str, field: str = "status") -> None:
    """Refuse a move the table does not have, naming the moves it does."""
    if allowed(from_status, to_status):
        return
    targets = TRANSITIONS.get(from_status, ())
    way = f"from {from_status} it may move to {', '.join(targets)}" if targets else f"{from_status} is final"
    raise ValidationError(field, f"an opportunity cannot move from {from_status} to {to_status}: {way}")
