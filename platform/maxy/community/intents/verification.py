"""Verification of an intent by speech-act theory, as pure rules over the verifier's answer.

An intent is kept when its speech act commits the speaker (COMMISSIVE: offering), directs
someone (DIRECTIVE: seeking) or declares (DECLARATION); ASSERTIVE and EXPRESSIVE utterances
(beliefs, feelings) are dropped. Felicity (authority, sincerity, clarity) is scored 0-100 and
semantic entropy 0-1; an intent is vague when its entropy is above 0.75 or its clarity below 40,
and a vague intent is enriched from the member's profile and verified again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ...llm import LLMUnavailable

KEPT_ACTS = ("COMMISSIVE", "DIRECTIVE", "DECLARATION")
DROPPED_ACTS = ("ASSERTIVE", "EXPRESSIVE")
SPEECH_ACTS = KEPT_ACTS + DROPPED_ACTS
VAGUE_ENTROPY = 0.75
VAGUE_CLARITY = 40
MAX_ENRICHED = 1000


def is_vague(entropy: float, clarity: int) -> bool:
    return entropy > VAGUE_ENTROPY or clarity < VAGUE_CLARITY


@dataclass(frozen=True)
class Verdict:
    """The verifier's reading of one intent."""

    speech_act: str
    authority: int
    sincerity: int
    clarity: int
    entropy: float
    reasoning: str = ""
    enriched: str | None = None  # a more specific description from the profile, when vague

    @property
    def kept(self) -> bool:
        return self.speech_act in KEPT_ACTS

    @property
    def vague(self) -> bool:
        return is_vague(self.entropy, self.clarity)

    def properties(self) -> dict[str, Any]:
        """The Intent node's verification properties."""
        return {
            "speechAct": self.speech_act,
            "felicityAuthority": self.authority,
            "felicitySincerity": self.sincerity,
            "felicityClarity": self.clarity,
            "entropy": self.entropy,
        }


def _score(answer: dict[str, Any], key: str) -> int:
    value = answer.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise LLMUnavailable(f"the verifier's {key} is not a number")
    return max(0, min(100, round(value)))


def verdict_from(answer: dict[str, Any]) -> Verdict:
    """The verifier tool call's input as a Verdict: scores clamped to their ranges, an unknown
    speech act or a missing score is an unreadable answer (LLMUnavailable)."""
    act = str(answer.get("speechAct", "")).strip().upper()
    if act not in SPEECH_ACTS:
        raise LLMUnavailable(f"the verifier's speech act {act[:40]!r} is not one of {', '.join(SPEECH_ACTS)}")
    felicity = answer.get("felicity")
    if not isinstance(felicity, dict):
        raise LLMUnavailable("the verifier's felicity is not an object")
    entropy = answer.get("entropy")
    if isinstance(entropy, bool) or not isinstance(entropy, (int, float)) or math.isnan(entropy):
        raise LLMUnavailable("the verifier's entropy is not a number")
    enriched = answer.get("enrichedDescription")
    enriched = enriched.strip()[:MAX_ENRICHED] if isinstance(enriched, str) and enriched.strip() else None
    return Verdict(
        speech_act=act,
        authority=_score(felicity, "authority"),
        sincerity=_score(felicity, "sincerity"),
        clarity=_score(felicity, "clarity"),
        entropy=round(max(0.0, min(1.0, float(entropy))), 3),
        reasoning=str(answer.get("reasoning") or "")[:1000],
        enriched=enriched,
    )
