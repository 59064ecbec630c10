from __future__ import annotations

import math
import re

from hypothesis import given
from hypothesis import strategies as st
from maxy.search import account_bm25
from maxy.search.account_bm25 import K1, B, Corpus, Scorer, idf, length, query_stems, stem

# Words whose Porter stems end differently from the word (y -> i, dropped e, doubled consonants,
# derivational suffixes), with neighbours sharing a prefix but not a stem.
VOCABULARY = (
    "study studies studying studied student fly flies flying flight cell cells cellular cellulose "
    "relate related relational relation relativity hope hoping hopped hop general generalize generally "
    "generation generic possible possibly feeble feebly agree agreed agreement mitochondria mitochondrial "
    "run running runner ran happy happiness happily gene genes genetic genome virus viral viruses "
    "go goes going gone a b xyz x_y covid 19 covid-19 protein proteins proteomic"
).split()


def oracle(corpus: Corpus, frequencies: dict[str, int], text: str) -> float:
    """BM25 with every word of the text stemmed: what the scorer's prefix shortcut must equal."""
    weights = {s: idf(corpus.documents, min(df, corpus.documents)) for s, df in frequencies.items() if df}
    counts: dict[str, int] = {}
    for word in re.findall(r"\w+", text.lower()):
        if stem(word) in weights:
            counts[stem(word)] = counts.get(stem(word), 0) + 1
    norm = K1 * (1 - B + B * length(text) / corpus.average_length)
    return sum(weights[s] * tf / (tf + norm) for s, tf in counts.items())


texts = st.lists(
    st.one_of(st.sampled_from(VOCABULARY), st.sampled_from([" ", ", ", ". ", "_", "-", "\n"])), max_size=40
).map("".join)


@given(
    query=st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=6).map(" ".join),
    text=texts,
    documents=st.integers(1, 10_000),
    frequency=st.integers(0, 10_000),
)
def test_the_scorer_equals_stemming_every_word(query, text, documents, frequency):
    corpus = Corpus(documents, 12.0)
    frequencies = {s: frequency for s in query_stems(query)}
    assert math.isclose(Scorer(corpus, frequencies).score(text), oracle(corpus, frequencies, text), abs_tol=1e-9)


def test_idf_is_lucenes_and_falls_with_the_frequency():
    assert math.isclose(idf(100, 10), math.log(1 + 90.5 / 10.5))
    assert idf(1000, 1) > idf(1000, 10) > idf(1000, 999) > 0


def test_query_stems_drop_stop_words_and_repeat_a_stem_once():
    assert query_stems("The cells and the CELL of a study") == {"cell": "cells", "studi": "study"}
    assert query_stems("and the of") == {}


def test_a_rare_word_outweighs_a_common_one_and_length_tempers_frequency():
    corpus = Corpus(1000, 10.0)
    scorer = Scorer(corpus, {"zebrafish": 3, "cell": 900})
    assert scorer.score("zebrafish embryos") > scorer.score("cell cell cell division")
    short, long = "zebrafish study", "zebrafish study " + "filler " * 40
    assert scorer.score(short) > scorer.score(long) > 0
    assert scorer.score("nothing relevant here") == 0.0
    assert Scorer(corpus, {"cell": 0}).score("cell") == 0.0  # a word the account never holds weighs nothing


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_cached_statistic_is_fresh_then_stale_then_gone(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(account_bm25.time, "monotonic", clock)
    cache = account_bm25._Expiring()
    cache.put(("df", "w"), 7)
    assert cache.lookup(("df", "w")) == (7, True)
    clock.now += account_bm25.TTL_S
    assert cache.lookup(("df", "w")) == (7, False)  # still used, to be counted again
    clock.now += account_bm25.KEEP_S - account_bm25.TTL_S
    assert cache.lookup(("df", "w")) == (None, False)
    assert cache.lookup(("df", "never")) == (None, False)


def test_one_refresh_per_key_at_a_time_and_none_writes_after_a_clear():
    cache = account_bm25._Expiring()
    mine, generation = cache.claim([("a",), ("b",)])
    assert mine == [("a",), ("b",)]
    assert cache.claim([("b",), ("c",)])[0] == [("c",)]  # b is being counted already
    cache.release(mine)
    assert cache.claim([("a",)])[0] == [("a",)]
    cache.clear()
    cache.put(("a",), 3, generation)  # a recount that began before the clear
    assert cache.lookup(("a",)) == (None, False)
    cache.put(("a",), 4)
    assert cache.lookup(("a",)) == (4, True)
