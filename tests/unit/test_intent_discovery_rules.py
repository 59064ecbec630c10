"""The pure rules of the intent pipeline and discovery: verification, vagueness, the indexer's
weighting, reconciliation's checks, lens parsing, merging, bands, roles and ranking."""

from __future__ import annotations

import pytest
from maxy.community.discovery.evaluation import evaluations_from, fallback
from maxy.community.discovery.lenses import fallback_lenses, lenses_from
from maxy.community.discovery.ranking import Candidate, Evaluation, band, complement, merge, rank, role_from_types
from maxy.community.intents.indexer import THRESHOLD, IndexScore, final_score
from maxy.community.intents.reconcile import checked_actions, rule_actions
from maxy.community.intents.verification import is_vague, verdict_from
from maxy.llm import LLMUnavailable


def _verdict(act: str = "DIRECTIVE", clarity: int = 80, entropy: float = 0.2, **extra: object) -> dict:
    return {
        "speechAct": act,
        "felicity": {"authority": 70, "sincerity": 90, "clarity": clarity},
        "entropy": entropy,
    } | extra


@pytest.mark.parametrize("act", ["COMMISSIVE", "DIRECTIVE", "DECLARATION", "directive"])
def test_commissive_directive_and_declaration_are_kept(act: str) -> None:
    assert verdict_from(_verdict(act)).kept


@pytest.mark.parametrize("act", ["ASSERTIVE", "EXPRESSIVE"])
def test_assertive_and_expressive_are_dropped(act: str) -> None:
    assert not verdict_from(_verdict(act)).kept


def test_vague_at_the_thresholds() -> None:
    assert not is_vague(0.75, 40)
    assert is_vague(0.76, 40)
    assert is_vague(0.75, 39)
    v = verdict_from(_verdict(clarity=20, enrichedDescription="  a React role  "))
    assert v.vague and v.enriched == "a React role"


def test_an_unreadable_verdict_is_an_unavailable_model() -> None:
    with pytest.raises(LLMUnavailable):
        verdict_from(_verdict("QUESTION"))
    with pytest.raises(LLMUnavailable):
        verdict_from({"speechAct": "DIRECTIVE", "felicity": {"authority": 1, "sincerity": 1}, "entropy": 0.1})
    clamped = verdict_from(_verdict(clarity=250, entropy=3))
    assert (clamped.clarity, clamped.entropy) == (100, 1.0)


def test_indexer_weighting_and_threshold() -> None:
    assert final_score(0.8, 0.5) == pytest.approx(0.68)  # 0.6 * 0.8 + 0.4 * 0.5: below 0.7
    assert not IndexScore(0.8, 0.5, final_score(0.8, 0.5)).assign
    assert final_score(0.5, 1.0) == pytest.approx(0.7)
    assert IndexScore(0.5, 1.0, final_score(0.5, 1.0)).assign
    assert final_score(0.7, None) == pytest.approx(THRESHOLD)
    assert final_score(None, 0.69) == pytest.approx(0.69)
    assert final_score(None, None) == 0.0


def test_reconciler_actions_are_checked() -> None:
    cands = [{"description": "a", "type": "seeking"}, {"description": "b", "type": "offering"}]
    raw = [
        {"action": "create", "candidate": 0},
        {"action": "create", "candidate": 0},  # the same candidate twice
        {"action": "update", "intentId": "i-1", "candidate": 1},
        {"action": "expire", "intentId": "i-1"},  # touched twice
        {"action": "expire", "intentId": "not-active"},
        {"action": "delete", "intentId": "i-2"},
        {"action": "create", "candidate": 7},
    ]
    actions, dropped = checked_actions(raw, cands, ["i-1", "i-2"])
    assert [(a.action, a.candidate, a.intent_id) for a in actions] == [("create", 0, None), ("update", 1, "i-1")]
    assert dropped == 5


