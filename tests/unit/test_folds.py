"""The evaluation folds: deterministic, independent of order, every question in exactly one
fold, a conversation's questions never in another conversation's fold."""

from __future__ import annotations

import hashlib
import random
import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st
from maxy.evaluation.folds import (
    Spread,
    by_group,
    conversation_folds,
    conversation_report,
    conversation_sessions,
    evidence_session,
    hash_fold,
    parts_per_conversation,
    query_folds,
    spread_report,
)

query_ids = st.lists(st.text(min_size=1, max_size=12), unique=True, max_size=60)
evidence_ids = st.builds(lambda s, t: f"D{s}:{t}", st.integers(1, 40), st.integers(1, 30))
questions = st.lists(
    st.fixed_dictionaries(
        {
            "conversation": st.sampled_from(["conv-26", "conv-30", "conv-41", "conv-7"]),
            "evidence": st.lists(st.one_of(evidence_ids, st.just("not-a-turn")), max_size=4),
        }
    ),
    max_size=80,
)


@given(query_ids, st.integers(2, 12))
def test_query_folds_are_stable_and_ignore_order(ids: list[str], k: int) -> None:
    folds = query_folds(ids, k)
    shuffled = list(ids)
    random.Random(7).shuffle(shuffled)
    assert query_folds(shuffled, k) == folds
    assert set(folds) == set(ids)
    assert all(0 <= int(f) < k for f in folds.values())


def test_hash_fold_is_the_same_on_every_run() -> None:
    # sha256, not Python's salted hash(): these values hold in any process
    ids = ("0", "2", "4", "1379")
    assert [hash_fold(q, 5) for q in ids] == [
        int.from_bytes(hashlib.sha256(q.encode()).digest()[:8], "big") % 5 for q in ids
    ]
    assert hash_fold("claim-17", 5) == hash_fold("claim-17", 5)


def test_query_folds_spread_over_every_fold() -> None:
    folds = query_folds([str(i) for i in range(800)], 5)
    sizes = [list(folds.values()).count(str(f)) for f in range(5)]
    assert min(sizes) > 120, sizes  # about 160 each


def test_evidence_session_is_the_earliest_named() -> None:
    assert evidence_session(["D12:3", "D4:19", "D30:1"]) == 4
    assert evidence_session(["x", "D2:1"]) == 2
    assert evidence_session(["nothing"]) is None
    assert evidence_session([]) is None


def test_six_folds_for_three_conversations_early_and_late() -> None:
    qs = [
        {"conversation": "a", "evidence": ["D1:1"]},
        {"conversation": "a", "evidence": ["D10:1"]},  # 10 of 19 sessions: still the early half
        {"conversation": "a", "evidence": ["D11:4", "D2:1"]},  # earliest evidence decides: early
        {"conversation": "a", "evidence": ["D19:2"]},
        {"conversation": "b", "evidence": ["D4:1"]},
        {"conversation": "b", "evidence": ["D8:1"]},
        {"conversation": "c", "evidence": []},  # names no session: the first part
        {"conversation": "c", "evidence": ["D32:1"]},
    ]
    last = {"a": 19, "b": 8, "c": 32}
    assert conversation_sessions(qs) == last
    assert parts_per_conversation(3, 5) == 2
    assert conversation_folds(qs, 5, last) == [
        "a early",
        "a early",
        "a early",
        "a late",
        "b early",
        "b late",
        "c early",
        "c late",
    ]


@given(questions, st.integers(2, 12))
def test_every_question_in_one_fold_of_its_own_conversation(qs: list[dict], k: int) -> None:
    last = conversation_sessions(qs)
    labels = conversation_folds(qs, k, last)
    assert len(labels) == len(qs)
    for q, label in zip(qs, labels, strict=True):
        assert label.split(" ")[0] == q["conversation"]
    parts = parts_per_conversation(len(last), k)
    assert len(set(labels)) <= parts * len(last)
    # the same questions in another order fall in the same folds
    order = list(range(len(qs)))
    random.Random(k).shuffle(order)
    shuffled = [qs[i] for i in order]
    again = conversation_folds(shuffled, k, conversation_sessions(shuffled))
    assert again == [labels[i] for i in order]


@given(questions, st.integers(2, 12))
def test_a_later_session_never_lands_in_an_earlier_part(qs: list[dict], k: int) -> None:
    last = conversation_sessions(qs)
    labels = conversation_folds(qs, k, last)
    by_conversation: dict[str, list[tuple[int, str]]] = {}
    for q, label in zip(qs, labels, strict=True):
        by_conversation.setdefault(q["conversation"], []).append((evidence_session(q["evidence"]) or 1, label))
    for rows in by_conversation.values():
        rows.sort()
        seen: list[str] = []
        for _session, label in rows:
            if not seen or seen[-1] != label:
                assert label not in seen, "a part's sessions are consecutive"
                seen.append(label)


def test_spread_is_mean_range_and_sample_sd() -> None:
    s = Spread.of([0.7, 0.8, 0.9])
    assert s.mean == pytest.approx(0.8)
    assert (s.low, s.high) == (0.7, 0.9)
    assert s.sd == pytest.approx(statistics.stdev([0.7, 0.8, 0.9]))
    assert Spread.of([0.5]).sd == 0.0
    with pytest.raises(ValueError):
        Spread.of([])


def test_report_groups_never_split_and_cover_every_item() -> None:
    per_item = [{"recall@5": float(i % 2)} for i in range(10)]
    labels = ["2", "10", "2", "10", "2", "10", "2", "10", "2", "10"]
    report = spread_report(per_item, labels, how="test")
    assert list(report["per_fold"]) == ["2", "10"]  # reading order, not string order
    assert report["per_fold"]["2"] == {"recall@5": 0.0, "questions": 5}
    assert report["per_fold"]["10"] == {"recall@5": 1.0, "questions": 5}
    assert report["figures"]["recall@5"] == {"mean": 0.5, "min": 0.0, "max": 1.0, "sd": round(2**-0.5, 4)}
    assert sum(g["questions"] for g in report["per_fold"].values()) == len(per_item)
    with pytest.raises(ValueError):
        by_group(per_item, labels[:-1])


def test_conversation_report_has_folds_and_the_spread_across_conversations() -> None:
    qs = [{"conversation": c, "evidence": [f"D{s}:1"]} for c in ("a", "b", "c") for s in (1, 2, 3, 4)]
    per_item = [{"recall@5": 1.0 if q["conversation"] == "a" else 0.5} for q in qs]
    report = conversation_report(per_item, qs, 5, conversation_sessions(qs))
    assert list(report["per_fold"]) == ["a early", "a late", "b early", "b late", "c early", "c late"]
    across = report["conversations"]
    assert list(across["per_fold"]) == ["a", "b", "c"]
    assert across["figures"]["recall@5"]["min"] == 0.5
    assert across["figures"]["recall@5"]["max"] == 1.0
