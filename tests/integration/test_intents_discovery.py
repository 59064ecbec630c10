"""Intents and discovery against the real Neo4j and the fake_messages Messages API: each path of the
intent pipeline (create, update, delete, propose; a vague intent enriched and verified again; an
assertive one dropped; explicit intents without a key), the indexer's assign and refuse at 0.7,
and discovery from an intent, from a query with lenses (cached the second time), the direct
path, the evaluator's fallback, and members outside shared networks never found."""

from __future__ import annotations

import re

import pytest
from maxy.community import MemberView, add_member, community_writer, create_network, trace, upsert_profile
from maxy.community.discovery import discover_opportunities
from maxy.community.intents import (
    assign_intent_network,
    create_intents,
    delete_intent,
    get_intent,
    read_intents,
    update_intent,
)
from maxy.errors import ValidationError
from maxy.graph.guards import Caller

PROFILES = {
    "ada": ("Ada", "Founder building a React app for community gardens", ["product", "gardening"]),
    "bob": ("Bob", "Senior React and TypeScript engineer who co-founds startups", ["react", "typescript"]),
    "cyd": ("Cyd", "Watercolour painter and art teacher", ["painting"]),
    "eve": ("Eve", "React engineer looking for a co-founder", ["react"]),
}


@pytest.fixture()
def writer(db, account, embedder):
    return community_writer(db, account, embedder, Caller(account.account_id), created_by="test")


@pytest.fixture()
def community(writer, nokey):
    """ada, bob and cyd share network "builders"; eve is only in "elsewhere" (with nobody else)."""
    for member, (name, bio, skills) in PROFILES.items():
        upsert_profile(writer, member, name=name, bio=bio, skills=skills, model=False, settings=nokey)
    builders = create_network(writer, "ada", name="builders")["networkId"]
    for member in ("bob", "cyd"):
        add_member(writer, None, builders, member)
    elsewhere = create_network(writer, "eve", name="elsewhere")["networkId"]
    return {"builders": builders, "elsewhere": elsewhere}


def _view(writer, member):
    return MemberView(writer.caller, member)


def _tools(fake_messages):
    return [r["body"].get("tool_choice", {}).get("name") for r in fake_messages.requests]


def _block(prompt, tag):
    found = re.findall(rf"<{tag}[^>]*>\n?(.*?)\n?</{tag}>", prompt, re.S)
    return found[-1].strip() if found else ""


def _verify(request, prompt):
    text = _block(prompt, "intent")
    if text.startswith("I think"):
        return {"speechAct": "ASSERTIVE", "felicity": {"authority": 50, "sincerity": 80, "clarity": 70}, "entropy": 0.3}
    if text == "find me a job":
        return {
            "speechAct": "DIRECTIVE",
            "felicity": {"authority": 80, "sincerity": 90, "clarity": 20},
            "entropy": 0.9,
            "enrichedDescription": "Looking for a React product engineering role",
        }
    act = "COMMISSIVE" if "offer" in text.lower() else "DIRECTIVE"
    return {"speechAct": act, "felicity": {"authority": 80, "sincerity": 90, "clarity": 85}, "entropy": 0.2}


def _infer(request, prompt):
    sentences = [s.strip() for s in _block(prompt, "text").split(".") if s.strip()]
    return {"intents": [{"description": s, "type": "offering" if "offer" in s else "seeking"} for s in sentences]}


# -- the intent pipeline ----------------------------------------------------------------------


