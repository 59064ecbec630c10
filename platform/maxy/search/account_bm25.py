"""BM25 by the account's own statistics: a tenant's keyword ranking, whatever the others write.

Lucene keeps one set of BM25 statistics per index: how many documents hold a word, and how
long a document is on average, are counted over every account's nodes. The account clause of
the query selects among the hits but does not change how they score, so a small account's
ranking moves with what the others write (a word common in theirs looks common in its own).

When an account holds less than ``SHARE`` of the index's nodes, its full-text hits are scored
again with BM25 over its own statistics: the document frequency of each query word among the
account's nodes (counted by the index itself, with the account required), the account's node
count, and its average text length (from a sample of its nodes). A hit's text is the string
values ``relevance.hit_text`` reads; its words are matched to the query's by their Porter
stems, as the index's English analyzer stems them. An account that holds at least ``SHARE``
of the index ranks by Lucene's figures, which are then mostly its own.

Counted statistics are cached per database and account. For ``TTL_S`` seconds they are used as
they are; after that, for up to ``KEEP_S``, a search still uses them and has them counted again
beside it (once per word at a time), so only a word no search has met for ``KEEP_S`` is counted
while a search waits. Counting a common word among a large account's nodes takes tens of
milliseconds, and an agent's searches come in bursts with pauses between them, so recounting
every word after each pause would cost most searches that. The statistics may lag a write by
``TTL_S`` plus one recount (they weigh words, they never decide what is visible: the guards
filter the hits as before).
"""

from __future__ import annotations

import logging
import math
import re
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer

from ..db import Database
from ..graph.allowlist import RESERVED_PROPERTIES
from ..graph.schema import FULLTEXT_INDEX
from ..logs import log_line
from .hits import Hit
from .lucene import MAX_TERMS, STOP_WORDS, build_query, escape_lucene
from .relevance import hit_text

SHARE = 0.5  # below this share of the index's nodes, an account ranks by its own statistics
TTL_S = 300.0  # how long counted statistics are used as they are
KEEP_S = 86_400.0  # how long they are still used, counted again beside the search
SAMPLE = 1000  # nodes read for an account's average text length
K1, B = 1.2, 0.75  # Lucene's BM25 defaults
_WORD = re.compile(r"\w+")  # letters, digits and "_", as the standard tokenizer keeps "cell_type" whole
_MAX_ENTRIES = 200_000

_porter = snowballstemmer.stemmer("porter")
_counter = ThreadPoolExecutor(max_workers=4, thread_name_prefix="bm25-stats")
# Stale statistics are counted again one statement at a time: no search waits for them, and
# they should take as little as they can from the searches running beside them.
_recounter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bm25-recount")
_stem_lock = threading.Lock()


@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """The Porter stem of a lower-cased word (the stemmer object is not thread-safe)."""
    with _stem_lock:
        return str(_porter.stemWord(word))


def query_stems(text: str) -> dict[str, str]:
    """The query's searchable words (lower-cased, no stop words, at most ``MAX_TERMS``) by stem."""
    out: dict[str, str] = {}
    for word in _WORD.findall(text.lower()):
        if word not in STOP_WORDS:
            out.setdefault(stem(word), word)
    return dict(list(out.items())[:MAX_TERMS])


def length(text: str) -> int:
    """A text's length in space-separated pieces (as the sample counts it in Cypher)."""
    return len(text.split(" ")) if text else 0


