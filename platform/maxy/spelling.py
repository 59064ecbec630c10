"""``did you mean ...?``: the known names closest to a mistyped one (``Chunks`` -> ``Chunk``).

The same measure as the environment check (:mod:`maxy.envcheck`): difflib's ratio, here with
case set aside, since ``chunk`` for ``Chunk`` is the commonest slip of all.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

CLOSE = 0.75  # Chunks/Chunk 0.91, Persons/Person 0.92, Orgnization/Organization 0.96; Alien/Alert 0.60


def closest(name: str, known: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` names of ``known`` spelled close to ``name`` (case aside), closest first."""
    by_lower: dict[str, str] = {}
    for k in known:
        by_lower.setdefault(k.lower(), k)
    return [by_lower[m] for m in difflib.get_close_matches(name.lower(), by_lower, n=n, cutoff=CLOSE)]


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``did you mean Chunk?`` (``A or B``), or "" when nothing is close."""
    near = closest(name, known)
    return f"did you mean {' or '.join(near)}?" if near else ""
