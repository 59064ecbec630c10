"""BM25 by the account's own statistics, against the real full-text index: another account's
words do not move a small account's keyword ranking."""

from __future__ import annotations

import logging
import time

import pytest
from maxy.graph.guards import Caller
from maxy.graph.write import GraphWriter, NodeSpec
from maxy.search import account_bm25
from maxy.search.bm25 import bm25_search


@pytest.fixture(autouse=True)
def _fresh_statistics():
    account_bm25.forget()
    yield
    account_bm25.forget()


def ranking(db, caller, **kwargs) -> list[str]:
    [hits] = bm25_search(db, caller, ["quasar nebula"], ["Note"], 10, **kwargs)
    return [h.node_id for h in hits]


def test_another_accounts_words_leave_a_small_accounts_ranking_alone(db, account, embedder, make_account):
    mine = GraphWriter(db, account, embedder)
    # Alone, both words are equally rare: three quasars outrank one nebula.
    many = mine.write(NodeSpec(["Note"], {"name": "survey", "body": "quasar quasar quasar lattice"}))
    one = mine.write(NodeSpec(["Note"], {"name": "survey", "body": "nebula lattice"}))
    for word in ("harbour", "orchard", "ledger"):
        mine.write(NodeSpec(["Note"], {"name": word, "body": f"{word} notes"}))
    caller = Caller(account.account_id)
    assert ranking(db, caller) == [many.node_id, one.node_id]

    # Another account writes "quasar" everywhere: over the whole index it becomes a common word.
    theirs = GraphWriter(db, make_account("crowd"), embedder)
    theirs.write_many(NodeSpec(["Note"], {"name": f"log {i}", "body": f"quasar entry {i}"}) for i in range(300))
    account_bm25.forget()

    assert ranking(db, caller) == [many.node_id, one.node_id]
    # The premise: the index's own statistics do flip the order.
    assert ranking(db, caller, account_stats=False) == [one.node_id, many.node_id]
    [hits] = bm25_search(db, caller, ["quasar nebula"], ["Note"], 10)
    assert all(h.loaded and h.properties for h in hits) and hits[0].bm25_raw > hits[1].bm25_raw > 0


def test_an_account_holding_most_of_the_index_ranks_by_the_index(db, account, embedder, make_account, monkeypatch):
    mine = GraphWriter(db, account, embedder)
    mine.write(NodeSpec(["Note"], {"name": "survey", "body": "quasar quasar quasar lattice"}))
    mine.write(NodeSpec(["Note"], {"name": "survey", "body": "nebula lattice"}))
    theirs = GraphWriter(db, make_account("crowd"), embedder)
    theirs.write_many(NodeSpec(["Note"], {"name": f"log {i}", "body": f"quasar entry {i}"}) for i in range(50))
    caller = Caller(account.account_id)
    monkeypatch.setattr(account_bm25, "SHARE", 1e-9)  # every account holds more than this
    assert account_bm25.account_corpus(db, account.account_id) is None
    [by_index] = bm25_search(db, caller, ["quasar nebula"], ["Note"], 10, account_stats=False)
    [hits] = bm25_search(db, caller, ["quasar nebula"], ["Note"], 10)
    assert [(h.node_id, h.bm25_raw) for h in hits] == [(h.node_id, h.bm25_raw) for h in by_index]


def test_hidden_nodes_are_still_hidden_after_the_ranking(db, account, embedder, make_account):
    mine = GraphWriter(db, account, embedder)
    shown = mine.write(NodeSpec(["Note"], {"name": "quasar"}, scope="public"))
    mine.write(NodeSpec(["Note"], {"name": "quasar quasar nebula"}, scope="admin"))
    GraphWriter(db, make_account("crowd"), embedder).write_many(
        NodeSpec(["Note"], {"name": f"log {i}"}) for i in range(20)
    )
    public = Caller(account.account_id, ("public",))
    assert ranking(db, public) == [shown.node_id]


def counted(db, account_id: str, expected: int, timeout: float = 10.0) -> bool:
    """Whether the cached count of "quasar" becomes ``expected`` within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if account_bm25.counting(db, account_id, "quasar").result() == {"quasar": expected}:
            return True
        time.sleep(0.05)
    return False


def test_a_stale_count_is_used_and_counted_again_beside_the_search(db, account, embedder, make_account, monkeypatch):
    mine = GraphWriter(db, account, embedder)
    mine.write(NodeSpec(["Note"], {"name": "survey", "body": "quasar lattice"}))
    GraphWriter(db, make_account("crowd"), embedder).write_many(
        NodeSpec(["Note"], {"name": f"log {i}"}) for i in range(20)
    )
    aid = account.account_id
    assert account_bm25.account_corpus(db, aid) is not None  # a minority: its own statistics apply
    assert account_bm25.counting(db, aid, "quasar").result() == {"quasar": 1}

    mine.write(NodeSpec(["Note"], {"name": "survey", "body": "quasar nebula"}))
    assert account_bm25.counting(db, aid, "quasar").result() == {"quasar": 1}  # fresh: not counted again

    monkeypatch.setattr(account_bm25, "TTL_S", 0.0)  # every count is now stale
    calls: list[str] = []
    real_count = account_bm25._count
    monkeypatch.setattr(account_bm25, "_count", lambda *a: calls.append("count") or real_count(*a))
    # The stale count is what the search gets at once; the recount runs beside and lands after.
    assert account_bm25.counting(db, aid, "quasar").result() == {"quasar": 1}
    assert counted(db, aid, 2)
    assert calls  # on the counting pool, never while the search waited
    [hits] = bm25_search(db, Caller(aid), ["quasar"], ["Note"], 10)
    assert len(hits) == 2

    # Past KEEP_S the count is gone, and the next search counts it itself.
    mine.write(NodeSpec(["Note"], {"name": "survey", "body": "quasar quasar"}))
    monkeypatch.setattr(account_bm25, "KEEP_S", 0.0)
    assert account_bm25.counting(db, aid, "quasar").result() == {"quasar": 3}


def test_a_recount_that_fails_keeps_the_stale_count_and_says_so(
    db, account, embedder, make_account, monkeypatch, caplog
):
    mine = GraphWriter(db, account, embedder)
    mine.write(NodeSpec(["Note"], {"name": "survey", "body": "quasar lattice"}))
    GraphWriter(db, make_account("crowd"), embedder).write_many(
        NodeSpec(["Note"], {"name": f"log {i}"}) for i in range(20)
    )
    aid = account.account_id
    assert account_bm25.counting(db, aid, "quasar").result() == {"quasar": 1}
    monkeypatch.setattr(account_bm25, "TTL_S", 0.0)

    def broken(*args):
        raise RuntimeError("server went away")

    monkeypatch.setattr(account_bm25, "_count", broken)
    with caplog.at_level(logging.WARNING, logger="maxy"):
        assert account_bm25.counting(db, aid, "quasar").result() == {"quasar": 1}
        deadline = time.monotonic() + 10
        while "recount-failed" not in caplog.text and time.monotonic() < deadline:
            time.sleep(0.05)
    assert "[bm25-stats] recount-failed error=RuntimeError" in caplog.text
    assert account_bm25.counting(db, aid, "quasar").result() == {"quasar": 1}  # still served