def test_the_rule_skips_repeats_and_updates_in_place() -> None:
    cands = [
        {"description": "Looking for a React co-founder!", "type": "seeking"},
        {"description": "x", "type": "offering"},
    ]
    active = [{"intentId": "i-1", "description": "looking for a react co-founder", "type": "seeking"}]
    assert [(a.action, a.candidate) for a in rule_actions(cands, active)] == [("create", 1)]
    assert [(a.action, a.intent_id) for a in rule_actions(cands, active, ["i-1"])] == [("update", "i-1")]


def test_lenses_parsed_and_the_fallback() -> None:
    lenses = lenses_from(
        {
            "lenses": [{"label": "seed VC", "corpus": "profiles"}, {"label": "seed VC", "corpus": "profiles"}]
            + [{"label": f"l{i}", "corpus": "intents"} for i in range(6)]
        }
    )
    assert len(lenses) == 5 and lenses[0].label == "seed VC"
    with pytest.raises(LLMUnavailable):
        lenses_from({"lenses": [{"label": "x", "corpus": "documents"}]})
    assert [(x.label, x.corpus) for x in fallback_lenses(" find  me a designer ")] == [
        ("find me a designer", "profiles"),
        ("find me a designer", "intents"),
    ]


def _c(cand: str, net: str, sim: float, via: str = "profile", relevancy: float = 0.0) -> Candidate:
    return Candidate("me", cand, net, sim, via, relevancy=relevancy)


def test_merge_keeps_the_best_of_each_triple_and_never_the_source() -> None:
    merged = merge([_c("a", "n1", 0.5), _c("a", "n1", 0.7, "intent"), _c("a", "n2", 0.4), _c("me", "n1", 0.9)])
    assert [(c.candidate_member_id, c.network_id, c.similarity, c.via) for c in merged] == [
        ("a", "n1", 0.7, "intent"),
        ("a", "n2", 0.4, "profile"),
    ]


def test_bands_roles_and_ranking() -> None:
    assert (band(90), band(89), band(70), band(69)) == ("must-meet", "should-meet", "should-meet", None)
    assert (complement("agent"), complement("patient"), complement("peer")) == ("patient", "agent", "peer")
    assert role_from_types("seeking", "offering") == "agent"
    assert role_from_types("offering", "seeking") == "patient"
    assert role_from_types(None, "offering") == "peer"
    ok = Evaluation(80, "r", "agent")
    ranked = rank(
        [
            (_c("a", "n1", 0.5, relevancy=0.2), ok),
            (_c("a", "n2", 0.4, relevancy=0.9), ok),  # same score: the more relevant network wins
            (_c("b", "n1", 0.9), Evaluation(95, "r", "peer")),
            (_c("c", "n1", 0.99), Evaluation(69, "r", "peer")),  # below the bands: no opportunity
        ],
        limit=10,
    )
    assert [(r.candidate.candidate_member_id, r.candidate.network_id) for r in ranked] == [("b", "n1"), ("a", "n2")]
    assert ranked[1].source_role == "patient"
    assert len(rank([(_c("b", "n1", 0.9), ok), (_c("a", "n1", 0.9), ok)], limit=1)) == 1


def test_evaluator_answers_and_the_similarity_fallback() -> None:
    out = evaluations_from(
        {"evaluations": [{"candidate": 1, "score": 91.4, "reasoning": "fit", "role": "agent"}, {"candidate": 5}]}, 2
    )
    assert out[0] is None and out[1] == Evaluation(91, "fit", "agent")
    with pytest.raises(LLMUnavailable):
        evaluations_from({"evaluations": "none"}, 1)
    c = Candidate("me", "a", "n", 0.83, "intent", candidate_intent_type="offering")
    e = fallback(c, "seeking", "no-key")
    assert (e.score, e.candidate_role, e.degraded, e.reason) == (83, "agent", True, "no-key")
    assert "similarity" in e.reasoning
