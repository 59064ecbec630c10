"""The one function that turns user text into Lucene query text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from maxy.search.lucene import build_query, escape_lucene, terms

SPECIAL = '\\+-!():^[]"{}~*?|&/'


@pytest.mark.parametrize("ch", list(SPECIAL))
def test_every_special_character_is_escaped(ch):
    assert escape_lucene(f"a{ch}b") == f"a\\{ch}b"


def test_double_operators_and_words():
    assert escape_lucene("a && b || c") == "a \\&\\& b \\|\\| c"
    assert escape_lucene("cats AND dogs OR NOT birds TO x") == "cats and dogs or not birds to x"
    assert escape_lucene("ANDROID ORegon") == "ANDROID ORegon"  # only whole words


def test_build_query_drops_punctuation_only_and_stop_words():
    assert build_query("  ") is None
    assert build_query('AND OR ( [ " ~ *') is None
    assert build_query("the of and") is None
    assert build_query("INV-2231 (urgent)") == "INV\\-2231 \\(urgent\\)"


def test_account_filter_is_a_zero_boost_required_phrase():
    q = build_query("boiler", account_id="614a530b-d7bc-422e-b110-5bd2f89fc178")
    assert q == '+(boiler) +accountId:"614a530b\\-d7bc\\-422e\\-b110\\-5bd2f89fc178"^0'


@given(st.text(max_size=200))
def test_escaped_text_has_no_unescaped_specials(text):
    escaped = escape_lucene(text)
    i = 0
    while i < len(escaped):
        if escaped[i] == "\\":
            assert i + 1 < len(escaped) and escaped[i + 1] in SPECIAL
            i += 2
            continue
        assert escaped[i] not in SPECIAL
        i += 1
    for word in ("AND", "OR", "NOT"):
        assert word not in escaped.split()


def test_terms_are_distinct_case_insensitively():
    assert terms("Boiler boiler BOILER, repair") == ["Boiler", "repair"]
