"""Canonical names (``maxy.graph.names``) and stored instants (``maxy.graph.validity``): the
keys entity resolution and exact-name lookups rely on."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from maxy.errors import ValidationError
from maxy.graph.names import lookup_keys, name_key, node_keys
from maxy.graph.validity import date_text, time_window_clause, to_instant, validity_clause

words = st.lists(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyzé0123456789", min_size=1, max_size=8), min_size=1, max_size=4
)


@given(words, st.sampled_from([" ", "  ", "\t", " - ", ", ", ". "]), st.sampled_from(["", ".", "!", " ", "?"]))
def test_case_spacing_and_punctuation_do_not_change_the_key(parts, sep, tail):
    plain = " ".join(parts)
    variant = sep.join(p.upper() for p in parts) + tail
    assert name_key(variant) == name_key(plain)
    assert name_key(name_key(plain)) == name_key(plain), "a key is its own key"


def test_accents_fold_and_empty_names_have_no_key():
    assert name_key("Zoë  Saldaña") == name_key("zoe saldana") == "zoe saldana"
    assert name_key("!!!") is None and name_key("") is None and name_key(None) is None


def test_organisations_are_also_known_without_their_legal_form():
    key, aliases = node_keys(["Organization"], {"name": "Globex Corporation", "alternateName": ["GC Inc"]})
    assert key == "globex corporation" and aliases == ["gc", "gc inc", "globex"]
    assert node_keys(["Person"], {"name": "Ada Co"}) == ("ada co", []), "only organisations drop a legal form"
    assert lookup_keys(["Project"], {"title": "Phoenix", "aliases": "PHX"}) == ["phoenix", "phx"]


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        ("2024-03-01", "2024-03-01T00:00:00+00:00"),
        ("2024-03-01T10:30:00Z", "2024-03-01T10:30:00+00:00"),
        ("2024-03-01T10:30:00+02:00", "2024-03-01T08:30:00+00:00"),
        ("2024-03-01T10:30:00.123456", "2024-03-01T10:30:00+00:00"),
    ],
)
def test_instants_are_stored_as_utc_text(value, stored):
    assert to_instant(value, "validFrom") == stored


@pytest.mark.parametrize("bad", ["", "yesterday", "2024-13-01", 20240301, None])
def test_a_bad_instant_names_the_field(bad):
    with pytest.raises(ValidationError, match=r"^asOf: "):
        to_instant(bad, "asOf")


def test_date_text_and_the_filter_clauses():
    assert date_text("2023-05-08T13:56:00") == "8 May 2023"
    assert date_text("soon") is None
    assert validity_clause("n", include_history=True).clause == "true"
    as_of = validity_clause("n", as_of="2024-01-01T00:00:00+00:00")
    assert as_of.params == {"t_asOf": "2024-01-01T00:00:00+00:00"} and "n.validUntil > $t_asOf" in as_of.clause
    assert time_window_clause("n").clause == "true"
    window = time_window_clause("m", after="a", before="b")
    assert window.params == {"t_after": "a", "t_before": "b"} and "coalesce(m.validFrom" in window.clause
    with pytest.raises(ValidationError):
        validity_clause("n) DETACH DELETE (x")
