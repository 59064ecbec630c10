"""Hybrid search against the real Neo4j: ranking, fallbacks, guards on every path, output."""

from __future__ import annotations

import json
import logging
import os

import pytest
from maxy.errors import ValidationError
from maxy.graph.guards import Caller
from maxy.graph.schema import apply_schema
from maxy.graph.write import Edge, GraphWriter, NodeSpec
from maxy.search import BASELINE, SearchRequest, clear_index_cache, hybrid
from maxy.search.format import OUTPUT_BUDGET, project, render
from maxy.search.hits import Hit, Related
from maxy.search.reindex import count_missing, reindex

from tests.cli_inprocess import maxy
from tests.integration.test_graph_write import BrokenEmbedder


@pytest.fixture()
def shop(db, account, embedder, make_account):
    """A small graph: public services for agent 'alpha', an admin note, a deleted service,
    and a look-alike service in another account."""
    w = GraphWriter(db, account, embedder)
    boiler = w.write(
        NodeSpec(
            ["Service"],
            {"name": "Boiler repair", "description": "We fix gas boilers and central heating. Ref INV-2231."},
            scope="public",
            agents=["alpha"],
        )
    )
    w.write(
        NodeSpec(
            ["PriceSpecification"],
            {"name": "Call-out fee", "price": 85},
            scope="public",
            edges=[Edge("HAS_PRICE", boiler.node_id, "in")],
        )
    )
    w.write(
        NodeSpec(
            ["Review"],
            {"name": "Secret review", "reviewBody": "internal complaint"},
            scope="admin",
            edges=[Edge("HAS_REVIEW", boiler.node_id, "in")],
        )
    )
    w.write(
        NodeSpec(
            ["Review"],
            {"name": "Beta-only review", "reviewBody": "for beta"},
            scope="public",
            agents=["beta"],
            edges=[Edge("HAS_REVIEW", boiler.node_id, "in")],
        )
    )
    garden = w.write(
        NodeSpec(
            ["Service"],
            {"name": "Garden design", "description": "Landscaping and planting plans."},
            scope="public",
            agents=["alpha"],
        )
    )
    w.write(NodeSpec(["Note"], {"name": "Heating margin", "body": "boiler jobs earn 40% margin"}, scope="admin"))
    beta = w.write(
        NodeSpec(
            ["Service"],
            {"name": "Boiler servicing for beta", "description": "annual boiler check"},
            scope="public",
            agents=["beta"],
        )
    )
    gone = w.write(
        NodeSpec(
            ["Service"],
            {"name": "Boiler removal", "description": "old boiler disposal"},
            scope="public",
            agents=["alpha"],
        )
    )
    db.write("MATCH (n:Node {nodeId: $id}) SET n.deletedAt = '2026-01-01T00:00:00Z'", id=gone.node_id)
    other = GraphWriter(db, make_account("rival"), embedder)
    rival = other.write(
        NodeSpec(
            ["Service"],
            {"name": "Boiler repair", "description": "Rival boiler repair, gas boilers"},
            scope="public",
            agents=["alpha"],
        )
    )
    return {
        "boiler": boiler.node_id,
        "garden": garden.node_id,
        "beta": beta.node_id,
        "gone": gone.node_id,
        "rival": rival.node_id,
    }


def names(response):
    return [h.properties.get("name") for h in response.hits]


def test_hybrid_ranks_the_relevant_node_first_and_logs_one_line(db, account, embedder, shop, caplog):
    caplog.set_level(logging.INFO, logger="maxy")
    r = hybrid(db, Caller(account.account_id), SearchRequest("my central heating is broken"), embedder)
    assert r.mode == "hybrid" and r.hits[0].node_id == shop["boiler"]
    line = [m.getMessage() for m in caplog.records if m.getMessage().startswith("[graph-search:hybrid] accountId=")][-1]
    for key in ("vector=", "bm25=", "fused=", "deduped=", "final=", "mode=hybrid", "ms="):
        assert key in line
    assert f"accountId={account.account_id[:8]}" in line


def test_exact_identifier_found_through_bm25(db, account, embedder, shop):
    r = hybrid(db, Caller(account.account_id), SearchRequest("INV-2231"), embedder, BASELINE.with_(fusion="bm25"))
    assert r.mode == "bm25" and r.hits[0].node_id == shop["boiler"]


