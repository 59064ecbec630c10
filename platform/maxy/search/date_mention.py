"""DATE MENTION: a query that names a calendar day favours what happened on that day.

"What did Maria share on 16 June, 2023?" names a day; among the fused hits, those whose event
time (``Hit.happened``: a fact's ``validFrom``, a message's ``timestamp``, else when it was
recorded, as the retrieval paths return it) falls within a day of it gain ``DATE_BOOST``. Queries without a full date (day, month and year)
are left alone, and cost nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date, datetime

from .hits import Hit

DATE_BOOST = 0.2
WITHIN_DAYS = 1

_MONTHS = "january february march april may june july august september october november december".split()
_MONTH = "|".join(_MONTHS + ["sept"] + [m[:3] for m in _MONTHS])
_PATTERNS = (
    re.compile(rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<m>{_MONTH})\.?,?\s+(?P<y>\d{{4}})\b", re.I),
    re.compile(rf"\b(?P<m>{_MONTH})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y>\d{{4}})\b", re.I),
    re.compile(r"\b(?P<y>\d{4})-(?P<mm>\d{2})-(?P<d>\d{2})\b"),
)


def mentioned_days(query: str) -> list[date]:
    """The calendar days ``query`` names in full (``16 June 2023``, ``June 16, 2023``, ``2023-06-16``)."""
    days = []
    for pattern in _PATTERNS:
        for m in pattern.finditer(query):
            parts = m.groupdict()
            month = int(parts["mm"]) if parts.get("mm") else _MONTHS.index(_full_month(parts["m"])) + 1
            try:
                days.append(date(int(parts["y"]), month, int(parts["d"])))
            except ValueError:
                continue
    return sorted(set(days))


def _full_month(name: str) -> str:
    lowered = name.lower()
    return next(m for m in _MONTHS if m.startswith(lowered[:3]))


def favour(hits: Sequence[Hit], query: str) -> int:
    """Add ``DATE_BOOST`` to the hits that happened within a day of a day the query names;
    returns how many gained it."""
    days = mentioned_days(query)
    if not days:
        return 0
    favoured = 0
    for h in hits:
        day = _day(h.happened)
        if day is not None and any(abs((day - d).days) <= WITHIN_DAYS for d in days):
            h.score += DATE_BOOST
            favoured += 1
    return favoured


def _day(value: object) -> date | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value[:19]).date()
    except ValueError:
        return None
