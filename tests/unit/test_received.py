"""How ``maxy eval received`` decides that a gold text reached the agent: two of its three
8-word windows (start, middle, end) in the answer, whitespace and case folded; a short gold text
whole."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from maxy.evaluation.received import Tally, reaches, windows

words = st.lists(st.text(alphabet="abcdefghij", min_size=1, max_size=6), min_size=1, max_size=60)


@given(words)
def test_a_gold_text_always_reaches_an_answer_that_holds_it(gold_words: list[str]) -> None:
    gold = " ".join(gold_words)
    answer = f"[Chunk] (id: x)\n  content: {gold.upper()}\n  more"
    assert reaches(gold, answer)
    assert not reaches(gold, "nothing of it here: zzz")


@given(words)
def test_windows_are_the_start_middle_and_end(gold_words: list[str]) -> None:
    found = windows(" ".join(gold_words))
    if len(gold_words) <= 8:
        assert found == [" ".join(gold_words)]
    else:
        assert found[0] == " ".join(gold_words[:8]) and found[-1] == " ".join(gold_words[-8:])
        assert 2 <= len(found) <= 3


def test_two_of_three_windows_are_needed() -> None:
    gold = " ".join(f"w{i}" for i in range(30))
    start, middle, end = windows(gold)
    assert reaches(gold, f"{start} ... {end}")
    assert not reaches(gold, f"{start} only")
    assert reaches(gold, f"{middle}\n{end.replace(' ', chr(10))}")  # whitespace folded


def test_the_tally_reports_per_limit() -> None:
    tally = Tally()
    tally.asked = 2
    for reached, hits, size in ((True, 5, 100), (False, 3, 300)):
        tally.add(5, reached, hits, size)
    figures = tally.figures()
    assert figures["reach@5"] == 50.0 and figures["hits@5"] == 4.0 and figures["tokens@5"]["mean"] == 200