def test_scores_follow_the_weighted_formula(db, account, embedder, shop):
    caller = Caller(account.account_id)
    # The weighted sum read as raw cosines: 0.7 x cosine + 0.3 x min-max BM25.
    r = hybrid(
        db, caller, SearchRequest("boiler", expand_hops=0, limit=50), embedder, BASELINE.with_(vector_norm="cosine")
    )
    assert r.stats["fused"] <= 50  # every fused hit is here, so the min-max sets are complete
    for h in r.hits:
        assert h.score == pytest.approx(0.7 * h.vector_score + 0.3 * h.bm25_score)
        assert 0.0 <= h.bm25_score <= 1.0
    raw = [h.bm25_raw for h in r.hits if h.bm25_raw is not None]
    lo, hi = min(raw), max(raw)
    for h in r.hits:
        if h.bm25_raw is not None:
            assert h.bm25_score == pytest.approx(1.0 if hi == lo else (h.bm25_raw - lo) / (hi - lo))
    assert [h.score for h in r.hits] == sorted((h.score for h in r.hits), reverse=True)
    # min-max on the vector list too: the best cosine counts 1, the lowest the vector path
    # returned 0, a node only BM25 found gets no vector term.
    r = hybrid(
        db, caller, SearchRequest("boiler", expand_hops=0, limit=50), embedder, BASELINE.with_(vector_norm="minmax")
    )
    found = [h for h in r.hits if any(k.startswith("vector:") for k in h.ranks)]
    vlo, vhi = min(h.vector_score for h in found), max(h.vector_score for h in found)
    for h in r.hits:
        v = (h.vector_score - vlo) / (vhi - vlo) if h in found and vhi > vlo else (1.0 if h in found else 0.0)
        assert h.score == pytest.approx(0.7 * v + 0.3 * h.bm25_score)
    # Without vector_norm the embedder's own choice applies.
    default = hybrid(db, caller, SearchRequest("boiler", expand_hops=0, limit=50), embedder)
    own = hybrid(
        db,
        caller,
        SearchRequest("boiler", expand_hops=0, limit=50),
        embedder,
        BASELINE.with_(vector_norm=embedder.fusion_vector_norm),
    )
    assert [(h.node_id, h.score) for h in default.hits] == [(h.node_id, h.score) for h in own.hits]


@pytest.mark.parametrize("fusion", ["weighted", "rrf", "vector", "bm25"])
@pytest.mark.parametrize("query", ["boiler repair", "heating", "internal complaint", "landscaping"])
def test_public_agent_never_sees_other_account_deleted_admin_or_other_agent_nodes(
    db, account, embedder, shop, fusion, query
):
    caller = Caller(account.account_id, ("public",), "alpha")
    r = hybrid(db, caller, SearchRequest(query, limit=50), embedder, BASELINE.with_(fusion=fusion))
    for h in r.hits:
        assert h.node_id not in (shop["rival"], shop["gone"], shop["beta"])
        assert h.properties.get("scope") in (None, "public") and "alpha" in h.properties["agents"]
        for rel in h.related:
            assert rel.properties.get("scope") in (None, "public")
            assert rel.properties.get("agents") is None or "alpha" in rel.properties["agents"]
            assert rel.properties["name"] not in ("Secret review", "Beta-only review", "Boiler removal")


def test_admin_sees_admin_scope_but_never_deleted_or_other_accounts(db, account, embedder, shop):
    r = hybrid(db, Caller(account.account_id), SearchRequest("boiler", limit=50), embedder)
    ids = {h.node_id for h in r.hits}
    assert shop["beta"] in ids and shop["gone"] not in ids and shop["rival"] not in ids
    assert "Heating margin" in names(r)


def test_expansion_records_direction_and_compact_mode_has_none(db, account, embedder, shop):
    r = hybrid(db, Caller(account.account_id), SearchRequest("boiler repair", limit=1), embedder)
    rels = {(x.rel_type, x.direction, x.properties["name"]) for x in r.hits[0].related}
    assert ("HAS_PRICE", "outgoing", "Call-out fee") in rels
    assert ("HAS_REVIEW", "outgoing", "Secret review") in rels
    compact = hybrid(db, Caller(account.account_id), SearchRequest("boiler repair", limit=1, expand_hops=0), embedder)
    assert compact.hits[0].related == []


