"""Relevance: the signals of a hit, the calibrated model, the cut, and the fit that makes them."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st
from maxy.errors import ValidationError
from maxy.evaluation.relevance import (
    CLEAR_TARGET,
    MAX_LOSS,
    Asked,
    choose_cut,
    clear_share,
    cut_losses,
    fit,
    halves,
)
from maxy.search.hits import Hit
from maxy.search.relevance import (
    FEATURES,
    Calibration,
    assess,
    at_least,
    calibration_for,
    content_words,
    coverage,
    features,
    gate,
    hit_text,
)

MODEL = Calibration("test-model", (1.0, 4.0, 2.0, 3.0, 2.5, -2.0, 3.0), -1.0, 0.8)


def _hit(node_id: str, text: str, cosine: float, bm25: float | None = None, relevance: float | None = None) -> Hit:
    hit = Hit(node_id, ["Note"], vector_score=cosine, bm25_raw=bm25, properties={"text": text, "nodeId": node_id})
    hit.relevance = relevance
    return hit


def test_content_words_drop_function_words_numbers_and_symbols():
    assert content_words("When did Caroline go to the LGBTQ support group?") == {
        "caroline",
        "go",
        "lgbtq",
        "support",
        "group",
    }
    assert content_words("?!.,;: [a TO z] ~0.5 ^2") == set()  # nothing topical at all
    assert content_words("walked walking walks") == {"walk"}


def test_hit_text_leaves_bookkeeping_out():
    text = hit_text({"text": "phoenix launch", "nodeId": "abc123", "accountId": "x", "createdAt": "2026-01-01", "n": 3})
    assert text == "phoenix launch"


def test_features_read_coverage_bm25_per_word_and_the_rise_over_a_blank_text():
    hit = _hit("a", "The Phoenix project launched in May", 0.8, bm25=6.0)
    signals = features(hit, content_words("phoenix launch date"), 0.55)
    cosine, coverage, cross, bm25, length_x_cosine, length, over_blank = signals
    assert (cosine, coverage, bm25) == (0.8, pytest.approx(2 / 3), 2.0)
    assert cross == pytest.approx(0.8 * 2 / 3) and length_x_cosine == pytest.approx(length * 0.8)
    assert over_blank == pytest.approx(0.25)
    assert features(hit, set(), 0.55)[1:4] == (0.0, 0.0, 0.0)  # no topic words: no coverage, no BM25 per word
    assert features(_hit("b", "x", 0.5, bm25=1000.0), {"x"}, 0.4)[3] == 5.0  # capped
    assert features(_hit("c", "x", 0.0, bm25=3.0), {"x"}, 0.6)[6] == 0.0  # found by BM25 alone: no cosine to read


def test_a_calibration_centred_on_its_cut_decides_the_same_with_the_cut_at_one_half():
    centred = MODEL.centred()
    assert centred.cut == 0.5 and centred.weights == MODEL.weights
    for cosine in (0.2, 0.5, 0.62, 0.7, 0.9):
        signals = features(_hit("a", "phoenix", cosine, bm25=1.0), {"phoenix"}, 0.5)
        assert (MODEL.relevance(signals) >= MODEL.cut) == (centred.relevance(signals) >= 0.5)


@given(st.floats(0.01, 1), st.floats(0, 1), st.floats(0, 1))
def test_more_cosine_or_coverage_never_lowers_relevance(cosine, coverage, more):
    """For a hit the vector path found (a hit BM25 alone found has no cosine to compare)."""

    def rel(c: float, v: float) -> float:
        hit = _hit("a", "word " * 20, c)
        signals = list(features(hit, set(), 0.5))
        signals[1], signals[2] = v, c * v
        return MODEL.relevance(signals)

    assert 0.0 <= rel(cosine, coverage) <= 1.0
    assert rel(min(1.0, cosine + more), coverage) >= rel(cosine, coverage) - 1e-12
    assert rel(cosine, min(1.0, coverage + more)) >= rel(cosine, coverage) - 1e-12


def test_the_gate_keeps_every_hit_when_one_clears_and_names_the_nearest_miss_when_none_does():
    hits = [_hit("a", "", 0, relevance=0.3), _hit("b", "", 0, relevance=0.9), _hit("c", "", 0, relevance=0.2)]
    assert gate(hits, 0.8) == (hits, None)  # ranking and the less relevant hits stay
    low = [_hit("a", "", 0, relevance=0.3), _hit("b", "", 0, relevance=0.6)]
    kept, miss = gate(low, 0.8)
    assert kept == [] and miss is not None and miss.node_id == "b"
    assert gate(low, None) == (low, None) and gate(low, 0.0) == (low, None)
    unscored = [_hit("a", "", 0)]
    assert gate(unscored, 0.8) == (unscored, None)  # no calibration: no gate


def test_a_callers_minimum_drops_each_hit_below_it_in_order():
    hits = [_hit("a", "", 0, relevance=0.9), _hit("b", "", 0, relevance=0.2), _hit("c", "", 0, relevance=0.85)]
    kept, miss = at_least(hits, 0.8)
    assert [h.node_id for h in kept] == ["a", "c"] and miss is None
    kept, miss = at_least(hits, 0.95)
    assert kept == [] and miss is not None and miss.node_id == "a"
    assert at_least(hits, 0.0) == (hits, None)


def test_calibration_file_round_trip_and_refuses_other_features():
    again = Calibration.from_json("test-model", MODEL.to_json())
    assert again == MODEL
    broken = {**MODEL.to_json(), "features": ["cosine"]}
    with pytest.raises(ValidationError, match="features must be"):
        Calibration.from_json("test-model", broken)
    assert calibration_for(None) is None and calibration_for("no-such-model") is None


def _asked(split: str, relevant: list[bool], cosines: list[float]) -> Asked:
    hits = [
        _hit(str(i), "alpha beta" if r else "gamma", c) for i, (r, c) in enumerate(zip(relevant, cosines, strict=True))
    ]
    words = content_words("alpha beta")
    signals = [features(h, words, 0.45) for h in hits]
    judged = {"0": 1} if relevant[0] else {}
    return Asked(split, "", hits, relevant, signals, [[h.node_id] for h in hits], judged)


def test_fit_separates_answers_from_noise_and_the_cut_keeps_the_targets():
    rng = random.Random(7)
    asked = []
    for split in ("scifact", "memory", "messages"):
        for _ in range(40):
            asked.append(_asked(split, [True, False, False], [rng.uniform(0.75, 0.9), rng.uniform(0.5, 0.7), 0.5]))
            asked.append(_asked(f"noise:{split}", [False] * 3, [rng.uniform(0.4, 0.6) for _ in range(3)]))
    calibration = fit(asked, "test-model")
    assert len(calibration.weights) == len(FEATURES)
    for split in ("scifact", "memory", "messages"):
        assert clear_share(asked, calibration, split, calibration.cut) >= CLEAR_TARGET
    assert all(loss <= MAX_LOSS for loss in cut_losses(asked, calibration, calibration.cut).values())
    noise = [a for a in asked if a.split.startswith("noise")]
    assert all(calibration.relevance(s) < calibration.cut for a in noise for s in a.signals)
    assert calibration.cut == 0.5 and choose_cut(asked, calibration) >= 0.5
    held_out = halves(asked, "test-model", 2)  # fitted on one half, measured on the other
    assert len(held_out) == 2
    for report in held_out:
        assert all(report["noise"][split]["no_relevant_results"] == 1.0 for split in report["noise"])
        assert sum(report["splits"][split]["queries"] for split in report["splits"]) < 120


def test_the_cut_gives_way_to_recall():
    """A cut that would close the gate on answered queries is lowered until the loss is small."""
    rng = random.Random(3)
    asked = []
    for split in ("scifact", "memory", "messages"):
        for i in range(60):
            weak = i < 10  # a sixth of the answers look like noise
            high = rng.uniform(0.45, 0.6) if weak else rng.uniform(0.8, 0.9)
            asked.append(_asked(split, [True, False], [high, 0.4]))
            asked.append(_asked(f"noise:{split}", [False, False], [rng.uniform(0.45, 0.62), 0.4]))
    calibration = fit(asked, "test-model")
    losses = cut_losses(asked, calibration, calibration.cut)
    assert all(loss <= MAX_LOSS for loss in losses.values())
    strict = cut_losses(asked, calibration, 0.99)
    assert strict["scifact:recall@10"] > MAX_LOSS  # the highest cut would have cost recall


_WORDISH = st.sampled_from(
    ["walk", "walks", "walked", "walking", "walkly", "walkes", "runn", "running", "news", "a", "is"]
)


@given(
    st.lists(st.one_of(_WORDISH, st.text(alphabet="abcdegilnsy", min_size=1, max_size=9)), max_size=12),
    st.lists(st.one_of(_WORDISH, st.text(alphabet="abcdegilnsy ,.", max_size=12)), max_size=30),
)
def test_coverage_equals_the_share_of_query_stems_among_the_texts_stems(query: list[str], text: list[str]) -> None:
    """The fast coverage (no text word stemmed) is the plain definition: query stems found
    among the stems of every text word, over the query stems."""
    from maxy.search.relevance import _WORD, _stem

    query_words = content_words(" ".join(query))
    body = " ".join(text)
    stems = {_stem(w) for w in _WORD.findall(body.lower())}
    expected = len(query_words & stems) / len(query_words) if query_words else 0.0
    assert coverage(query_words, body) == expected


def test_relevance_is_worked_out_when_read_from_the_text_the_hit_had_when_assessed():
    hit = _hit("n1", "The Phoenix launch date moved to March", cosine=0.62, bm25=4.0)
    words = content_words("phoenix launch date")
    expected = round(MODEL.relevance(features(hit, words, 0.3)), 4)
    assess([hit], "phoenix launch date", MODEL, 0.3)
    hit.properties = {}  # a caller's fields narrowed the properties before anyone read the relevance
    assert hit.relevance == expected
    hit.relevance = 0.25  # set outright, it is what it was set to
    assert hit.relevance == 0.25


def test_a_deferred_relevance_holds_no_reference_to_its_hit():
    """A hit whose relevance is never read is freed when the search lets go of it, without
    waiting for Python's cycle collector; read, it is the reading of the properties it had."""
    import gc
    import weakref

    calibration = Calibration("m", (1.0,) * len(FEATURES), -1.0, 0.5)
    unread = _hit("a", "phoenix launch", 0.6, bm25=2.0)
    assess([unread], "phoenix launch", calibration, 0.3)
    gone = weakref.ref(unread)
    enabled = gc.isenabled()
    gc.disable()
    try:
        del unread
        assert gone() is None
    finally:
        if enabled:
            gc.enable()
    read = _hit("b", "phoenix launch", 0.6, bm25=2.0)
    expected = round(calibration.relevance(features(read, content_words("phoenix launch"), 0.3)), 4)
    assess([read], "phoenix launch", calibration, 0.3)
    read.properties = {"nodeId": "b"}  # a caller's fields narrow the hit after the search
    assert read.relevance == expected
