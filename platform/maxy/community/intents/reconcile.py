"""Reconciliation of verified intents against the member's active ones, as pure functions over
plain data: the reconciler's actions checked (an update or expire must name an active intent,
a create or update a new one), and the rule used when the model cannot be asked (each new intent
is created unless an active one of the same type already says exactly the same)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

ACTIONS = ("create", "update", "expire")


@dataclass(frozen=True)
class Action:
    action: str  # create | update | expire
    candidate: int | None = None  # index into the new intents (create, update)
    intent_id: str | None = None  # the active intent (update, expire)
    reasoning: str = ""


def same_text(a: str, b: str) -> bool:
    """Equal once case, spacing and punctuation are set aside."""

    def norm(s: str) -> str:
        return " ".join(re.sub(r"[^\w\s]", " ", s.lower()).split())

    return norm(a) == norm(b)


def checked_actions(
    raw: Sequence[Any], candidates: Sequence[Mapping[str, Any]], active_ids: Sequence[str]
) -> tuple[list[Action], int]:
    """The reconciler's actions that can be carried out, and how many were set aside (unknown
    action, an intent id that is not one of the member's active ones, a missing or repeated
    candidate, the same active intent touched twice)."""
    out: list[Action] = []
    used_candidates: set[int] = set()
    used_ids: set[str] = set()
    dropped = 0
    for item in raw:
        if not isinstance(item, Mapping) or item.get("action") not in ACTIONS:
            dropped += 1
            continue
        kind = str(item["action"])
        cand = item.get("candidate")
        cand = cand if isinstance(cand, int) and not isinstance(cand, bool) and 0 <= cand < len(candidates) else None
        intent_id = item.get("intentId") if item.get("intentId") in active_ids else None
        needs_candidate = kind in ("create", "update")
        needs_id = kind in ("update", "expire")
        if (needs_candidate and (cand is None or cand in used_candidates)) or (
            needs_id and (intent_id is None or intent_id in used_ids)
        ):
            dropped += 1
            continue
        if needs_candidate and cand is not None:
            used_candidates.add(cand)
        if needs_id and intent_id is not None:
            used_ids.add(intent_id)
        out.append(
            Action(
                kind,
                cand if needs_candidate else None,
                intent_id if needs_id else None,
                str(item.get("reasoning") or "")[:500],
            )
        )
    return out, dropped


def rule_actions(
    candidates: Sequence[Mapping[str, Any]], active: Sequence[Mapping[str, Any]], targets: Sequence[str] = ()
) -> list[Action]:
    """Without the model: in update mode (``targets``) the first new intent replaces the first
    target in place; otherwise each new intent is created unless an active intent of the same
    type says the same."""
    if targets:
        return [Action("update", 0, targets[0], "updated as written")] if candidates else []
    actions = []
    for i, c in enumerate(candidates):
        repeat = any(a["type"] == c["type"] and same_text(a["description"], c["description"]) for a in active)
        if not repeat and not any(same_text(candidates[j]["description"], c["description"]) for j in range(i)):
            actions.append(Action("create", i, None, "created as written"))
    return actions