def test_label_filter(db, account, embedder, shop):
    r = hybrid(db, Caller(account.account_id), SearchRequest("boiler", labels=("Note",)), embedder)
    assert names(r) == ["Heating margin"]


def test_bm25_only_when_embedder_is_down(db, account, shop, caplog):
    caplog.set_level(logging.INFO, logger="maxy")
    r = hybrid(db, Caller(account.account_id), SearchRequest("boiler repair"), BrokenEmbedder())
    assert r.mode == "bm25" and r.hits and r.warnings
    assert "BM25-only" in caplog.text


@pytest.mark.alone  # drops the full-text index every account searches
def test_vector_only_when_fulltext_index_is_missing(db, account, embedder, shop):
    db.write("DROP INDEX entity_search IF EXISTS")
    clear_index_cache()
    try:
        r = hybrid(db, Caller(account.account_id), SearchRequest("central heating"), embedder)
        assert r.mode == "vector" and r.hits[0].node_id == shop["boiler"]
        assert any("entity_search" in w for w in r.warnings)
    finally:
        apply_schema(db, embedder.dimensions)  # also clears the index cache
    assert hybrid(db, Caller(account.account_id), SearchRequest("heating"), embedder).mode == "hybrid"


@pytest.mark.parametrize(
    ("request_kwargs", "field"),
    [
        ({"query": "   "}, "query"),
        ({"query": "x" * 5000}, "query"),
        ({"query": "x", "limit": 0}, "limit"),
        ({"query": "x", "limit": True}, "limit"),
        ({"query": "x", "labels": ("Nope",)}, "labels"),
        ({"query": "x", "labels": ("ToolCall",)}, "labels"),
        ({"query": "x", "expand_hops": 2}, "expandHops"),
        ({"query": "x", "fields": "name"}, "fields"),
    ],
)
def test_bad_requests_name_the_field(db, account, embedder, request_kwargs, field):
    with pytest.raises(ValidationError) as exc:
        hybrid(db, Caller(account.account_id), SearchRequest(**request_kwargs), embedder)
    assert exc.value.field == field


def test_fields_projection_rules(caplog):
    caplog.set_level(logging.INFO, logger="maxy")

    def make():
        return [
            Hit(
                "a",
                ["Person"],
                properties={"name": "Ada", "slug": "ada", "phone": "1"},
                related=[Related("KNOWS", "outgoing", ["Person"], {"name": "B", "x": 1})],
            )
        ]

    hits = make()
    project(hits, None)
    assert hits[0].properties == {"name": "Ada", "slug": "ada", "phone": "1"}
    hits = make()
    project(hits, ["name", "slug", "unknown"], "acc12345xx")
    assert hits[0].properties == {"name": "Ada", "slug": "ada"}
    assert hits[0].related[0].properties == {"name": "B", "x": 1}  # related is not projected
    assert "[memory-search] accountId=acc12345 fields=name,slug,unknown returnedProps=2 droppedProps=1" in caplog.text
    hits = make()
    project(hits, [])
    assert hits[0].properties == {}


def test_render_format_and_budget():
    hit = Hit("n1", ["Service", "LocalBusiness"], score=0.8766, properties={"name": "Boiler"})
    hit.related = [
        Related("HAS_PRICE", "outgoing", ["PriceSpecification"], {"price": 85}),
        Related("OFFERS", "incoming", ["LocalBusiness"], {"name": "Acme"}),
    ]
    text = render([hit, Hit("n2", ["Note"], score=0.5, properties={"name": "x"})])
    assert text.splitlines()[0] == "[Service, LocalBusiness] (id: n1) (score: 0.877)"
    assert "  name: Boiler" in text and "  Related:" in text
    assert "    --[HAS_PRICE]--> [PriceSpecification] {price: 85}" in text
    assert "    <--[OFFERS]-- [LocalBusiness] {name: Acme}" in text
    assert "\n---\n" in text
    big = [
        Hit(
            f"n{i}",
            ["Chunk"],
            score=1 - i / 100,
            properties={"content": "x" * 2000},
            related=[Related("NEXT", "outgoing", ["Chunk"], {"content": "y" * 300})] * 20,
        )
        for i in range(30)
    ]
    out = render(big)
    assert len(out) <= OUTPUT_BUDGET
    assert "(id: n29)" in out  # related nodes are dropped before any result
    assert "Related:" in out  # ... from the bottom up, so the top results keep theirs
    many = [Hit(f"n{i}", ["Chunk"], score=0.1, properties={"content": "z" * 3900}) for i in range(40)]
    out = render(many)
    assert len(out) <= OUTPUT_BUDGET and "left out to fit" in out


