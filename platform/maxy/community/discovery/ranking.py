"""Merging, scoring bands and ranking of discovery candidates, as pure functions over plain data.

A candidate is one (source member, candidate member, network) triple found by a lens; the same
triple found again (another lens, another corpus) keeps its best similarity. The evaluator's
score puts a pair in a band (90-100 must-meet, 70-89 should-meet, below 70 no opportunity);
ranking keeps one network per pair (the best score, then the network the source intent is most
relevant to, then the best similarity) and sorts by score.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

MUST_MEET = 90
SHOULD_MEET = 70
ROLES = ("agent", "patient", "peer")
_COMPLEMENT = {"agent": "patient", "patient": "agent", "peer": "peer"}


def band(score: int) -> str | None:
    """must-meet (90+), should-meet (70-89) or None (no opportunity)."""
    if score >= MUST_MEET:
        return "must-meet"
    if score >= SHOULD_MEET:
        return "should-meet"
    return None


def complement(role: str) -> str:
    """The source's role given the candidate's: a candidate who acts for the source (agent)
    makes the source the patient, and the other way round; peers stay peers."""
    return _COMPLEMENT[role]


def role_from_types(source_type: str | None, candidate_type: str | None) -> str:
    """The candidate's role read off intent types alone (the evaluator's fallback): an offer
    meeting the source's need acts for it, a need meeting the source's offer receives."""
    if source_type == "seeking" and candidate_type == "offering":
        return "agent"
    if source_type == "offering" and candidate_type == "seeking":
        return "patient"
    return "peer"


def similarity_score(similarity: float) -> int:
    """A cosine similarity as a 0-100 score (the evaluator's fallback)."""
    return max(0, min(100, round(similarity * 100)))


@dataclass(frozen=True)
class Candidate:
    source_member_id: str
    candidate_member_id: str
    network_id: str
    similarity: float
    via: str  # profile | profile-hyde | intent | direct
    lens: str | None = None
    candidate_intent_id: str | None = None
    candidate_intent_type: str | None = None
    relevancy: float = 0.0  # how relevant the source intent is to this network (its assignment score)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.source_member_id, self.candidate_member_id, self.network_id)

    @property
    def pair(self) -> tuple[str, str]:
        return (self.source_member_id, self.candidate_member_id)


@dataclass(frozen=True)
class Evaluation:
    score: int
    reasoning: str
    candidate_role: str
    degraded: bool = False
    reason: str | None = None  # why the evaluator was not used, when degraded

    @property
    def band(self) -> str | None:
        return band(self.score)


@dataclass(frozen=True)
class Ranked:
    candidate: Candidate
    evaluation: Evaluation
    explain: dict[str, Any] = field(default_factory=dict)

    @property
    def source_role(self) -> str:
        return complement(self.evaluation.candidate_role)


def merge(candidates: Iterable[Candidate]) -> list[Candidate]:
    """One candidate per (source, candidate, network), the one with the best similarity (an
    intent match before a profile match at equal similarity), in first-seen order."""
    best: dict[tuple[str, str, str], Candidate] = {}
    for c in candidates:
        if c.source_member_id == c.candidate_member_id:
            continue
        held = best.get(c.key)
        if held is None or (c.similarity, c.via == "intent") > (held.similarity, held.via == "intent"):
            best[c.key] = c
    return list(best.values())


def rank(evaluated: Sequence[tuple[Candidate, Evaluation]], limit: int) -> list[Ranked]:
    """The pairs with an opportunity (score 70+), one network each, best first."""
    by_pair: dict[tuple[str, str], tuple[Candidate, Evaluation]] = {}
    for c, e in evaluated:
        if e.band is None:
            continue
        held = by_pair.get(c.pair)
        if held is None or (e.score, c.relevancy, c.similarity) > (
            held[1].score,
            held[0].relevancy,
            held[0].similarity,
        ):
            by_pair[c.pair] = (c, e)
    ordered = sorted(by_pair.values(), key=lambda ce: (-ce[1].score, -ce[0].similarity, ce[0].candidate_member_id))
    return [
        Ranked(
            c,
            e,
            {"similarity": round(c.similarity, 4), "via": c.via, "lens": c.lens, "relevancy": c.relevancy},
        )
        for c, e in ordered[:limit]
    ]
