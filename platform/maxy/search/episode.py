"""EPISODE: facts that became true at the same instant lend each other support.

Facts an agent writes with one ``validFrom`` were usually recorded together: one conversation,
one meeting, one event. When a question matches one of them well, its siblings are likely part
of the answer (the other half of a multi-part answer, the detail a paraphrase missed). Each
fused hit with a ``validFrom`` gains ``SIBLING_SUPPORT`` x the best fused score among the other
hits sharing that instant; a hit alone at its instant, and anything without ``validFrom``
(documents, messages, entities), is left as it is. Pure: the paths return ``validFrom``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from .hits import Hit

SIBLING_SUPPORT = 0.3


def support(hits: Sequence[Hit]) -> int:
    """Apply the sibling support; returns how many hits gained some."""
    groups: dict[str, list[Hit]] = defaultdict(list)
    for h in hits:
        if h.valid_from:
            groups[h.valid_from].append(h)
    supported = 0
    for members in groups.values():
        if len(members) < 2:
            continue
        ranked = sorted(members, key=lambda h: -h.score)
        best, runner_up = ranked[0].score, ranked[1].score
        for h in members:
            h.score += SIBLING_SUPPORT * (runner_up if h is ranked[0] else best)
        supported += len(members)
    return supported
