"""The flagged stages: pure functions, the LLM stages against a local fake Messages API,
and the pipeline with every flag off behaving exactly like the baseline."""

from __future__ import annotations

import json
import logging
import math

import pytest

from maxy.config import load_settings
from maxy.graph.guards import Caller
from maxy.graph.write import Edge, GraphWriter, NodeSpec
from maxy.search import SearchRequest, hybrid
from maxy.search import expansion
from maxy.search.classifier import classify
from maxy.search.fusion import merge, rrf, weighted
from maxy.search.hits import Hit
from maxy.search.pipeline import SearchFlags
from maxy.search.stages import apply_boosts, backlink_bump, dedup, route

from .fake_anthropic import FakeAnthropic


# ---- pure stages ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("count", "bump"), [(0, 0.0), (None, 0.0), (1, 0.05), (10, 0.10), (100, 0.15), (1000, 0.20), (10**6, 0.25)]
)
def test_backlink_bump_table(count, bump):
    assert backlink_bump(count) == pytest.approx(bump)


def test_boosts_multiply_the_combined_score():
    hits = [Hit("a", [], score=0.5), Hit("b", [], score=0.5), Hit("c", [], score=0.5)]
    n = apply_boosts(hits, {"a": {"compiledTruth": "x"}, "b": {"backlinkCount": 10}, "c": {}})
    assert n == 2
    assert [h.score for h in hits] == pytest.approx([0.575, 0.55, 0.5])


def test_four_layer_dedup_keeps_the_best_of_each_group():
    hits = [Hit(i, [], score=s) for i, s in [("a", 0.9), ("b", 0.8), ("c", 0.7), ("d", 0.6), ("e", 0.5)]]
    signals = {
        "a": {"slug": "acme", "name": "Acme Ltd"},
        "b": {"slug": "ACME"},  # same slug, case-insensitive
        "c": {"canonicalName": "acme ltd"},  # same canonical name as a's name
        "d": {"content": "Same  text"},
        "e": {"content": "same text"},  # same content hash (whitespace and case folded)
    }
    assert [h.node_id for h in dedup(hits, signals)] == ["a", "d"]


def test_routes_follow_the_spec():
    assert route(None) is None
    assert route("entity").labels == ("Person", "Company", "Concept", "Organization") and route("entity").vector_weight > 0.7
    assert route("temporal").labels == ("Event",) and route("temporal").vector_weight < 0.5
    assert route("event").bm25_only and route("none").skip
    assert route("general").labels is None and route("unknown-class").labels is None


def test_rrf_sums_reciprocal_ranks():
    a = Hit("a", [], vector_score=0.9, ranks={"vector:0": 1})
    b = Hit("b", [], bm25_raw=3.0, ranks={"bm25:0": 1})
    a2 = Hit("a", [], bm25_raw=1.0, ranks={"bm25:0": 2})
    hits = list(merge([a], [b, a2]).values())
    rrf(hits, 60)
    by = {h.node_id: h.score for h in hits}
    assert by["a"] == pytest.approx(1 / 61 + 1 / 62) and by["b"] == pytest.approx(1 / 61)


def test_weighted_keeps_best_score_per_path():
    hits = list(merge([Hit("a", [], vector_score=0.4), Hit("a", [], vector_score=0.8)], [Hit("a", [], bm25_raw=2.0), Hit("b", [], bm25_raw=1.0)]).values())
    weighted(hits, 0.7)
    by = {h.node_id: h for h in hits}
    assert by["a"].vector_score == 0.8 and by["a"].score == pytest.approx(0.7 * 0.8 + 0.3 * 1.0)
    assert by["b"].score == pytest.approx(0.0)


# ---- LLM stages against the fake Messages API ----------------------------------------
@pytest.fixture()
def llm(monkeypatch):
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        expansion.clear_cache()
        yield fake


def test_expansion_returns_paraphrases_and_caches(llm):
    llm.reply = json.dumps({"paraphrases": ["boiler fix", "heating repair", "furnace service", "boiler fix"]})
    settings = load_settings()
    got = expansion.expand_query(settings, "acc", "repair my boiler", "general")
    assert got == ["repair my boiler", "boiler fix", "heating repair", "furnace service"]
    calls = len(llm.requests)
    assert expansion.expand_query(settings, "acc", "repair my boiler", "general") == got
    assert len(llm.requests) == calls  # served from the one-hour cache
    expansion.expand_query(settings, "other-account", "repair my boiler", "general")
    assert len(llm.requests) == calls + 1  # the cache is keyed by account


