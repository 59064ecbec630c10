"""The relevance an answer shows: each hit's calibrated probability of being relevant within
that answer, never rising down the list; the reliability table and its expected calibration
error."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from maxy.evaluation.reliability import table
from maxy.search.hits import Hit
from maxy.search.relevance import answer, monotone, shipped_answers, shown

MODEL = "bge-small-en-v1.5-int8"
READING = st.floats(0.001, 0.999)


@given(readings=st.lists(READING, min_size=1, max_size=20), data=st.data())
def test_the_shown_relevance_never_rises_down_an_answer(readings: list[float], data: st.DataObject) -> None:
    scores = sorted(data.draw(st.lists(st.floats(0.01, 5), min_size=len(readings), max_size=len(readings))))[::-1]
    hits = [Hit(node_id=f"n{i}", labels=["Note"], score=s) for i, s in enumerate(scores)]
    for hit, r in zip(hits, readings, strict=True):
        hit.relevance = r
    shown(hits, MODEL)
    values = [h.relevance for h in hits]
    assert all(v is not None and 0 <= v <= 1 for v in values)
    assert values == sorted(values, reverse=True)  # a 0.79 never sits above a 0.89


def test_a_clearer_first_hit_reads_more_relevant_and_the_floor_reads_the_shown_value() -> None:
    model = shipped_answers()[MODEL]
    strong = model.probabilities([0.99, 0.6, 0.5], [1.0, 0.5, 0.4])
    weak = model.probabilities([0.55, 0.5, 0.5], [1.0, 0.9, 0.9])
    assert strong[0] > weak[0] and strong[0] > strong[1]
    hits = [Hit(node_id=f"n{i}", labels=["Note"], score=s) for i, s in enumerate((1.0, 0.5, 0.4))]
    for hit, r in zip(hits, (0.99, 0.6, 0.5), strict=True):
        hit.relevance = r
    kept, miss = answer(hits, None, MODEL, round(strong[1], 4))
    assert [h.node_id for h in kept] == ["n0", "n1"] and miss is None


def test_monotone_and_the_reliability_table() -> None:
    assert monotone([0.4, 0.6, 0.2, 0.3]) == [0.4, 0.4, 0.2, 0.2]
    pairs = [(0.05, 0)] * 9 + [(0.05, 1)] + [(0.85, 1)] * 8 + [(0.85, 0)] * 2
    report = table(pairs)
    assert [r["bin"] for r in report["rows"]] == ["0.0-0.1", "0.8-0.9"]
    assert report["ece"] == round(0.5 * 0.05 + 0.5 * 0.05, 4)
