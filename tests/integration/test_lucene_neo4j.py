"""Whatever the user types, the Lucene query text it becomes runs on the real full-text index."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from maxy.search.lucene import build_query, terms

from tests.hypothesis_profile import examples


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
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
