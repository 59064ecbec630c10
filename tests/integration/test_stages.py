"""The optional boxes against the real database: the LLM stages against a local fake Messages
API, and the pipeline with every stage off behaving exactly like the baseline. The pure
functions of each box are tested in ``tests/unit/test_search_boxes.py``."""

from __future__ import annotations

import json
import logging

import pytest
from maxy.config import load_settings
from maxy.graph.guards import Caller
from maxy.graph.write import Edge, GraphWriter, NodeSpec
from maxy.search import BASELINE, SearchRequest, hybrid
from maxy.search import query_expansion as expansion
from maxy.search.classifier import classify

from tests.cli_inprocess import maxy
from tests.fake_anthropic import FakeAnthropic
from tests.plugins_fixture.helpers import child_env


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
        {
            "search": True,
            "query": "Acme boiler invoice",
            "reason": "asks about an invoice",
            "retrievalClass": "entity",
            "topicChange": True,
            "topicChangeConfidence": 0.8,
            "existingTopic": "billing",
        }
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
    acme = w.write(
        NodeSpec(
            ["Company"],
            {
                "name": "Acme Boilers",
                "slug": "acme",
                "description": "boiler maker",
                "compiledTruth": "Acme makes boilers.",
            },
        )
    )
    w.write(NodeSpec(["Company"], {"name": "ACME boilers", "slug": "acme-2", "description": "boiler maker duplicate"}))
    w.write(NodeSpec(["Event"], {"name": "Boiler expo 2026", "description": "annual boiler trade fair in May"}))
    w.write(
        NodeSpec(
            ["Person"], {"name": "Ada Boiler", "description": "boiler engineer", "backlinkCount": 100}, edges=produced
        )
    )
    return acme.node_id


def test_all_flags_off_is_the_baseline(db, account, embedder, graph):
    caller = Caller(account.account_id)
    base = hybrid(db, caller, SearchRequest("boiler", limit=20), embedder)
    off = hybrid(db, caller, SearchRequest("boiler", limit=20, retrieval_class="entity"), embedder, BASELINE)
    assert [(h.node_id, round(h.score, 9)) for h in base.hits] == [(h.node_id, round(h.score, 9)) for h in off.hits]


def test_each_flag_changes_behaviour(db, account, embedder, graph, caplog):
    caplog.set_level(logging.INFO, logger="maxy")
    caller = Caller(account.account_id)
    req = SearchRequest("boiler", limit=20, expand_hops=0)
    base = {h.node_id: h.score for h in hybrid(db, caller, req, embedder).hits}

    boosted = hybrid(db, caller, req, embedder, BASELINE.with_(boosts=True))
    assert boosted.stats["boosted"] == 2
    assert {h.node_id: h.score for h in boosted.hits}[graph] == pytest.approx(base[graph] * 1.15)

    deduped = hybrid(db, caller, req, embedder, BASELINE.with_(dedup=True))
    names = [h.properties.get("name", "").lower() for h in deduped.hits]
    assert names.count("acme boilers") == 1 and len(deduped.hits) == len(base) - 1

    rrf_resp = hybrid(db, caller, req, embedder, BASELINE.with_(fusion="rrf"))
    assert rrf_resp.mode == "rrf" and all(h.score < 0.05 for h in rrf_resp.hits)

    routed = hybrid(db, caller, SearchRequest("boiler", retrieval_class="event"), embedder, BASELINE.with_(route=True))
    assert routed.mode == "bm25" and {tuple(h.labels) for h in routed.hits} == {("Event",)}
    entity = hybrid(db, caller, SearchRequest("boiler", retrieval_class="entity"), embedder, BASELINE.with_(route=True))
    assert {h.labels[0] for h in entity.hits} <= {"Person", "Company", "Concept", "Organization"}
    skipped = hybrid(db, caller, SearchRequest("hello", retrieval_class="none"), embedder, BASELINE.with_(route=True))
    assert skipped.hits == [] and skipped.mode == "skipped"
    line = [r.getMessage() for r in caplog.records if "retrievalClass=entity" in r.getMessage()][-1]
    for key in ("expansions=0", "boosted=", "deduped=", "final=", "mode=hybrid", "expand-ms="):
        assert key in line


def test_expansion_flag_unions_paraphrases(db, account, embedder, graph, llm):
    llm.reply = json.dumps({"paraphrases": ["trade fair", "annual exhibition", "expo event"]})
    settings = load_settings()
    caller = Caller(account.account_id)
    r = hybrid(db, caller, SearchRequest("boiler show"), embedder, BASELINE.with_(expansion=True, llm=settings))
    assert r.stats["expansions"] == 3
    assert any("Boiler expo 2026" == h.properties.get("name") for h in r.hits)
    llm.mode = "500"
    expansion.clear_cache()
    r = hybrid(db, caller, SearchRequest("boiler show"), embedder, BASELINE.with_(expansion=True, llm=settings))
    assert r.stats["expansions"] == 0 and r.hits


