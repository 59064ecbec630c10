"""The paged listings' offset/limit check and their JSON-able rows, without a database."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

import neo4j.time
import pytest
from maxy.errors import ValidationError
from maxy.graph.paging import MAX_LIMIT, check_page, plain
from neo4j.spatial import CartesianPoint


def test_check_page_takes_whole_numbers_in_range():
    assert check_page(0, 1) == (0, 1) and check_page(10_000, MAX_LIMIT) == (10_000, MAX_LIMIT)


@pytest.mark.parametrize(
    ("offset", "limit", "field"),
    [(-1, 5, "offset"), (None, 5, "offset"), (False, 5, "offset"), ("0", 5, "offset"), (0.0, 5, "offset")]
    + [(0, 0, "limit"), (0, MAX_LIMIT + 1, "limit"), (0, True, "limit"), (0, None, "limit"), (0, 2.0, "limit")],
)
def test_check_page_names_the_bad_field(offset, limit, field):
    with pytest.raises(ValidationError) as err:
        check_page(offset, limit)
    assert (
        err.value.field == field
        and "whole number" in err.value.reason
        and repr(offset if field == "offset" else limit) in str(err.value)
    )


def test_plain_makes_rows_json_able():
    row = {
        "at": neo4j.time.DateTime(2026, 5, 7, 6, 0, 0, tzinfo=UTC),
        "day": neo4j.time.Date(2026, 5, 7),
        "took": neo4j.time.Duration(minutes=5),
        "py": [datetime(2026, 5, 7, tzinfo=UTC), date(2026, 5, 7)],
        "where": CartesianPoint((1.0, 2.0)),
        "odd": {"b", "a"} - {"b"},
        "nested": {"n": 1, "ok": True, "none": None, "text": "x", "f": 1.5},
    }
    out = plain(row)
    json.dumps(out)
    assert out["at"] == "2026-05-07T06:00:00.000000000+00:00" and out["day"] == "2026-05-07"
    assert out["took"] == "PT5M" and out["py"] == ["2026-05-07T00:00:00+00:00", "2026-05-07"]
    assert out["where"] == [1.0, 2.0] and out["odd"] == "{'a'}" and out["nested"] == row["nested"]
