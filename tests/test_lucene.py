"""The one function that turns user text into Lucene query text."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

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


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300))
def test_any_text_is_a_valid_query_for_neo4j(db, account, text):
    """Whatever the user types, the full-text index answers (no parse error)."""
    q = build_query(text, account_id=account.account_id)
    if q is None:
        assert not terms(text)
        return
    db.read("CALL db.index.fulltext.queryNodes('entity_search', $q, {limit: 1}) YIELD node RETURN count(*) AS c", q=q)


def test_long_questions_stay_under_lucenes_clause_limit(db, account):
    """Every term expands over every indexed field; a long pasted paragraph must still run."""
    words = " ".join(f"word{i} boiler" for i in range(300))
    q = build_query(words, account_id=account.account_id)
    assert len(terms(words)) == 32
    db.read("CALL db.index.fulltext.queryNodes('entity_search', $q, {limit: 1}) YIELD node RETURN count(*) AS c", q=q)


def test_terms_are_distinct_case_insensitively():
    assert terms("Boiler boiler BOILER, repair") == ["Boiler", "repair"]