def test_reindex_backfills_embeddings_and_is_resumable(db, account, embedder):
    broken = GraphWriter(db, account, BrokenEmbedder())
    broken.write_many([NodeSpec(["Event"], {"name": f"Launch {i}", "description": "product launch"}) for i in range(5)])
    assert count_missing(db, account.account_id) == 5
    first = reindex(db, account, BrokenEmbedder())
    assert first["failed"] > 0 and first["remaining"] == 5
    done = reindex(db, account, embedder, batch_size=2)
    assert done["embedded"] == 5 and done["remaining"] == 0
    assert reindex(db, account, embedder)["embedded"] == 0
    r = hybrid(
        db, Caller(account.account_id), SearchRequest("product launch"), embedder, BASELINE.with_(fusion="vector")
    )
    assert len(r.hits) == 5


def test_cli_search_json(db, account, embedder, shop, data_root):
    env = dict(
        os.environ, ACCOUNT_ID=account.account_id, DATA_ROOT=str(data_root), ALLOWED_SCOPES="public", AGENT_SLUG="alpha"
    )
    proc = maxy(["search", "boiler", "--json", "--fields", "name", "--explain"], env)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["results"][0]["properties"] == {"name": "Boiler repair"}
    assert "explain" in data["results"][0]
    widen = maxy(["search", "boiler", "--scope", "admin"], env)
    assert widen.returncode == 2 and "cannot widen" in widen.stderr and "Traceback" not in widen.stderr


def test_vector_path_falls_back_when_the_filtered_search_fails_in_the_server(db, account, embedder, shop, caplog):
    """Fault injection around the real database: every filtered SEARCH fails as Neo4j 2026.08
    was seen failing; the exact fallback still answers, with every guard applied."""
    from tests.faults import FilteredSearchFails

    caplog.set_level(logging.INFO, logger="maxy")
    faulty = FilteredSearchFails(db)
    caller = Caller(account.account_id, ("public",), "alpha")
    normal = hybrid(
        db, caller, SearchRequest("my central heating is broken"), embedder, BASELINE.with_(fusion="vector")
    )
    try:
        r = hybrid(
            faulty, caller, SearchRequest("my central heating is broken"), embedder, BASELINE.with_(fusion="vector")
        )
        assert r.hits and r.hits[0].node_id == shop["boiler"]
        assert all(h.node_id not in (shop["rival"], shop["gone"], shop["beta"]) for h in r.hits)
        assert "reason=vector-filter-failed" in caplog.text and "fallback=exact-scan" in caplog.text
        # The exact scan finds what the index finds (this account is small: nothing is lost).
        assert [h.node_id for h in r.hits] == [h.node_id for h in normal.hits]
        assert [round(h.vector_score, 4) for h in r.hits] == [round(h.vector_score, 4) for h in normal.hits]
        # Marked: the next query skips the failing SEARCH and scans at once.
        caplog.clear()
        again = hybrid(
            faulty, caller, SearchRequest("my central heating is broken"), embedder, BASELINE.with_(fusion="vector")
        )
        assert [h.node_id for h in again.hits] == [h.node_id for h in r.hits]
        assert "vector-filter-failed" not in caplog.text
    finally:
        clear_index_cache()


