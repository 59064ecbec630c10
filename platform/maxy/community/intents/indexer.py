"""The indexer: how well an intent fits a network, from the network's prompt (its purpose) and
the member's prompt for that network. Each is scored 0-1 by the model; with both prompts the
final score is 0.6 * index + 0.4 * member, with one prompt that one's score, and the intent is
assigned when the final score reaches 0.7."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ...config import Settings
from ...llm import LLMUnavailable
from .model import ask
from .prompts import INDEX_TOOL, INDEXER_SYSTEM, index_prompt

THRESHOLD = 0.7
INDEX_WEIGHT = 0.6
MEMBER_WEIGHT = 0.4
DIRECT_SCORE = 1.0


@dataclass(frozen=True)
class IndexScore:
    index_score: float | None
    member_score: float | None
    final: float
    reasoning: str = ""

    @property
    def assign(self) -> bool:
        return self.final >= THRESHOLD


def final_score(index_score: float | None, member_score: float | None) -> float:
    """0.6 / 0.4 when both prompts were scored, else the one present (0 with neither)."""
    if index_score is not None and member_score is not None:
        return round(INDEX_WEIGHT * index_score + MEMBER_WEIGHT * member_score, 4)
    present = index_score if index_score is not None else member_score
    return 0.0 if present is None else round(present, 4)


def _unit(answer: dict[str, Any], key: str) -> float:
    value = answer.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise LLMUnavailable(f"the indexer's {key} is not a number")
    return max(0.0, min(1.0, float(value)))


def score(
    settings: Settings, description: str, intent_type: str, network_prompt: str | None, member_prompt: str | None
) -> IndexScore:
    """The indexer's scores for one intent and network (at least one prompt must be given);
    LLMUnavailable when the model cannot be asked or its answer cannot be read."""
    answer = ask(
        settings,
        "intent-indexer",
        system=INDEXER_SYSTEM,
        prompt=index_prompt(description, intent_type, network_prompt, member_prompt),
        tool=INDEX_TOOL,
    )
    index = _unit(answer, "indexScore") if network_prompt else None
    member = _unit(answer, "memberScore") if member_prompt else None
    return IndexScore(index, member, final_score(index, member), str(answer.get("reasoning") or "")[:500])
