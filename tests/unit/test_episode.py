"""EPISODE and DATE MENTION over hits: pure score changes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from maxy.search.date_mention import DATE_BOOST, favour
from maxy.search.episode import SIBLING_SUPPORT, support
from maxy.search.hits import Hit


def hit(node_id: str, score: float, valid_from: str | None = None, happened: str | None = None) -> Hit:
    return Hit(node_id, ["Fact"], score=score, valid_from=valid_from, happened=happened or valid_from)


def test_siblings_lend_their_best_score():
    a, b, c = (
        hit("a", 0.9, "2023-05-08T13:56:00+00:00"),
        hit("b", 0.4, "2023-05-08T13:56:00+00:00"),
        hit("c", 0.2, "2023-05-08T13:56:00+00:00"),
    )
    alone, undated = hit("d", 0.5, "2024-01-01T00:00:00+00:00"), hit("e", 0.7)
    assert support([a, b, c, alone, undated]) == 3
    assert a.score == pytest.approx(0.9 + SIBLING_SUPPORT * 0.4), "the best takes the runner-up's support"
    assert b.score == pytest.approx(0.4 + SIBLING_SUPPORT * 0.9)
    assert c.score == pytest.approx(0.2 + SIBLING_SUPPORT * 0.9)
    assert (alone.score, undated.score) == (0.5, 0.7)


@given(st.lists(st.tuples(st.floats(0, 1), st.sampled_from([None, "t1", "t2", "t3"])), max_size=12))
def test_support_keeps_the_order_within_an_instant_and_never_lowers_a_score(rows):
    hits = [hit(str(i), s, v) for i, (s, v) in enumerate(rows)]
    before = {h.node_id: h.score for h in hits}
    support(hits)
    for h in hits:
        assert h.score >= before[h.node_id]
    for x in hits:
        for y in hits:
            if x.valid_from and x.valid_from == y.valid_from and before[x.node_id] > before[y.node_id]:
                assert x.score >= y.score - 1e-9


def test_a_named_day_favours_what_happened_within_a_day():
    on = hit("on", 0.1, happened="2023-06-16T19:20:00+00:00")
    next_day = hit("next", 0.1, happened="2023-06-17T08:00:00")
    far = hit("far", 0.1, happened="2023-06-20T00:00:00+00:00")
    unknown = hit("unknown", 0.1)
    assert favour([on, next_day, far, unknown], "What did Maria share on 16 June, 2023?") == 2
    assert on.score == next_day.score == pytest.approx(0.1 + DATE_BOOST)
    assert far.score == unknown.score == 0.1
    assert favour([far], "What did Maria share in June?") == 0