def test_hyde_adds_hypothetical_vectors_and_caches(db, account, embedder, graph, llm, caplog):
    from maxy.search import hyde

    caplog.set_level(logging.INFO, logger="maxy")
    hyde.clear_cache()
    llm.reply = json.dumps(
        {
            "lenses": [
                {"label": "trade fair listing", "corpus": "documents"},
                {"label": "visitor chat", "corpus": "messages"},
            ],
            "document": "The annual boiler expo is a trade fair held every May for heating engineers.",
        }
    )
    settings = load_settings()
    caller = Caller(account.account_id)
    base = hybrid(db, caller, SearchRequest("where can I see new boilers?"), embedder)
    with_hyde = hybrid(
        db, caller, SearchRequest("where can I see new boilers?"), embedder, BASELINE.with_(hyde=True, llm=settings)
    )
    assert len(llm.requests) == 3  # one lens call, one document per lens
    assert "[hyde] accountId=" in caplog.text and "generated=2" in caplog.text
    assert with_hyde.stats["vector"] > base.stats["vector"]
    assert with_hyde.hits[0].properties["name"] == "Boiler expo 2026"
    hybrid(db, caller, SearchRequest("where can I see new boilers?"), embedder, BASELINE.with_(hyde=True, llm=settings))
    assert len(llm.requests) == 3, "lenses and documents come from the one-hour cache"
    hyde.clear_cache()
    llm.mode = "500"
    failed = hybrid(
        db, caller, SearchRequest("where can I see new boilers?"), embedder, BASELINE.with_(hyde=True, llm=settings)
    )
    assert [h.node_id for h in failed.hits] == [h.node_id for h in base.hits]
    assert "[hyde] fallback" in caplog.text


def test_search_request_vector_norm_is_validated_and_defaults_to_the_embedder(db, account, embedder, graph):
    from maxy.errors import ValidationError

    with pytest.raises(ValidationError, match="vectorNorm"):
        BASELINE.with_(vector_norm="softmax")
    caller = Caller(account.account_id)
    own = hybrid(db, caller, SearchRequest("boiler repair", expand_hops=0), embedder)
    norm = getattr(embedder, "fusion_vector_norm", "cosine")
    same = hybrid(db, caller, SearchRequest("boiler repair", expand_hops=0), embedder, BASELINE.with_(vector_norm=norm))
    other = "cosine" if norm == "minmax" else "minmax"
    flipped = hybrid(
        db, caller, SearchRequest("boiler repair", expand_hops=0), embedder, BASELINE.with_(vector_norm=other)
    )
    assert [(h.node_id, round(h.score, 6)) for h in own.hits] == [(h.node_id, round(h.score, 6)) for h in same.hits]
    assert [round(h.score, 6) for h in own.hits] != [round(h.score, 6) for h in flipped.hits]


@pytest.mark.alone  # records another embedding model for the whole database
def test_search_with_vectors_from_another_model_degrades_to_bm25(db, account, embedder, graph):
    from maxy.graph.schema import _record_embedder
    from maxy.search import clear_index_cache

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


@pytest.mark.alone  # records another embedding model for the whole database
def test_vector_only_search_with_vectors_from_another_model_still_answers_by_bm25(db, account, embedder, graph):
    from maxy.graph.schema import _record_embedder
    from maxy.search import clear_index_cache

    caller = Caller(account.account_id)
    try:
        _record_embedder(db, "some-other-384-model", embedder.dimensions)
        clear_index_cache()
        response = hybrid(db, caller, SearchRequest("boiler", expand_hops=0), embedder, BASELINE.with_(fusion="vector"))
        assert response.mode == "bm25" and response.hits
        assert any("BM25-only" in w for w in response.warnings)
    finally:
        _record_embedder(db, embedder.name, embedder.dimensions)
        clear_index_cache()


# ---- keyword subscriptions inside FUSE ------------------------------------------------
@pytest.fixture()
def subscribed(db, account, embedder):
    w = GraphWriter(db, account, embedder)
    body = "Our pricing tiers for boiler servicing contracts."
    boosted = w.write(NodeSpec(["Article"], {"name": "Pricing tiers", "body": body, "keywords": ["pricing"],
                                             "compiledTruth": "Three tiers: basic, plus, premium."}))  # fmt: skip
    plain = w.write(NodeSpec(["Article"], {"name": "Pricing notes", "body": body + " Draft.", "keywords": ["pricing"]}))
    w.write(NodeSpec(["Article"], {"name": "Boiler servicing", "body": "How a boiler service visit goes."}))
    return boosted.node_id, plain.node_id