class _Expiring:
    """A thread-safe map of counted statistics: an entry is fresh for ``TTL_S`` seconds after it
    was set, stale until ``KEEP_S``, then gone. A refresh runs at most once per key at a time,
    and one started before ``clear`` never writes after it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[tuple, tuple[float, object]] = {}
        self._refreshing: set[tuple] = set()
        self._generation = 0

    def lookup(self, key: tuple) -> tuple[object | None, bool]:
        """``(value, fresh)``; ``(None, False)`` when the key was never set or has gone."""
        with self._lock:
            item = self._items.get(key)
        if item is None:
            return None, False
        age = time.monotonic() - item[0]
        if age >= KEEP_S:
            return None, False
        return item[1], age < TTL_S

    def put(self, key: tuple, value: object, generation: int | None = None) -> None:
        """Set ``key``; with ``generation`` (from ``claim``), only if nothing was cleared since."""
        now = time.monotonic()
        with self._lock:
            if generation is not None and generation != self._generation:
                return
            if len(self._items) >= _MAX_ENTRIES:
                self._items = {k: v for k, v in self._items.items() if now - v[0] < KEEP_S}
                if len(self._items) >= _MAX_ENTRIES:
                    self._items.clear()
            self._items[key] = (now, value)

    def claim(self, keys: list[tuple]) -> tuple[list[tuple], int]:
        """The keys of ``keys`` no refresh is running for, now marked as refreshing, and the
        generation their new values must be put with."""
        with self._lock:
            mine = [k for k in keys if k not in self._refreshing]
            self._refreshing.update(mine)
            return mine, self._generation

    def release(self, keys: list[tuple]) -> None:
        with self._lock:
            self._refreshing.difference_update(keys)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._generation += 1


_cache = _Expiring()


def forget() -> None:
    """Drop every cached statistic (tests, and after a bulk change an operator wants seen now)."""
    _cache.clear()


def _refresh_later(keys: list[tuple], recount: Callable[[int], object]) -> None:
    """Run ``recount(generation)`` on the recounting thread for the ``keys`` no other refresh holds."""
    mine, generation = _cache.claim(keys)
    if not mine:
        return

    def run() -> None:
        try:
            recount(generation)
        except Exception as err:  # noqa: BLE001 - the stale value stays; the next search tries again
            log_line("bm25-stats", "recount-failed", level=logging.WARNING, error=type(err).__name__)
        finally:
            _cache.release(mine)

    try:
        _recounter.submit(run)
    except RuntimeError:  # the interpreter is shutting down: the stale value is all there is
        _cache.release(mine)


@dataclass(frozen=True)
class Corpus:
    """One account's size in the index and its average text length."""

    documents: int
    average_length: float


def account_corpus(db: Database, account_id: str) -> Corpus | None:
    """The account's statistics when it holds less than ``SHARE`` of the index's nodes, else None."""
    key = ("corpus", db.uri, db.database, account_id)
    cached, fresh = _cache.lookup(key)
    if cached is None:
        return _count_corpus(db, account_id, key, None)
    if not fresh:
        _refresh_later([key], lambda generation: _count_corpus(db, account_id, key, generation))
    return cached if isinstance(cached, Corpus) else None


def _count_corpus(db: Database, account_id: str, key: tuple, generation: int | None) -> Corpus | None:
    row = db.read(
        """
        CALL () { MATCH (n:Node {accountId: $a}) RETURN count(n) AS mine }
        CALL () { MATCH (m:Node) RETURN count(m) AS total }
        CALL (mine, total) {
          WITH mine, total WHERE mine > 0 AND mine < $share * total
          CALL db.index.fulltext.queryNodes($index, 'accountId:"' + $escaped + '"', {limit: $sample}) YIELD node
          RETURN avg(reduce(s = 0, k IN keys(node) |
                   s + CASE WHEN NOT k IN $reserved AND node[k] IS :: STRING THEN size(split(node[k], ' ')) ELSE 0 END))
                 AS average
        }
        RETURN mine, total, average
        """,
        a=account_id,
        share=SHARE,
        index=FULLTEXT_INDEX,
        escaped=escape_lucene(account_id),
        sample=SAMPLE,
        reserved=sorted(RESERVED_PROPERTIES),
    )
    corpus = None
    if row and row[0]["average"] is not None:
        corpus = Corpus(int(row[0]["mine"]), max(float(row[0]["average"]), 1.0))
    _cache.put(key, corpus or False, generation)  # False: counted, and the index's statistics apply
    return corpus


def _df_key(db: Database, account_id: str, stem: str) -> tuple:
    """Where one stem's count among one account's nodes is cached."""
    return ("df", db.uri, db.database, account_id, stem)


