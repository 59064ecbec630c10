"""Evaluation of (source, candidate) pairs by the opportunity evaluator: a score 0-100,
reasoning and the candidate's valency role for each. When the model cannot be asked (no key, a
timeout, an unreadable answer) each pair gets its similarity as the score, a role read off the
intent types, and says so (degraded, with the reason)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ...config import Settings
from ...llm import LLMUnavailable
from ..intents.model import ask
from .prompts import EVALUATE_TOOL, EVALUATOR_SYSTEM, evaluate_prompt
from .ranking import ROLES, Candidate, Evaluation, role_from_types, similarity_score

MAX_REASONING = 1500


def evaluations_from(answer: Mapping[str, Any], count: int) -> list[Evaluation | None]:
    """The evaluator's answer, one entry per candidate number (None for a candidate it left
    out or answered unreadably: no opportunity)."""
    raw = answer.get("evaluations")
    if not isinstance(raw, list):
        raise LLMUnavailable("the evaluator's evaluations are not a list")
    out: list[Evaluation | None] = [None] * count
    for item in raw:
        if not isinstance(item, Mapping):
            continue
        n, score, role = item.get("candidate"), item.get("score"), item.get("role")
        if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n < count or out[n] is not None:
            continue
        if isinstance(score, bool) or not isinstance(score, (int, float)) or math.isnan(score) or role not in ROLES:
            continue
        reasoning = str(item.get("reasoning") or "").strip()[:MAX_REASONING] or "The evaluator gave no reasoning."
        out[n] = Evaluation(max(0, min(100, round(score))), reasoning, role)
    return out


def fallback(candidate: Candidate, source_type: str | None, reason: str) -> Evaluation:
    role = role_from_types(source_type, candidate.candidate_intent_type)
    return Evaluation(
        similarity_score(candidate.similarity),
        f"Scored by similarity alone ({candidate.similarity:.2f}, via {candidate.via}): the evaluator "
        f"was not available ({reason}).",
        role,
        degraded=True,
        reason=reason,
    )


def evaluate(
    settings: Settings,
    source_text: str,
    source_profile: Mapping[str, Any] | None,
    source_type: str | None,
    candidates: Sequence[Candidate],
    contexts: Mapping[str, Mapping[str, Any]],
) -> list[tuple[Candidate, Evaluation]]:
    """Each candidate with its evaluation; the model is asked once about every distinct
    candidate member (``contexts``: member id -> {profile, intents})."""
    if not candidates:
        return []
    members = list(dict.fromkeys(c.candidate_member_id for c in candidates))
    try:
        answer = ask(
            settings,
            "opportunity-evaluator",
            system=EVALUATOR_SYSTEM,
            prompt=evaluate_prompt(source_text, source_profile, [contexts.get(m, {}) for m in members]),
            tool=EVALUATE_TOOL,
        )
        by_member = dict(zip(members, evaluations_from(answer, len(members)), strict=True))
    except LLMUnavailable as err:
        return [(c, fallback(c, source_type, err.reason)) for c in candidates]
    none = Evaluation(0, "The evaluator gave this candidate no evaluation.", "peer")
    return [(c, by_member.get(c.candidate_member_id) or none) for c in candidates]