def test_subscriptions_are_fused_once_so_boosts_and_limits_hold(db, account, embedder, subscribed, caplog):
    caplog.set_level(logging.INFO, logger="maxy")
    boosted_id, plain_id = subscribed
    caller = Caller(account.account_id)
    req = SearchRequest("boiler servicing contracts", limit=10, expand_hops=0)
    base = hybrid(db, caller, req, embedder, BASELINE.with_(keywords=("pricing",)))
    with_boost = hybrid(db, caller, req, embedder, BASELINE.with_(keywords=("pricing",), boosts=True))
    fused = {h.node_id: h.score for h in base.hits}
    got = {h.node_id: h.score for h in with_boost.hits}
    assert got[boosted_id] == pytest.approx(fused[boosted_id] * 1.15)  # the boost survives the subscription
    assert got[plain_id] == pytest.approx(fused[plain_id])
    assert [h.score for h in with_boost.hits] == sorted((h.score for h in with_boost.hits), reverse=True)
    assert with_boost.stats["keyword"] == 2 and all(
        "keyword" in h.ranks for h in with_boost.hits if h.node_id in (boosted_id, plain_id)
    )
    one = hybrid(db, caller, SearchRequest("boiler servicing contracts", limit=1, expand_hops=0), embedder,
                 BASELINE.with_(keywords=("pricing",), boosts=True))  # fmt: skip
    assert len(one.hits) == 1 and one.hits[0].node_id == with_boost.hits[0].node_id  # the limit holds once
    line = [r.getMessage() for r in caplog.records if r.getMessage().startswith("[graph-search:hybrid] accountId=")][-1]
    assert "keyword=2" in line


def test_the_cli_fuses_subscriptions_like_the_tool(db, account, subscribed, data_root):
    boosted_id, _ = subscribed
    env = child_env(data_root, ACCOUNT_ID=account.account_id, KNOWLEDGE_KEYWORDS="pricing")
    env.update(MAXY_GS_BOOSTS="true", MAXY_LOG_LEVEL="WARNING")
    proc = maxy(["search", "pricing tiers", "--json", "--expand-hops", "0"], env, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["stats"]["keyword"] == 2 and out["stats"]["boosted"] >= 1
    assert out["results"][0]["nodeId"] == boosted_id


# ---- ROUTE: a class from the caller, or from the classifier ---------------------------
def test_routing_without_a_class_asks_the_classifier(db, account, embedder, graph, llm, caplog):
    caplog.set_level(logging.INFO, logger="maxy")
    llm.reply = json.dumps({"search": True, "query": None, "reason": "an event", "retrievalClass": "event",
                            "topicChange": False, "topicChangeConfidence": 0.1, "existingTopic": None})  # fmt: skip
    caller = Caller(account.account_id)
    routed = hybrid(db, caller, SearchRequest("boiler"), embedder, BASELINE.with_(route=True, llm=load_settings()))
    assert routed.mode == "bm25" and {tuple(h.labels) for h in routed.hits} == {("Event",)}
    assert "[admin-query-classifier]" in caplog.text and "retrievalClass=event" in caplog.text
    given = hybrid(
        db,
        caller,
        SearchRequest("boiler", retrieval_class="entity"),
        embedder,
        BASELINE.with_(route=True, llm=load_settings()),
    )
    assert {h.labels[0] for h in given.hits} <= {"Person", "Company", "Concept", "Organization"}


def test_routing_without_an_api_key_degrades_to_the_unrouted_search(db, account, embedder, graph, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    caller = Caller(account.account_id)
    base = hybrid(db, caller, SearchRequest("boiler", expand_hops=0), embedder)
    routed = hybrid(db, caller, SearchRequest("boiler", expand_hops=0), embedder,
                    BASELINE.with_(route=True, llm=load_settings(ANTHROPIC_API_KEY=None)))  # fmt: skip
    assert [(h.node_id, round(h.score, 9)) for h in routed.hits] == [(h.node_id, round(h.score, 9)) for h in base.hits]
    assert any("query classifier unavailable" in w for w in routed.warnings)


def test_memory_search_takes_a_retrieval_class(settings, db, account, embedder, graph):
    from maxy.plugins import ToolContext, ToolError
    from maxy.plugins.discovery import load_plugin

    search = load_plugin("maxy_plugins.memory").tool("memory-search")
    assert search is not None
    routed_settings = settings.model_copy(update={"ACCOUNT_ID": account.account_id, "MAXY_GS_ROUTE": True})
    ctx = ToolContext(settings=routed_settings, role="admin", caller=Caller(account.account_id), account=account,
                      embedder=embedder, _db=db)  # fmt: skip
    events = search.spec.fn(ctx, query="boiler", limit=20, retrievalClass="event")
    assert "[Event]" in events and "[Company]" not in events and "[Person]" not in events
    people = search.spec.fn(ctx, query="boiler", limit=20, retrievalClass="entity")
    assert "[Event]" not in people and ("[Company]" in people or "[Person]" in people)
    assert search.spec.fn(ctx, query="hello", retrievalClass="none") == "No results."
    with pytest.raises(ToolError, match="retrievalClass: one of entity"):
        search.spec.fn(ctx, query="boiler", retrievalClass="people")
