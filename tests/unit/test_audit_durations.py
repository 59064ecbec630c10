"""``maxy audit prune --older-than``: what a duration may look like, and the one-line refusal."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from maxy.errors import ValidationError
from maxy.mcp.audit_retention import UNITS, describe, parse_duration


@given(st.integers(min_value=1, max_value=10_000), st.sampled_from(sorted(UNITS)), st.booleans())
def test_a_number_and_a_unit_is_that_many_seconds(amount: int, unit: str, upper: bool) -> None:
    text = f"{amount}{unit.upper() if upper else unit}"
    age = parse_duration(text)
    assert age == timedelta(seconds=amount * UNITS[unit])
    assert parse_duration(describe(age)) == age  # the log line's form reads back as the same age


@pytest.mark.parametrize(
    "text,expected",
    [
        ("12h", timedelta(hours=12)),
        ("30d", timedelta(days=30)),
        ("2w", timedelta(weeks=2)),
        (" 90m ", timedelta(minutes=90)),
    ],
)
def test_the_documented_examples(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["", "30", "d", "30x", "-1d", "1.5d", "30 days", "3d4h", "1y"])
def test_anything_else_is_refused_naming_the_flag_and_the_form(text: str) -> None:
    with pytest.raises(ValidationError) as caught:
        parse_duration(text)
    message = str(caught.value)
    assert message.startswith("--older-than: ") and "12h, 30d or 2w" in message and "\n" not in message


def test_zero_is_refused_rather_than_deleting_everything() -> None:
    with pytest.raises(ValidationError, match="above zero"):
        parse_duration("0d")