def test_create_infers_verifies_drops_assertive_and_assigns_open_networks(writer, community, keyed, fake_messages):
    fake_messages.tool_inputs |= {"record_intents": _infer, "verify_intent": _verify}
    with trace.collecting():
        out = create_intents(
            writer,
            _view(writer, "ada"),
            keyed,
            content="Looking for a React co-founder. I think gardens are lovely. I offer product design help.",
        )
        events = trace.collected()
    assert [c["description"] for c in out["created"]] == [
        "Looking for a React co-founder",
        "I offer product design help",
    ]
    assert [c["type"] for c in out["created"]] == ["seeking", "offering"]
    assert all(c["verified"] and c["felicityClarity"] == 85 for c in out["created"])
    assert [d["speechAct"] for d in out["dropped"]] == ["ASSERTIVE"]
    assert not out["degraded"]
    # the builders network has no prompts: it takes the intents as they come
    assert out["created"][0]["networks"] == [
        {"networkId": community["builders"], "assigned": True, "method": "open", "score": 1.0}
    ]
    assert {e["name"] for e in events if e["type"] == "agent_end"} == {"intent-inferrer", "intent-verifier"}
    stored = read_intents(writer.db, _view(writer, "ada"), "ada")
    assert {i["description"] for i in stored} == {c["description"] for c in out["created"]}
    # bob shares the network the intents are in; eve does not and sees none of them
    assert len(read_intents(writer.db, _view(writer, "bob"), "ada")) == 2
    assert read_intents(writer.db, _view(writer, "eve"), "ada") == []
    with pytest.raises(ValidationError, match="no intent"):
        get_intent(writer.db, _view(writer, "eve"), out["created"][0]["intentId"])


def test_a_vague_intent_is_enriched_from_the_profile_and_verified_again(writer, community, keyed, fake_messages):
    fake_messages.tool_inputs["verify_intent"] = _verify
    out = create_intents(
        writer, _view(writer, "ada"), keyed, intents=[{"description": "find me a job", "type": "seeking"}]
    )
    (created,) = out["created"]
    assert created["description"] == "Looking for a React product engineering role"
    assert created["enrichedFrom"] == "find me a job" and created["verified"]
    assert created["felicityClarity"] == 85 and created["entropy"] == 0.2
    verify_prompts = [r for r in fake_messages.requests if r["body"]["tool_choice"]["name"] == "verify_intent"]
    assert len(verify_prompts) == 2
    assert "Founder building a React app" in verify_prompts[0]["body"]["messages"][0]["content"]  # the profile


def test_propose_verifies_without_storing(writer, community, keyed, fake_messages):
    fake_messages.tool_inputs |= {"record_intents": _infer, "verify_intent": _verify}
    out = create_intents(writer, _view(writer, "ada"), keyed, content="Looking for a mentor.", propose=True)
    assert [p["description"] for p in out["proposed"]] == ["Looking for a mentor"]
    assert out["proposed"][0]["speechAct"] == "DIRECTIVE"
    assert read_intents(writer.db, _view(writer, "ada"), "ada") == []


def test_reconciler_updates_and_expires_against_active_intents(writer, community, keyed, fake_messages):
    fake_messages.tool_inputs["verify_intent"] = _verify
    first = create_intents(
        writer,
        _view(writer, "ada"),
        keyed,
        intents=[
            {"description": "Looking for a React co-founder", "type": "seeking"},
            {"description": "Looking for a logo designer", "type": "seeking"},
        ],
    )
    cofounder, logo = (c["intentId"] for c in first["created"])
    fake_messages.tool_inputs["reconcile_intents"] = lambda request, prompt: {
        "actions": [
            {"action": "update", "intentId": cofounder, "candidate": 0},
            {"action": "expire", "intentId": logo},
            {"action": "expire", "intentId": "intent-not-hers"},
        ]
    }
    out = create_intents(
        writer,
        _view(writer, "ada"),
        keyed,
        intents=[{"description": "Looking for a React Native co-founder in Berlin", "type": "seeking"}],
    )
    assert out["created"] == [] and out["expired"] == [logo]
    assert out["updated"][0]["intentId"] == cofounder
    active = read_intents(writer.db, _view(writer, "ada"), "ada")
    assert [(i["intentId"], i["description"]) for i in active] == [
        (cofounder, "Looking for a React Native co-founder in Berlin")
    ]
    assert read_intents(writer.db, _view(writer, "ada"), "ada", status="expired")[0]["intentId"] == logo


