"""Folds of the evaluation questions, and every figure as a mean and a spread over them.

A figure measured once on a small development split moves by a point when a few questions
change, so each evaluation also reports it per fold. Folds depend only on what each question
is, never on the order of the files:

- SciFact (BEIR): a query goes to fold ``sha256(query id) mod K``.
- LoCoMo: folds never mix conversations. Each conversation's sessions are cut into ``parts``
  consecutive runs (about K folds in all, at least one per conversation: with three
  conversations and K = 5, an early and a late half each, six folds), and a question goes to
  the part holding the session of its earliest evidence turn (``D<session>:<turn>``). A
  conversation's sessions are those its questions name, so every command that reads the same
  ``questions.jsonl`` draws the same folds.
"""

from __future__ import annotations

import hashlib
import math
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

DEFAULT_FOLDS = 5
_SESSION = re.compile(r"D(\d+):")


def hash_fold(key: str, k: int) -> int:
    """The fold of ``key`` among ``k``: a stable hash, the same on every machine and run."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big") % k


def query_folds(ids: Iterable[str], k: int) -> dict[str, str]:
    """Each query id's fold label (``"0"`` .. ``"k-1"``)."""
    return {qid: str(hash_fold(qid, k)) for qid in ids}


def evidence_session(evidence: Iterable[Any]) -> int | None:
    """The session of the earliest evidence turn (``D3:7`` is in session 3); None when no id names one."""
    sessions = [int(m.group(1)) for e in evidence if (m := _SESSION.match(str(e)))]
    return min(sessions) if sessions else None


def conversation_sessions(questions: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Per conversation, the highest session its questions' evidence names (at least 1)."""
    last: dict[str, int] = {}
    for q in questions:
        sessions = [int(m.group(1)) for e in q.get("evidence") or () if (m := _SESSION.match(str(e)))]
        conversation = str(q.get("conversation"))
        last[conversation] = max([last.get(conversation, 1), *sessions])
    return last


def parts_per_conversation(conversations: int, k: int) -> int:
    """How many runs of sessions each conversation is cut into so that there are about ``k`` folds."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    return max(1, round(k / max(conversations, 1)))


def conversation_folds(questions: Sequence[Mapping[str, Any]], k: int, last_session: Mapping[str, int]) -> list[str]:
    """The fold label of each question (``"conv-26 early"``, ``"conv-26 late"``, or
    ``"conv-26 3/4"`` for more parts), aligned with ``questions``. A question whose evidence names
    no session goes to its conversation's first part."""
    parts = parts_per_conversation(len(last_session), k)
    labels = []
    for q in questions:
        conversation = str(q.get("conversation"))
        session = evidence_session(q.get("evidence") or ()) or 1
        sessions = max(last_session.get(conversation, 1), session)
        part = min(parts - 1, (session - 1) * parts // sessions)
        labels.append(f"{conversation} {_part_name(part, parts)}")
    return labels


def _part_name(part: int, parts: int) -> str:
    if parts == 1:
        return "all"
    if parts == 2:
        return ("early", "late")[part]
    return f"{part + 1}/{parts}"


@dataclass(frozen=True)
class Spread:
    """A figure over folds: the mean of the folds' values, their range and standard deviation
    (the sample's, n - 1; 0 for a single fold)."""

    mean: float
    low: float
    high: float
    sd: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        if not values:
            raise ValueError("no values to summarise")
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        return cls(statistics.fmean(values), min(values), max(values), sd)

    def to_json(self) -> dict[str, float]:
        return {
            "mean": round(self.mean, 4),
            "min": round(self.low, 4),
            "max": round(self.high, 4),
            "sd": round(self.sd, 4),
        }


def by_group(per_item: Sequence[Mapping[str, float]], labels: Sequence[str]) -> dict[str, dict[str, float]]:
    """Each group's mean of every figure, and its ``questions``; groups in sorted order."""
    if len(per_item) != len(labels):
        raise ValueError(f"{len(per_item)} items but {len(labels)} labels")
    grouped: dict[str, list[Mapping[str, float]]] = {}
    for item, label in zip(per_item, labels, strict=True):
        grouped.setdefault(label, []).append(item)
    out = {}
    for label in sorted(grouped, key=_natural):
        items = grouped[label]
        out[label] = {key: round(math.fsum(i[key] for i in items) / len(items), 4) for key in items[0]}
        out[label]["questions"] = len(items)
    return out


def _natural(label: str) -> tuple[Any, ...]:
    """Fold labels in reading order: ``2`` before ``10``, ``early`` before ``late``."""
    order = {"early": 0, "late": 1}
    return tuple((0, int(p), "") if p.isdigit() else (1, order.get(p, 2), p) for p in re.split(r"[ /]", label) if p)


def spread_report(per_item: Sequence[Mapping[str, float]], labels: Sequence[str], *, how: str) -> dict[str, Any]:
    """Every figure's mean and spread over the groups ``labels`` draws, and each group's values."""
    groups = by_group(per_item, labels)
    keys = [k for k in per_item[0] if k != "questions"] if per_item else []
    return {
        "folds": len(groups),
        "by": how,
        "figures": {k: Spread.of([g[k] for g in groups.values()]).to_json() for k in keys},
        "per_fold": groups,
    }


def conversation_report(
    per_item: Sequence[Mapping[str, float]],
    questions: Sequence[Mapping[str, Any]],
    k: int,
    last_session: Mapping[str, int],
) -> dict[str, Any]:
    """LoCoMo's folds (conversation x run of sessions) and the spread across whole conversations."""
    labels = conversation_folds(questions, k, last_session)
    parts = parts_per_conversation(len(last_session), k)
    folds = spread_report(per_item, labels, how=f"conversation x {parts} run(s) of its sessions")
    folds["conversations"] = spread_report(
        per_item, [str(q.get("conversation")) for q in questions], how="conversation"
    )
    return folds
