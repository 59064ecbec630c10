"""A conversation line's timestamp is stored as UTC text, the form the time filters compare."""

from __future__ import annotations

import pytest
from maxy.conversations.importing import parse_message
from maxy.errors import ValidationError

ROW = {"conversation": "c", "session": "c/1", "id": "m1", "speaker": "Ada", "content": "hello"}


@pytest.mark.parametrize(
    ("written", "stored"),
    [
        ("2024-03-01T10:30:00+01:00", "2024-03-01T09:30:00+00:00"),
        ("2024-03-01T09:30:00Z", "2024-03-01T09:30:00+00:00"),
        ("2024-03-01T09:30", "2024-03-01T09:30:00+00:00"),  # no zone: UTC
        ("2024-03-01", "2024-03-01T00:00:00+00:00"),  # a date: its midnight
    ],
)
def test_timestamps_are_stored_as_utc(written: str, stored: str) -> None:
    assert parse_message({**ROW, "timestamp": written}, "x.jsonl:1").timestamp == stored


def test_no_timestamp_stays_none_and_a_bad_one_is_refused_with_its_line() -> None:
    assert parse_message(ROW, "x.jsonl:1").timestamp is None
    with pytest.raises(ValidationError, match=r"x\.jsonl:3: timestamp"):
        parse_message({**ROW, "timestamp": "not-a-date"}, "x.jsonl:3")
