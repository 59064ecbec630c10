"""Rows packed into one record (``Database.read_packed``), as the search paths read them."""

from __future__ import annotations


def test_packed_rows_keep_their_order_their_nulls_and_their_names(db) -> None:
    rows = db.read_packed(
        "UNWIND [3, 1, 2] AS x RETURN collect([x, CASE WHEN x = 1 THEN null ELSE 'v' + x END, [x, x]]) AS rows",
        ("x", "v", "pair"),
    )
    assert rows == [
        {"x": 3, "v": "v3", "pair": [3, 3]},
        {"x": 1, "v": None, "pair": [1, 1]},
        {"x": 2, "v": "v2", "pair": [2, 2]},
    ]


def test_no_rows_pack_into_an_empty_list(db) -> None:
    assert db.read_packed("UNWIND [] AS x RETURN collect([x]) AS rows", ("x",)) == []