def test_update_and_delete_own_intents_only(writer, community, keyed, fake_messages):
    fake_messages.tool_inputs["verify_intent"] = _verify
    (made,) = create_intents(
        writer, _view(writer, "ada"), keyed, intents=[{"description": "Looking for a mentor", "type": "seeking"}]
    )["created"]
    with pytest.raises(ValidationError, match="no intent"):
        update_intent(writer, _view(writer, "bob"), keyed, made["intentId"], description="hijacked")
    with pytest.raises(ValidationError, match="no intent"):
        delete_intent(writer, _view(writer, "bob"), made["intentId"])
    out = update_intent(writer, _view(writer, "ada"), keyed, made["intentId"], description="Looking for a UX mentor")
    assert out["updated"][0]["description"] == "Looking for a UX mentor" and out["updated"][0]["verified"]
    assert (
        get_intent(writer.db, _view(writer, "ada"), made["intentId"])["networks"][0]["networkId"]
        == community["builders"]
    )
    assert delete_intent(writer, _view(writer, "ada"), made["intentId"])["expired"] == [made["intentId"]]
    assert read_intents(writer.db, _view(writer, "ada"), "ada") == []
    assert read_intents(writer.db, _view(writer, "bob"), "ada", status="expired") != []


def test_without_a_key_explicit_intents_are_stored_as_written_and_unverified(writer, community, nokey):
    view = _view(writer, "ada")
    intents = [{"description": "  Looking for   a React co-founder ", "type": "seeking"}]
    out = create_intents(writer, view, nokey, intents=intents)
    (made,) = out["created"]
    assert made["description"] == "Looking for a React co-founder" and made["verified"] is False
    assert made["speechAct"] is None
    assert out["degraded"] and "no-key" in out["reason"]
    again = create_intents(writer, view, nokey, intents=intents)  # the same intent again: not repeated
    assert again["created"] == [] and len(read_intents(writer.db, view, "ada")) == 1
    text_only = create_intents(writer, view, nokey, content="I need a designer")
    assert text_only["created"] == [] and text_only["reason"] == "inference: no-key"
    with pytest.raises(ValidationError, match=r"intents\[0\]\.type"):
        create_intents(writer, view, nokey, intents=[{"description": "x", "type": "wanting"}])
    with pytest.raises(ValidationError, match="memberId"):
        create_intents(writer, view, nokey, member_id="bob", intents=intents)


def test_indexer_assigns_at_0_7_with_the_weighting_and_refuses_below(writer, community, keyed, nokey, fake_messages):
    scores = {}
    fake_messages.tool_inputs["score_intent_network"] = lambda request, prompt: scores
    ada = _view(writer, "ada")
    net = create_network(writer, "ada", name="investors", prompt="Early-stage investors and founders raising")
    net_id = net["networkId"]
    add_member(writer, None, net_id, "bob", member_prompt="I invest in garden tech")
    (made,) = create_intents(
        writer,
        _view(writer, "bob"),
        nokey,
        intents=[{"description": "Offering seed funding", "type": "offering"}],
        network_id=community["builders"],
    )["created"]
    bob = _view(writer, "bob")
    scores |= {"indexScore": 0.8, "memberScore": 0.5}  # 0.6 * 0.8 + 0.4 * 0.5 = 0.68
    refused = assign_intent_network(writer, bob, keyed, made["intentId"], net_id)
    assert refused["assigned"] is False and refused["score"] == pytest.approx(0.68)
    scores |= {"indexScore": 0.5, "memberScore": 1.0}  # 0.7
    taken = assign_intent_network(writer, bob, keyed, made["intentId"], net_id)
    assert taken["assigned"] and taken["score"] == pytest.approx(0.7) and taken["method"] == "indexer"
    assert {n["networkId"] for n in get_intent(writer.db, bob, made["intentId"])["networks"]} == {
        community["builders"],
        net_id,
    }
    # ada owns the network but only sees the prompt scores through her own view of it; without a key
    # the indexer cannot run and nothing is assigned
    (other,) = create_intents(writer, ada, nokey, intents=[{"description": "Raising a seed round", "type": "seeking"}])[
        "created"
    ]
    out = assign_intent_network(writer, ada, nokey, other["intentId"], net_id)
    assert out["assigned"] is False and out["degraded"] and out["reason"] == "no-key"
    assert assign_intent_network(writer, ada, nokey, other["intentId"], net_id, direct=True)["score"] == 1.0
    with pytest.raises(ValidationError, match="no network"):
        assign_intent_network(writer, ada, keyed, other["intentId"], community["elsewhere"], direct=True)
    with pytest.raises(ValidationError, match="no intent"):
        assign_intent_network(writer, ada, keyed, made["intentId"], net_id, direct=True)


# -- discovery --------------------------------------------------------------------------------


