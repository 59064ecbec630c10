"""DATE MENTION: which calendar days a query names in full."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st
from maxy.search.date_mention import _MONTHS, mentioned_days


@pytest.mark.parametrize(
    ("query", "days"),
    [
        ("What did Maria share on 16 June, 2023?", [date(2023, 6, 16)]),
        ("plans for the evening of 7 July 2023", [date(2023, 7, 7)]),
        ("on June 16th, 2023 or Sept 2, 2024", [date(2023, 6, 16), date(2024, 9, 2)]),
        ("between 2024-01-05 and 2024-02-30", [date(2024, 1, 5)]),
        ("what happened in June 2023", []),
        ("the 3 may options of 2023", []),
    ],
)
def test_full_dates_only(query, days):
    assert mentioned_days(query) == days


@given(
    st.dates(min_value=date(1900, 1, 1), max_value=date(2100, 12, 31)),
    st.sampled_from(["{d} {M} {y}", "{M} {d}, {y}", "{iso}"]),
)
def test_every_written_form_of_a_day_is_read_back(day, form):
    text = form.format(d=day.day, M=_MONTHS[day.month - 1].title(), y=day.year, iso=day.isoformat())
    assert mentioned_days(f"What happened on {text}?") == [day]
