"""BM25 by the account's own statistics, against the real full-text index: another account's
words do not move a small account's keyword ranking."""

from __future__ import annotations

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