def _evaluate(request, prompt):
    out = []
    for n, name in re.findall(r'<candidate n="(\d+)">\n<profile>\nname: (\w+)', prompt):
        good = name == "Bob"
        out.append(
            {
                "candidate": int(n),
                "score": 92 if good else 40,
                "reasoning": f"{name} fits" if good else "no",
                "role": "agent",
            }
        )
    return {"evaluations": out}


def _lenses(request, prompt):
    return {
        "lenses": [
            {"label": "React engineer co-founder", "corpus": "profiles"},
            {"label": "React co-founder offer", "corpus": "intents"},
        ]
    }


def _hyde(request, prompt):
    return {"document": "A senior React and TypeScript engineer who co-founds startups and offers to build products."}


@pytest.fixture()
def discovery_fake(fake_messages):
    fake_messages.tool_inputs |= {
        "record_lenses": _lenses,
        "write_hypothetical_document": _hyde,
        "evaluate_opportunities": _evaluate,
        "verify_intent": _verify,
    }
    return fake_messages


def _intents(writer, settings, network):
    for member, text, kind in [
        ("bob", "I offer React engineering as a co-founder", "offering"),
        ("cyd", "Looking for watercolour students", "seeking"),
        ("eve", "I offer React engineering as a co-founder", "offering"),
    ]:
        net = network if member != "eve" else None
        create_intents(
            writer, _view(writer, member), settings, intents=[{"description": text, "type": kind}], network_id=net
        )


def test_discovery_from_a_query_with_lenses_cached_the_second_time(writer, community, keyed, nokey, discovery_fake):
    _intents(writer, nokey, community["builders"])
    view = _view(writer, "ada")
    with trace.collecting():
        first = discover_opportunities(writer, view, keyed, query="a React co-founder", persist=False)
        events = trace.collected()
    assert first["path"] == "query" and first["scope"] == [community["builders"]]
    assert [(x["label"], x["corpus"], x["cached"]) for x in first["lenses"]] == [
        ("React engineer co-founder", "profiles", False),
        ("React co-founder offer", "intents", False),
    ]
    assert [o["candidateMemberId"] for o in first["opportunities"]] == ["bob"]
    (bob,) = first["opportunities"]
    assert (bob["score"], bob["band"], bob["candidateRole"], bob["sourceRole"]) == (92, "must-meet", "agent", "patient")
    assert bob["networkId"] == community["builders"] and not first["degraded"]
    assert first["considered"] == 2  # bob and cyd: eve shares no network with ada
    names = [e["name"] for e in events if e["type"] == "agent_end"]
    assert names == ["lens-inferrer", "hyde-generator", "hyde-generator", "opportunity-evaluator"]
    assert {e["name"] for e in events if e["type"] == "graph_end"} == {"opportunity", "hyde"}
    evaluator = [r for r in discovery_fake.requests if r["body"]["tool_choice"]["name"] == "evaluate_opportunities"]
    assert "Eve" not in evaluator[0]["body"]["messages"][0]["content"]

    before = len(discovery_fake.requests)
    second = discover_opportunities(writer, view, keyed, query="a  React co-founder", persist=False)
    assert second["lensesCached"] and all(x["cached"] for x in second["lenses"])
    assert _tools(discovery_fake)[before:] == ["evaluate_opportunities"]
    assert [o["candidateMemberId"] for o in second["opportunities"]] == ["bob"]


