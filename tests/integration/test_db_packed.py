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


def test_raw_rows_keep_the_query_column_order(db) -> None:
    rows = db.read_rows("UNWIND [2, 1] AS x RETURN collect([x, 'v' + x]) AS rows")
    assert rows == [[2, "v2"], [1, "v1"]]
    assert db.read_rows("UNWIND [] AS x RETURN collect([x]) AS rows") == []


def test_property_columns_leave_out_the_hidden_properties(db) -> None:
    from maxy.search.graph_expansion import property_columns, visible_columns

    rows = db.read_rows(
        "WITH {content: 'c', embedding: [0.5], accountId: 'a', position: 3} AS n "
        f"RETURN collect({property_columns('n')}) AS rows"
    )
    assert visible_columns(rows[0]) == {"content": "c", "position": 3}
