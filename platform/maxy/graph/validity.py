"""When a fact was true: ``validFrom`` / ``validUntil`` beside when it was recorded (``createdAt``).

Both are stored as UTC ISO 8601 text with second precision (``2023-05-08T13:56:00+00:00``), so
comparing them as strings compares the instants. A node without ``validUntil`` is still true; a
superseded node carries the ``validUntil`` its successor set and a ``SUPERSEDED_BY`` edge.

``validity_clause`` is the read-side filter, used beside the guards by search and by reads of a
node's neighbourhood:

- default: what is true now (no ``validUntil`` at or before now);
- ``as_of``: what was true at that instant (``validFrom`` at or before it, ``validUntil`` after it);
- ``include_history``: no filter, superseded and expired facts included.

``time_window_clause`` is the ``after`` / ``before`` filter on when something happened: a fact's
``validFrom``, a message's ``timestamp``, else when it was recorded.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from typing import Any

from ..errors import ValidationError
from .guards import Guard

_VAR_RE = re.compile(r"^[a-z][A-Za-z0-9_]{0,30}$")
# When something happened, for the after/before window: the first of these that is set.
EVENT_TIME = ("validFrom", "timestamp", "createdAt")


def to_instant(value: object, field: str) -> str:
    """A date or date-time (ISO 8601 text, ``date`` or ``datetime``) as stored UTC text; a
    value without a time zone is taken as UTC, a bare date as its midnight."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    elif isinstance(value, str) and value.strip():
        text = value.strip()
        try:
            moment = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
        except ValueError:
            raise ValidationError(
                field, f"{value!r} is not an ISO 8601 date or date-time (e.g. 2024-03-01 or 2024-03-01T09:30:00Z)"
            ) from None
    else:
        raise ValidationError(field, "an ISO 8601 date or date-time (e.g. 2024-03-01 or 2024-03-01T09:30:00Z)")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC).isoformat(timespec="seconds")
    except OverflowError:  # 9999-12-31T23:59-01:00 is past the last instant Python holds
        raise ValidationError(field, f"{value!r} is outside the years 1 to 9999 once turned into UTC") from None


def date_text(value: object) -> str | None:
    """A stored instant in words ("8 May 2023"), so a fact is found by the date a person would
    say; None when ``value`` is not an ISO 8601 date or date-time."""
    try:
        moment = datetime.fromisoformat(to_instant(value, "validFrom"))
    except ValidationError:
        return None
    return f"{moment.day} {moment:%B} {moment.year}"


def now_instant() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _var(var: str) -> str:
    if not _VAR_RE.match(var):
        raise ValidationError("var", f"invalid Cypher variable {var!r}")
    return var


def validity_clause(var: str = "n", *, as_of: str | None = None, include_history: bool = False) -> Guard:
    """The nodes true now (or at ``as_of``, stored-instant text); everything with ``include_history``."""
    v = _var(var)
    if include_history:
        return Guard("true")
    if as_of is None:
        return Guard(f"({v}.validUntil IS NULL OR {v}.validUntil > $t_now)", {"t_now": now_instant()})
    return Guard(
        f"({v}.validFrom IS NULL OR {v}.validFrom <= $t_asOf) AND ({v}.validUntil IS NULL OR {v}.validUntil > $t_asOf)",
        {"t_asOf": as_of},
    )


def event_time(var: str = "n") -> str:
    """The Cypher expression for when ``var`` happened (the first of ``EVENT_TIME`` that is set)."""
    v = _var(var)
    return f"coalesce({', '.join(f'{v}.{p}' for p in EVENT_TIME)})"


def time_window_clause(var: str = "n", *, after: str | None = None, before: str | None = None) -> Guard:
    """Nodes whose event time (``EVENT_TIME``) lies in [after, before); ``true`` without bounds."""
    moment = event_time(var)
    parts: list[str] = []
    params: dict[str, Any] = {}
    if after is not None:
        parts.append(f"{moment} >= $t_after")
        params["t_after"] = after
    if before is not None:
        parts.append(f"{moment} < $t_before")
        params["t_before"] = before
    return Guard(" AND ".join(parts) or "true", params)