def _known(db: Database, account_id: str, stems: dict[str, str]) -> tuple[dict[str, int], dict[str, str]]:
    """The cached counts of ``stems`` and the stems still to count, each with the Lucene query
    that counts it; a stale count is returned and counted again on the recounting thread."""
    known: dict[str, int] = {}
    missing: dict[str, str] = {}
    stale: dict[str, str] = {}
    for s, word in stems.items():
        cached, fresh = _cache.lookup(_df_key(db, account_id, s))
        if isinstance(cached, int):
            known[s] = cached
            if not fresh:
                stale[s] = word
            continue
        query = build_query(word, account_id=account_id)
        if query is None:  # nothing searchable ("___"): the index holds it nowhere
            known[s] = 0
        else:
            missing[s] = query
    if stale:
        # each was counted before, so each has a query
        queries = {s: q for s, word in stale.items() if (q := build_query(word, account_id=account_id)) is not None}
        keys = [_df_key(db, account_id, s) for s in queries]
        _refresh_later(keys, lambda generation: _count(db, account_id, queries, generation))
    return known, missing


def _count(db: Database, account_id: str, queries: dict[str, str], generation: int | None) -> dict[str, int]:
    """Count each stem among the account's nodes with its Lucene query (one statement for all)
    and cache the counts."""
    rows = db.read(
        f"""
        UNWIND $words AS w
        CALL (w) {{
          CALL db.index.fulltext.queryNodes('{FULLTEXT_INDEX}', w.q) YIELD node
          RETURN count(node) AS df
        }}
        RETURN w.stem AS stem, df
        """,
        words=[{"stem": s, "q": q} for s, q in queries.items()],
    )
    out = {str(r["stem"]): int(r["df"]) for r in rows}
    for s, df in out.items():
        _cache.put(_df_key(db, account_id, s), df, generation)
    return out


def idf(documents: int, frequency: int) -> float:
    """Lucene's BM25 inverse document frequency."""
    return math.log(1.0 + (documents - frequency + 0.5) / (frequency + 0.5))


class Scorer:
    """BM25 of one query over texts, with the account's statistics."""

    def __init__(self, corpus: Corpus, frequencies: dict[str, int]):
        self.weights = {s: idf(corpus.documents, min(df, corpus.documents)) for s, df in frequencies.items() if df}
        self.average = corpus.average_length
        # The words starting like a query stem, each checked against the stem after. Porter only
        # changes a stem's last letter ("studi" for "studying", "fli" for "fly"), so all but
        # that letter is a prefix of every word of the stem; the text's words are never all stemmed.
        prefixes = sorted({s[: min(len(s), max(2, len(s) - 1))] for s in self.weights}, key=len, reverse=True)
        alternatives = "|".join(map(re.escape, prefixes))
        self._pattern = re.compile(rf"\b(?:{alternatives})\w*") if prefixes else None

    def score(self, text: str) -> float:
        if self._pattern is None or not text:
            return 0.0
        counts: dict[str, int] = {}
        for word in self._pattern.findall(text.lower()):
            s = stem(word)
            if s in self.weights:
                counts[s] = counts.get(s, 0) + 1
        if not counts:
            return 0.0
        norm = K1 * (1.0 - B + B * length(text) / self.average)
        return sum(self.weights[s] * tf / (tf + norm) for s, tf in counts.items())


def counting(db: Database, account_id: str, query: str) -> Future[dict[str, int]]:
    """The document frequencies of ``query``'s words, counted beside the full-text query that
    finds the hits (on a pool of its own: the caller may itself be a search pool's task); when
    every word's count is cached, fresh or stale, they are returned as they are, without a
    thread hand-off."""
    known, missing = _known(db, account_id, query_stems(query))
    if not missing:
        done: Future[dict[str, int]] = Future()
        done.set_result(known)
        return done
    return _counter.submit(lambda: known | _count(db, account_id, missing, None))


def rescore(corpus: Corpus, query: str, frequencies: dict[str, int], hits: Sequence[Hit], name: str) -> list[Hit]:
    """``hits`` (with their properties) ranked by the account's BM25 for ``query``: ``bm25_raw``
    set to that score, the rank under ``name`` renumbered; ties keep the index's order."""
    scorer = Scorer(corpus, frequencies)
    scored = sorted(
        ((scorer.score(hit_text(h.properties)), i, h) for i, h in enumerate(hits)), key=lambda t: (-t[0], t[1])
    )
    out = []
    for rank, (score, _, hit) in enumerate(scored, start=1):
        hit.bm25_raw = score
        hit.ranks[name] = rank
        out.append(hit)
    return out