@pytest.mark.parametrize("mode", ["500", "401", "malformed", "slow"])
def test_expansion_falls_back_to_the_original_query(llm, mode, caplog):
    caplog.set_level(logging.INFO, logger="maxy")
    llm.mode = mode
    llm.delay_s = 4.0
    assert expansion.expand_query(load_settings(), "acc", "boiler", None) == ["boiler"]
    assert "[query-expansion] fallback" in caplog.text


def test_expansion_without_key_is_the_original_query(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    expansion.clear_cache()
    assert expansion.expand_query(load_settings(ANTHROPIC_API_KEY=None), "acc", "boiler", None) == ["boiler"]


def test_classifier_admin_and_public_variants(llm, caplog):
    caplog.set_level(logging.INFO, logger="maxy")
    llm.reply = json.dumps(
        {"search": True, "query": "Acme boiler invoice", "reason": "asks about an invoice", "retrievalClass": "entity",
         "topicChange": True, "topicChangeConfidence": 0.8, "existingTopic": "billing"}
    )
    history = [{"role": "user", "content": f"m{i}"} for i in range(7)]
    admin = classify(load_settings(), "what about their invoice?", history, variant="admin")
    assert admin.search and admin.query == "Acme boiler invoice" and admin.retrieval_class == "entity"
    assert admin.topic_change is True and len(admin.history_used) == 4
    body = llm.requests[-1]["body"]
    assert body["max_tokens"] == 200 and body["model"] == "claude-haiku-4-5"
    assert "[admin-query-classifier]" in caplog.text and "topicChange=true" in caplog.text
    public = classify(load_settings(), "what about their invoice?", history, variant="public")
    assert public.topic_change is None and llm.requests[-1]["body"]["max_tokens"] == 120
    assert "[public-query-classifier] search=true effectiveQuery=" in caplog.text


@pytest.mark.parametrize("mode", ["500", "malformed", "slow"])
def test_classifier_failure_means_search_with_raw_message(llm, mode):
    llm.mode = mode
    llm.delay_s = 4.0
    result = classify(load_settings(), "hello there", [], variant="public")
    assert result.search and result.query is None and result.fallback
    assert result.effective_query("hello there") == "hello there"


def test_classifier_no_search_maps_to_class_none(llm):
    llm.reply = json.dumps({"search": False, "query": None, "reason": "greeting", "retrievalClass": "general"})
    result = classify(load_settings(), "thanks!", [], variant="admin")
    assert not result.search and result.retrieval_class == "none"


# ---- the pipeline with flags --------------------------------------------------------
@pytest.fixture()
def graph(db, account, embedder):
    w = GraphWriter(db, account, embedder)
    task = w.write(NodeSpec(["Task"], {"name": "import", "kind": "import"}))
    produced = [Edge("PRODUCED", task.node_id, "in")]
    acme = w.write(NodeSpec(["Company"], {"name": "Acme Boilers", "slug": "acme", "description": "boiler maker", "compiledTruth": "Acme makes boilers."}))
    w.write(NodeSpec(["Company"], {"name": "ACME boilers", "slug": "acme-2", "description": "boiler maker duplicate"}))
    w.write(NodeSpec(["Event"], {"name": "Boiler expo 2026", "description": "annual boiler trade fair in May"}))
    w.write(NodeSpec(["Person"], {"name": "Ada Boiler", "description": "boiler engineer", "backlinkCount": 100}, edges=produced))
    return acme.node_id


def test_all_flags_off_is_the_baseline(db, account, embedder, graph):
    caller = Caller(account.account_id)
    base = hybrid(db, caller, SearchRequest("boiler", limit=20), embedder)
    off = hybrid(db, caller, SearchRequest("boiler", limit=20, retrieval_class="entity"), embedder, SearchFlags())
    assert [(h.node_id, round(h.score, 9)) for h in base.hits] == [(h.node_id, round(h.score, 9)) for h in off.hits]


def test_each_flag_changes_behaviour(db, account, embedder, graph, caplog):
    caplog.set_level(logging.INFO, logger="maxy")
    caller = Caller(account.account_id)
    req = SearchRequest("boiler", limit=20, expand_hops=0)
    base = {h.node_id: h.score for h in hybrid(db, caller, req, embedder).hits}

    boosted = hybrid(db, caller, req, embedder, SearchFlags(boosts=True))
    assert boosted.stats["boosted"] == 2
    assert {h.node_id: h.score for h in boosted.hits}[graph] == pytest.approx(base[graph] * 1.15)

    deduped = hybrid(db, caller, req, embedder, SearchFlags(dedup=True))
    names = [h.properties.get("name", "").lower() for h in deduped.hits]
    assert names.count("acme boilers") == 1 and len(deduped.hits) == len(base) - 1

    rrf_resp = hybrid(db, caller, req, embedder, SearchFlags(rrf=True))
    assert rrf_resp.mode == "rrf" and all(h.score < 0.05 for h in rrf_resp.hits)

    routed = hybrid(db, caller, SearchRequest("boiler", retrieval_class="event"), embedder, SearchFlags(route=True))
    assert routed.mode == "bm25" and {tuple(h.labels) for h in routed.hits} == {("Event",)}
    entity = hybrid(db, caller, SearchRequest("boiler", retrieval_class="entity"), embedder, SearchFlags(route=True))
    assert {h.labels[0] for h in entity.hits} <= {"Person", "Company", "Concept", "Organization"}
    skipped = hybrid(db, caller, SearchRequest("hello", retrieval_class="none"), embedder, SearchFlags(route=True))
    assert skipped.hits == [] and skipped.mode == "skipped"
    line = [r.getMessage() for r in caplog.records if "retrievalClass=entity" in r.getMessage()][-1]
    for key in ("expansions=0", "boosted=", "deduped=", "final=", "mode=hybrid", "expand-ms="):
        assert key in line


def test_expansion_flag_unions_paraphrases(db, account, embedder, graph, llm):
    llm.reply = json.dumps({"paraphrases": ["trade fair", "annual exhibition", "expo event"]})
    settings = load_settings()
    caller = Caller(account.account_id)
    r = hybrid(db, caller, SearchRequest("boiler show"), embedder, SearchFlags(expansion=True, settings=settings))
    assert r.stats["expansions"] == 3
    assert any("Boiler expo 2026" == h.properties.get("name") for h in r.hits)
    llm.mode = "500"
    expansion.clear_cache()
    r = hybrid(db, caller, SearchRequest("boiler show"), embedder, SearchFlags(expansion=True, settings=settings))
    assert r.stats["expansions"] == 0 and r.hits


def test_log10_table_matches_spec_examples():
    assert 0.05 + 0.05 * math.log10(100) == pytest.approx(0.15)


def test_hyde_adds_hypothetical_vectors_and_caches(db, account, embedder, graph, llm, caplog):
    from maxy.search import hyde

    caplog.set_level(logging.INFO, logger="maxy")
    hyde.clear_cache()
    llm.reply = json.dumps(
        {"lenses": [{"label": "trade fair listing", "corpus": "documents"}, {"label": "visitor chat", "corpus": "messages"}],
         "document": "The annual boiler expo is a trade fair held every May for heating engineers."}
    )
    settings = load_settings()
    caller = Caller(account.account_id)
    base = hybrid(db, caller, SearchRequest("where can I see new boilers?"), embedder)
    with_hyde = hybrid(db, caller, SearchRequest("where can I see new boilers?"), embedder, SearchFlags(hyde=True, settings=settings))
    assert len(llm.requests) == 3  # one lens call, one document per lens
    assert "[hyde] accountId=" in caplog.text and "generated=2" in caplog.text
    assert with_hyde.stats["vector"] > base.stats["vector"]
    assert with_hyde.hits[0].properties["name"] == "Boiler expo 2026"
    hybrid(db, caller, SearchRequest("where can I see new boilers?"), embedder, SearchFlags(hyde=True, settings=settings))
    assert len(llm.requests) == 3, "lenses and documents come from the one-hour cache"
    hyde.clear_cache()
    llm.mode = "500"
    failed = hybrid(db, caller, SearchRequest("where can I see new boilers?"), embedder, SearchFlags(hyde=True, settings=settings))
    assert [h.node_id for h in failed.hits] == [h.node_id for h in base.hits]
    assert "[hyde] fallback" in caplog.text


def test_weighted_minmax_rescales_the_vector_list_like_bm25():
    vec = [Hit("a", [], vector_score=0.82, ranks={"vector:0": 1}), Hit("b", [], vector_score=0.78, ranks={"vector:0": 2}),
           Hit("c", [], vector_score=0.70, ranks={"vector:0": 3})]  # fmt: skip
    bm = [Hit("d", [], bm25_raw=9.0, ranks={"bm25:0": 1}), Hit("c", [], bm25_raw=3.0, ranks={"bm25:0": 2})]
    cos_hits = list(merge(vec, bm).values())
    weighted(cos_hits, 0.7, "cosine")
    by = {h.node_id: h.score for h in cos_hits}
    assert by["a"] == pytest.approx(0.7 * 0.82) and by["d"] == pytest.approx(0.3)
    mm_hits = list(merge(vec, bm).values())
    weighted(mm_hits, 0.7, "minmax")
    by = {h.node_id: h.score for h in mm_hits}
    assert by["a"] == pytest.approx(0.7)  # best cosine -> 1
    assert by["b"] == pytest.approx(0.7 * (0.08 / 0.12))
    assert by["c"] == pytest.approx(0.0)  # lowest cosine -> 0, lowest BM25 -> 0
    assert by["d"] == pytest.approx(0.3)  # found by BM25 only: no vector term
    one = list(merge([Hit("z", [], vector_score=0.5, ranks={"vector:0": 1})], []).values())
    weighted(one, 0.7, "minmax")
    assert one[0].score == pytest.approx(0.7)  # a single cosine scales to 1
    with pytest.raises(ValueError, match="vector_norm"):
        weighted(one, 0.7, "zscore")


def test_search_request_vector_norm_is_validated_and_defaults_to_the_embedder(db, account, embedder, graph):
    from maxy.errors import ValidationError

    with pytest.raises(ValidationError, match="vectorNorm"):
        SearchRequest("boiler", vector_norm="softmax").validated()
    caller = Caller(account.account_id)
    own = hybrid(db, caller, SearchRequest("boiler repair", expand_hops=0), embedder)
    norm = getattr(embedder, "fusion_vector_norm", "cosine")
    same = hybrid(db, caller, SearchRequest("boiler repair", expand_hops=0, vector_norm=norm), embedder)
    other = "cosine" if norm == "minmax" else "minmax"
    flipped = hybrid(db, caller, SearchRequest("boiler repair", expand_hops=0, vector_norm=other), embedder)
    assert [(h.node_id, round(h.score, 6)) for h in own.hits] == [(h.node_id, round(h.score, 6)) for h in same.hits]
    assert [round(h.score, 6) for h in own.hits] != [round(h.score, 6) for h in flipped.hits]


def test_search_with_vectors_from_another_model_degrades_to_bm25(db, account, embedder, graph):
    from maxy.schema import _record_embedder
    from maxy.search.retrieve import clear_index_cache

    caller = Caller(account.account_id)
    assert hybrid(db, caller, SearchRequest("boiler", expand_hops=0), embedder).mode == "hybrid"
    try:
        _record_embedder(db, "some-other-384-model", embedder.dimensions)
        clear_index_cache()
        response = hybrid(db, caller, SearchRequest("boiler", expand_hops=0), embedder)
        assert response.mode == "bm25" and response.hits
        assert any("stored vectors come from some-other-384-model" in w for w in response.warnings)
    finally:
        _record_embedder(db, embedder.name, embedder.dimensions)
        clear_index_cache()
    assert hybrid(db, caller, SearchRequest("boiler", expand_hops=0), embedder).mode == "hybrid"


def test_vector_only_search_with_vectors_from_another_model_still_answers_by_bm25(db, account, embedder, graph):
    from maxy.schema import _record_embedder
    from maxy.search.retrieve import clear_index_cache

    caller = Caller(account.account_id)
    try:
        _record_embedder(db, "some-other-384-model", embedder.dimensions)
        clear_index_cache()
        response = hybrid(db, caller, SearchRequest("boiler", expand_hops=0, fusion="vector"), embedder)
        assert response.mode == "bm25" and response.hits
        assert any("BM25-only" in w for w in response.warnings)
    finally:
        _record_embedder(db, embedder.name, embedder.dimensions)
        clear_index_cache()
