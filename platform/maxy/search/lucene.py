"""Lucene query text for the entity_search full-text index, built in one tested place.

A user's words are data, never query syntax: every character the classic query parser
treats specially is escaped, and the bare operators AND / OR / NOT are lower-cased so they
are searched as words (the English analyzer then drops them as stop words).
"""

from __future__ import annotations

import re

# The classic QueryParser's special characters (single & and | are escaped too, which also
# neutralises && and ||).
_SPECIAL = set('\\+-!():^[]"{}~*?|&/')
_OPERATORS = re.compile(r"\b(AND|OR|NOT|TO)\b")
# Lucene counts every leaf clause of the expanded query against maxClauseCount (1024), and
# the full-text index expands each term over all of its fields (30): 32 distinct terms
# stay under the limit, where a longer question would fail the BM25 path outright.
MAX_TERMS = 32
# Lucene's English stop words (EnglishAnalyzer): a query of nothing but these would reduce to
# an empty clause, which must match nothing rather than everything.
STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then "
    "there these they this to was will with".split()
)


def escape_lucene(text: str) -> str:
    """Escape ``text`` so the query parser sees only plain terms."""
    text = _OPERATORS.sub(lambda m: m.group(1).lower(), text)
    return "".join("\\" + ch if ch in _SPECIAL else ch for ch in text)


def terms(text: str) -> list[str]:
    """The whitespace-separated words of ``text`` that still hold a letter or digit."""
    out: list[str] = []
    seen: set[str] = set()
    for t in text.split():
        key = "".join(ch for ch in t.lower() if ch.isalnum())
        if key and key not in STOP_WORDS and key not in seen:
            seen.add(key)
            out.append(t)
    return out[:MAX_TERMS]


def build_query(text: str, *, account_id: str | None = None) -> str | None:
    """A query matching any of the words; None when nothing searchable is left.

    With ``account_id`` the index itself filters to that account: a required phrase on
    the ``accountId`` field with boost 0, so it selects without changing any score.
    """
    words = terms(text)
    if not words:
        return None
    body = " ".join(escape_lucene(w) for w in words)
    if account_id is None:
        return body
    return f'+({body}) +accountId:"{escape_lucene(account_id)}"^0'
