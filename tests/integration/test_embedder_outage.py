"""A hung Ollama: once the embedder's breaker opens, writes store without a vector and searches
answer from BM25 at once, instead of each waiting EMBED_TIMEOUT_S (the real Neo4j, a real
HTTP server that never answers: tests/fake_ollama.py)."""

from __future__ import annotations

import time

import pytest
from maxy.embeddings.ollama_embedder import OllamaEmbedder
from maxy.graph.guards import Caller
from maxy.graph.schema import recorded_embedder
from maxy.graph.write import GraphWriter, NodeSpec
from maxy.search.pipeline import hybrid
from maxy.search.request import SearchRequest

from tests.fake_ollama import FakeOllama

EMBED_TIMEOUT_S = 1.5


@pytest.mark.alone  # times a write and a search against a bound
def test_hung_ollama_costs_one_timeout_then_writes_and_searches_skip_it(db, account) -> None:
    with FakeOllama(dims=384, mode="hang") as fake:
        embedder = OllamaEmbedder("all-minilm", fake.url, 384, timeout_s=EMBED_TIMEOUT_S, breaker_failures=1)
        # The shared database records the model its vectors came from; a different name would
        # turn the vector path off before the embedder is asked. Stand in for that model.
        embedder.name = (recorded_embedder(db) or {}).get("model") or embedder.name
        writer = GraphWriter(db, account, embedder)

        started = time.monotonic()
        first = writer.write(NodeSpec(["Note"], {"name": "breaker lantern first"}))
        assert EMBED_TIMEOUT_S * 0.9 <= time.monotonic() - started  # one full timeout opens the breaker
        assert embedder.breaker.state()["breaker"] == "open"
        asked = len(fake.requests)

        started = time.monotonic()
        second = writer.write(NodeSpec(["Note"], {"name": "breaker lantern second"}))
        response = hybrid(db, Caller(account.account_id), SearchRequest("breaker lantern"), embedder)
        assert time.monotonic() - started < EMBED_TIMEOUT_S / 2  # neither waited for the server
        assert len(fake.requests) == asked

    stored = db.read(
        "MATCH (n:Note) WHERE n.nodeId IN $ids RETURN n.embedding IS NULL AS bare",
        ids=[first.node_id, second.node_id],
    )
    assert [row["bare"] for row in stored] == [True, True]  # stored, without a vector (maxy reindex fills it)
    assert {h.node_id for h in response.hits} >= {first.node_id, second.node_id}
    assert any("BM25-only" in w and "paused" in w for w in response.warnings)