def test_discovery_from_an_intent_and_the_evaluators_fallback(writer, community, keyed, nokey, discovery_fake):
    _intents(writer, nokey, community["builders"])
    (mine,) = create_intents(
        writer,
        _view(writer, "ada"),
        nokey,
        intents=[{"description": "Looking for a React co-founder", "type": "seeking"}],
    )["created"]
    out = discover_opportunities(writer, _view(writer, "ada"), keyed, intent_id=mine["intentId"], persist=False)
    assert out["path"] == "intent" and out["intentId"] == mine["intentId"]
    assert [o["candidateMemberId"] for o in out["opportunities"]] == ["bob"]

    degraded = discover_opportunities(writer, _view(writer, "ada"), nokey, intent_id=mine["intentId"], persist=False)
    assert degraded["degraded"] and "evaluation: no-key" in degraded["reason"]
    assert degraded["lensesCached"]  # the lenses the model inferred before serve without a key too
    fresh = discover_opportunities(writer, _view(writer, "ada"), nokey, query="a React engineer", persist=False)
    assert [(x["corpus"], x["label"]) for x in fresh["lenses"]] == [
        ("profiles", "a React engineer"),
        ("intents", "a React engineer"),
    ]
    assert "lenses: no-key" in fresh["reason"] and "evaluation: no-key" in fresh["reason"]
    assert degraded["considered"] == 2
    assert [o["candidateMemberId"] for o in degraded["opportunities"]] == ["bob"]  # the painter scores too low
    for o in degraded["opportunities"]:
        assert o["candidateMemberId"] in ("bob", "cyd") and o["score"] >= 70
        assert "similarity" in o["reasoning"] and o["score"] == round(o["explain"]["similarity"] * 100)
        if o["explain"]["via"] == "intent" and o["candidateMemberId"] == "bob":
            assert o["candidateRole"] == "agent"  # an offer meeting the source's need


def test_the_direct_path_and_members_outside_shared_networks(writer, community, keyed, nokey, discovery_fake):
    _intents(writer, nokey, community["builders"])
    view = _view(writer, "ada")
    before = len(discovery_fake.requests)
    out = discover_opportunities(writer, view, keyed, target_member_id="bob", query="a React co-founder", persist=False)
    assert out["path"] == "direct" and out["lenses"] == []
    assert _tools(discovery_fake)[before:] == ["evaluate_opportunities"]  # no lenses, no HyDE
    assert [(o["candidateMemberId"], o["networkId"], o["score"]) for o in out["opportunities"]] == [
        ("bob", community["builders"], 92)
    ]
    assert out["opportunities"][0]["explain"]["via"] == "direct"
    with pytest.raises(ValidationError, match="no member 'eve'"):
        discover_opportunities(writer, view, keyed, target_member_id="eve", persist=False)
    # the admin names eve, who shares no network with ada: no candidate
    admin = MemberView(writer.caller, None)
    assert (
        discover_opportunities(writer, admin, nokey, member_id="ada", target_member_id="eve", persist=False)[
            "opportunities"
        ]
        == []
    )
    # eve searches from her own network: nobody else is in it
    alone = discover_opportunities(writer, _view(writer, "eve"), nokey, query="a React founder", persist=False)
    assert alone["scope"] == [community["elsewhere"]] and alone["considered"] == 0
    with pytest.raises(ValidationError, match="no network"):
        discover_opportunities(writer, view, nokey, query="x", network_id=community["elsewhere"], persist=False)


def test_kept_candidates_become_opportunities_once(writer, community, keyed, nokey, discovery_fake):
    _intents(writer, nokey, community["builders"])
    view = _view(writer, "ada")
    first = discover_opportunities(writer, view, keyed, query="a React co-founder")
    assert first["persisted"]
    (made,) = [o["opportunity"] for o in first["opportunities"]]
    assert (made["status"], made["deduplicated"], made["candidateMemberId"], made["score"]) == (
        "latent",
        False,
        "bob",
        92,
    )
    assert (made["sourceRole"], made["candidateRole"], made["networkId"]) == ("patient", "agent", community["builders"])
    again = discover_opportunities(writer, view, keyed, query="a React co-founder")
    (second,) = [o["opportunity"] for o in again["opportunities"]]
    assert second["deduplicated"] and second["opportunityId"] == made["opportunityId"]


def test_a_failing_model_degrades_each_step_and_says_why(writer, community, keyed, nokey, fake_messages):
    fake_messages.mode = "wrong-tool"
    out = create_intents(
        writer, _view(writer, "bob"), keyed, intents=[{"description": "I offer React mentoring", "type": "offering"}]
    )
    assert out["created"][0]["verified"] is False and out["reason"] == "verification: unreadable-answer"
    fake_messages.mode = "500"
    found = discover_opportunities(writer, _view(writer, "ada"), keyed, query="a React mentor", persist=False)
    assert found["degraded"] and "lenses: api-error" in found["reason"] and "evaluation: api-error" in found["reason"]
    assert all("similarity" in o["reasoning"] for o in found["opportunities"])
