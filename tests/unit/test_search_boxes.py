"""The search pipeline's pure boxes, without a database: routing, fusion (with keyword
subscriptions as one more list), boosts, dedup, threshold/sort/slice, and the config and
request checks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from maxy.config import Settings
from maxy.errors import ValidationError
from maxy.search import BASELINE, MESSAGE_SEARCH, NON_LLM, SearchConfig, SearchRequest
from maxy.search.boost import apply_boosts, backlink_bump
from maxy.search.dedup import dedup
from maxy.search.fusion import fuse, merge, mode_for, rrf, weighted
from maxy.search.hits import Hit
from maxy.search.route import route_for
from maxy.search.threshold import cut


# ---- BOOST / DEDUP ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("count", "bump"),
    [(0, 0.0), (None, 0.0), ("x", 0.0), (1, 0.05), (10, 0.10), (100, 0.15), (1000, 0.20), (10**6, 0.25)],
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


# ---- ROUTE ----------------------------------------------------------------------------
def test_routes_by_retrieval_class():
    assert route_for(None) is None
    entity = route_for("entity")
    assert entity is not None and entity.labels == ("Person", "Company", "Concept", "Organization")
    assert entity.vector_weight > 0.7
    temporal, event, none, general = route_for("temporal"), route_for("event"), route_for("none"), route_for("general")
    assert temporal is not None and temporal.labels == ("Event",) and temporal.vector_weight < 0.5
    assert event is not None and event.bm25_only and none is not None and none.skip
    assert general is not None and general.labels is None


# ---- FUSE -----------------------------------------------------------------------------
def test_rrf_sums_reciprocal_ranks():
    a = Hit("a", [], vector_score=0.9, ranks={"vector:0": 1})
    b = Hit("b", [], bm25_raw=3.0, ranks={"bm25:0": 1})
    a2 = Hit("a", [], bm25_raw=1.0, ranks={"bm25:0": 2})
    hits = list(merge([a], [b, a2]).values())
    rrf(hits, 60)
    by = {h.node_id: h.score for h in hits}
    assert by["a"] == pytest.approx(1 / 61 + 1 / 62) and by["b"] == pytest.approx(1 / 61)


def test_weighted_keeps_best_score_per_path():
    vec = [Hit("a", [], vector_score=0.4), Hit("a", [], vector_score=0.8)]
    hits = list(merge(vec, [Hit("a", [], bm25_raw=2.0), Hit("b", [], bm25_raw=1.0)]).values())
    weighted(hits, 0.7)
    by = {h.node_id: h for h in hits}
    assert by["a"].vector_score == 0.8 and by["a"].score == pytest.approx(0.7 * 0.8 + 0.3 * 1.0)
    assert by["b"].score == pytest.approx(0.0)


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


@pytest.mark.parametrize(
    ("fusion", "vector", "bm25", "mode"),
    [("weighted", True, True, "hybrid"), ("rrf", True, True, "rrf"), ("rrf", True, False, "vector"),
     ("weighted", False, True, "bm25"), ("vector", True, False, "vector"), ("weighted", False, False, "none")],
)  # fmt: skip
def test_the_mode_is_decided_once_from_the_plan_and_the_paths_that_answered(fusion, vector, bm25, mode):
    assert mode_for(fusion, vector, bm25) == mode


def _lists():
    vector = [
        Hit("v1", [], vector_score=0.9, ranks={"vector:0": 1}),
        Hit("v2", [], vector_score=0.6, ranks={"vector:0": 2}),
    ]
    bm25 = [Hit("v1", [], bm25_raw=4.0, ranks={"bm25:0": 1}), Hit("b1", [], bm25_raw=2.0, ranks={"bm25:0": 2})]
    keyword = [
        Hit("k1", [], keyword_score=1.0, ranks={"keyword": 1}),
        Hit("v2", [], keyword_score=0.5, ranks={"keyword": 2}),
    ]
    return [vector, bm25, keyword]


def test_a_subscribed_hit_counts_as_a_bm25_match_in_the_weighted_sum():
    by = {h.node_id: h for h in fuse(_lists(), "hybrid", vector_weight=0.7, vector_norm="cosine")}
    assert by["k1"].score == pytest.approx(0.3 * 1.0)  # only subscribed: the keyword term alone
    assert by["v2"].score == pytest.approx(0.7 * 0.6 + 0.3 * 0.5)  # keyword beats its absent BM25
    assert by["v1"].score == pytest.approx(0.7 * 0.9 + 0.3 * 1.0)
    assert by["b1"].score == pytest.approx(0.0)  # lowest BM25 -> 0


def test_a_subscribed_hit_adds_its_reciprocal_rank_in_rrf():
    by = {h.node_id: h.score for h in fuse(_lists(), "rrf", vector_weight=0.7, rrf_k=60)}
    assert by["v2"] == pytest.approx(1 / 62 + 1 / 62) and by["k1"] == pytest.approx(1 / 61)


def test_single_path_modes_score_subscriptions_on_their_scale():
    vec = {h.node_id: h.score for h in fuse(_lists(), "vector", vector_weight=0.7)}
    assert vec["v1"] == pytest.approx(0.9) and vec["k1"] == pytest.approx(0.3)
    bm = {h.node_id: h.score for h in fuse(_lists(), "bm25", vector_weight=0.7)}
    assert bm["v1"] == pytest.approx(1.0) and bm["k1"] == pytest.approx(1.0) and bm["v2"] == pytest.approx(0.5)


def test_boosts_apply_to_subscribed_hits_after_fusion_so_one_scale_ranks_them():
    """A boosted hit keeps its boost when it is also subscribed, and is compared with every
    other hit on the same fused scale (subscriptions used to be re-scored after the pipeline,
    dropping the boost: a boosted 0.9775 fell behind an unboosted 0.90)."""
    vector = [Hit("boosted", [], vector_score=0.85, ranks={"vector:0": 1}),
              Hit("plain", [], vector_score=0.80, ranks={"vector:0": 2})]  # fmt: skip
    bm25 = [Hit("boosted", [], bm25_raw=2.0, ranks={"bm25:0": 1}), Hit("plain", [], bm25_raw=2.0, ranks={"bm25:0": 2})]
    keyword = [
        Hit("boosted", [], keyword_score=1.0, ranks={"keyword": 1}),
        Hit("plain", [], keyword_score=1.0, ranks={"keyword": 2}),
    ]
    hits = fuse([vector, bm25, keyword], "hybrid", vector_weight=0.5, vector_norm="cosine")
    apply_boosts(hits, {"boosted": {"compiledTruth": "the canonical summary"}})
    by = {h.node_id: h.score for h in hits}
    assert by["boosted"] == pytest.approx((0.5 * 0.85 + 0.5) * 1.15)  # 0.92 fused, 1.058 boosted
    assert by["plain"] == pytest.approx(0.5 * 0.80 + 0.5)  # 0.90
    assert [h.node_id for h in cut(hits, 0.0, 10)] == ["boosted", "plain"]


@given(st.lists(st.tuples(st.sampled_from("abcdef"), st.floats(0, 1)), max_size=20), st.floats(0, 1), st.integers(1, 8))
def test_cut_keeps_the_best_at_or_above_the_threshold_in_order(scored, threshold, limit):
    hits = [Hit(node, [], score=s) for node, s in scored]
    kept = cut(list(hits), threshold, limit)
    assert len(kept) == min(limit, sum(1 for h in hits if h.score >= threshold))
    assert all(h.score >= threshold for h in kept)
    assert [(-h.score, h.node_id) for h in kept] == sorted((-h.score, h.node_id) for h in kept)


# ---- config and request ---------------------------------------------------------------
def test_presets_are_frozen_and_keyword_only():
    assert BASELINE == SearchConfig() and not (BASELINE.route or BASELINE.boosts or BASELINE.dedup)
    assert NON_LLM.fusion == "rrf" and NON_LLM.route and NON_LLM.boosts and NON_LLM.dedup
    assert not (NON_LLM.expansion or NON_LLM.hyde)
    assert MESSAGE_SEARCH.vector_weight == 0.5
    assert MESSAGE_SEARCH.candidate_k < BASELINE.candidate_k  # messages keep the shallower lists
    with pytest.raises(TypeError):
        SearchConfig("rrf")  # type: ignore[misc]
    with pytest.raises(AttributeError):
        BASELINE.fusion = "rrf"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("changes", "field"),
    [({"fusion": "sum"}, "fusion"), ({"vector_weight": 1.5}, "vectorWeight"), ({"vector_weight": True}, "vectorWeight"),
     ({"vector_norm": "softmax"}, "vectorNorm"), ({"candidate_k": 0}, "candidate_k")],
)  # fmt: skip
def test_a_bad_config_names_the_knob(changes, field):
    with pytest.raises(ValidationError) as exc:
        BASELINE.with_(**changes)
    assert exc.value.field == field


def test_settings_switch_the_stages_on():
    settings = Settings(
        MAXY_GS_RRF=True, MAXY_GS_BOOSTS=True, MAXY_GS_DEDUP=True, MAXY_GS_ROUTE=True,
        KNOWLEDGE_KEYWORDS=["pricing", " ", "pricing", "launch"],
    )  # fmt: skip
    config = SearchConfig.from_settings(settings)
    assert (config.fusion, config.boosts, config.dedup, config.route) == ("rrf", True, True, True)
    assert config.keywords == ("pricing", "launch") and config.llm is settings
    assert SearchConfig.from_settings(settings, base=BASELINE.with_(fusion="bm25")).fusion == "bm25"
    assert SearchConfig.from_settings(Settings(), base=MESSAGE_SEARCH).vector_weight == 0.5


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"query": " "}, "query"), ({"query": "x", "limit": 0}, "limit"), ({"query": "x", "threshold": -1}, "threshold"),
     ({"query": "x", "retrieval_class": "people"}, "retrievalClass"), ({"query": "x", "session_id": " "}, "sessionId"),
     ({"query": "x", "fields": "name"}, "fields"), ({"query": "x", "expand_hops": True}, "expandHops")],
)  # fmt: skip
def test_a_bad_request_names_the_field(kwargs, field):
    with pytest.raises(ValidationError) as exc:
        SearchRequest(**kwargs).validated()
    assert exc.value.field == field


def test_a_request_is_normalised_and_keyword_only():
    req = SearchRequest("  boiler  ", limit=5, fields=["name"], retrieval_class="entity").validated()
    assert (req.query, req.limit, req.fields, req.retrieval_class) == ("boiler", 5, ("name",), "entity")
    with pytest.raises(TypeError):
        SearchRequest("boiler", 5)  # type: ignore[misc]


def test_merge_of_owned_lists_keeps_the_first_hit_and_merges_like_a_copy():
    def lists():
        return [Hit("a", [], vector_score=0.9, ranks={"vector:0": 1})], [
            Hit("b", [], bm25_raw=3.0, ranks={"bm25:0": 1}),
            Hit("a", [], bm25_raw=1.0, ranks={"bm25:0": 2}),
        ]

    vector, bm25 = lists()
    owned = merge(vector, bm25, owned=True)
    copied = merge(*lists())
    assert owned["a"] is vector[0] and owned["b"] is bm25[0]
    assert copied["a"] is not vector[0]
    for node_id in ("a", "b"):
        o, c = owned[node_id], copied[node_id]
        assert (o.vector_score, o.bm25_raw, o.ranks) == (c.vector_score, c.bm25_raw, c.ranks)