def test_vector_search_survives_the_real_neo4j_filtered_search_bug(db, make_account, embedder, caplog):
    """No injection: build the index state that makes Neo4j 2026.08.1's filtered SEARCH fail
    (docs/neo4j-vector-filter-bug.md) and check that search still answers exactly."""
    import neo4j

    caplog.set_level(logging.INFO, logger="maxy")
    small, busy = make_account("vecbug-small"), make_account("vecbug-busy")
    mine = GraphWriter(db, small, embedder).write_many(
        [
            NodeSpec(["Review"], {"name": n, "description": d})
            for n, d in (
                ("Boiler review", "the boiler repair was quick and the engineer friendly"),
                ("Garden review", "lovely roses, slow delivery"),
                ("Laptop review", "battery lasts all day"),
            )
        ]  # fmt: skip
    )
    theirs = GraphWriter(db, busy, embedder).write_many(  # one transaction: the index's newest segment
        [NodeSpec(["Review"], {"name": f"Review {i}", "description": "parcel arrived damaged"}) for i in range(10)]
    )
    db.write("MATCH (n:Review {nodeId: $id}) DETACH DELETE n", id=theirs[0].node_id)  # a deletion in it
    vec = embedder.embed(["my boiler was repaired quickly"])[0]
    raw = (
        "CYPHER 25 MATCH (n:Review) SEARCH n IN (VECTOR INDEX review_embedding FOR $v "
        "WHERE n.accountId = $acc LIMIT 100) SCORE AS s RETURN n.nodeId AS id"
    )
    try:
        db.read(raw, v=vec, acc=small.account_id)
        server_fails = False  # a Neo4j release with the bug fixed
    except neo4j.exceptions.DatabaseError:
        server_fails = True
    try:
        r = hybrid(
            db,
            Caller(small.account_id),
            SearchRequest("my boiler was repaired quickly", labels=("Review",)),
            embedder,
            BASELINE.with_(fusion="vector"),
        )
        assert [h.node_id for h in r.hits][:1] == [mine[0].node_id]
        assert {h.node_id for h in r.hits} == {m.node_id for m in mine}  # exactly the account's three
        assert ("fallback=exact-scan" in caplog.text) == server_fails
    finally:
        clear_index_cache()
        db.write(
            "MATCH (n:Review) WHERE n.accountId IN $accs DETACH DELETE n", accs=[small.account_id, busy.account_id]
        )


def test_properties_brought_by_the_paths_match_those_loaded_after_fusion(db, account, embedder, shop):
    """A search returning most of its candidates carries their properties on the paths' rows;
    one returning a few loads them afterwards: the same hits, properties and guards either way."""
    public = Caller(account.account_id, ("public",), "alpha")
    deep = hybrid(db, public, SearchRequest("boiler", limit=100, expand_hops=0, min_relevance=0), embedder)
    few = hybrid(db, public, SearchRequest("boiler", limit=3, expand_hops=0, min_relevance=0), embedder)
    assert all(h.loaded for h in deep.hits) and names(deep)[:3] == names(few)
    assert {h.node_id: h.properties for h in deep.hits[:3]} == {h.node_id: h.properties for h in few.hits}
    seen = {h.node_id for h in deep.hits}
    assert shop["boiler"] in seen and not seen & {shop["beta"], shop["gone"], shop["rival"]}
    assert all("embedding" not in h.properties and "accountId" not in h.properties for h in deep.hits)


def test_each_path_brings_the_properties_load_properties_would(db, account, embedder, shop):
    from maxy.search.bm25 import bm25_search
    from maxy.search.graph_expansion import load_properties
    from maxy.search.vector import vector_search

    public = Caller(account.account_id, ("public",), "alpha")
    vector = vector_search(db, public, [embedder.embed(["boiler"])[0]], None, 10, properties=True)[0]
    bm25 = bm25_search(db, public, ["boiler"], None, 10, properties=True)[0]
    for carried in (vector, bm25):
        assert carried and all(h.loaded for h in carried)
        loaded = load_properties(db, public, [Hit(h.node_id, []) for h in carried])
        assert [(h.node_id, h.labels, h.properties) for h in carried] == [
            (h.node_id, h.labels, h.properties) for h in loaded
        ]
    bare = bm25_search(db, public, ["boiler"], None, 10, account_stats=False)[0]
    assert bare and not any(h.loaded or h.properties for h in bare)
