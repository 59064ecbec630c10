"""Members, profiles and networks against the real Neo4j: profiles with their HyDE documents
(model, template, cached), join policies (anyone, invite), leaving, and the member view rule."""

from __future__ import annotations

import pytest
from maxy.community import (
    MemberView,
    add_member,
    community_writer,
    create_network,
    get_profile,
    join_network,
    leave_network,
    list_networks,
    list_profiles,
    network_members,
    require_member,
    shared_networks,
    trace,
    upsert_profile,
    visible_member_clause,
)
from maxy.errors import ValidationError
from maxy.graph.guards import Caller
from maxy.graph.write import Edge, GraphWriter, NodeSpec


@pytest.fixture()
def writer(db, account, embedder):
    return community_writer(db, account, embedder, Caller(account.account_id), created_by="test")


def _profiles(writer, settings, *ids):
    for member in ids:
        upsert_profile(writer, member, name=member.title(), skills=["python"], model=False, settings=settings)


def _view(account, member):
    return MemberView(Caller(account.account_id), member)


def test_profile_is_embedded_with_a_template_hyde_without_a_key(writer, db, account, settings):
    out = upsert_profile(
        writer,
        "ada",
        name="Ada Lovelace",
        bio="Mathematician",
        location="London",
        skills=["analysis", "analysis", "notes"],
        interests=["engines"],
        settings=settings.model_copy(update={"ANTHROPIC_API_KEY": None}),
    )
    assert out["created"] and out["embedded"] and out["skills"] == ["analysis", "notes"]
    assert out["hyde"]["generatedBy"] == "template" and out["hyde"]["degradedReason"] == "no-key"
    assert "engines" in out["hyde"]["text"]
    rows = db.read(
        "MATCH (p:MemberProfile {memberId: 'ada'})-[:HAS_HYDE]->(h:ProfileHyde) WHERE p.accountId = $acc "
        "RETURN p.embedding IS NOT NULL AS pe, h.embedding IS NOT NULL AS he, h.text AS text",
        acc=account.account_id,
    )
    assert rows == [{"pe": True, "he": True, "text": out["hyde"]["text"]}]
    assert get_profile(db, _view(account, "ada"), "ada")["location"] == "London"


def test_profile_hyde_by_the_model_is_cached_until_the_profile_changes(writer, settings, monkeypatch):
    calls = []
    import maxy.community.members as members

    def fake_complete(_settings, prompt, **kwargs):
        calls.append((prompt, kwargs["model"]))
        return "Someone who builds analytical engines."

    monkeypatch.setattr(members, "complete", fake_complete)
    tuned = settings.model_copy(update={"MAXY_MODEL_PROFILE_HYDE_GENERATOR": "claude-test-model"})
    with trace.collecting():
        first = upsert_profile(writer, "ada", name="Ada", bio="Mathematician", settings=tuned)
        events = trace.collected()
    assert first["hyde"] == {
        "text": "Someone who builds analytical engines.",
        "generatedBy": "model",
        "cached": False,
        "degradedReason": None,
    }
    assert calls[0][1] == "claude-test-model"
    assert [e["type"] for e in events] == ["graph_start", "agent_start", "agent_end", "graph_end"]
    assert events[2]["name"] == "profile-hyde-generator" and events[2]["summary"] == "model"
    again = upsert_profile(writer, "ada", name="Ada", bio="Mathematician", settings=tuned)
    assert again["hyde"]["cached"] and len(calls) == 1 and not again["created"]
    upsert_profile(writer, "ada", name="Ada", bio="Engineer", settings=tuned)
    assert len(calls) == 2


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"name": ""}, "name"),
        ({"name": "A", "skills": "python"}, "skills"),
        ({"name": "A", "skills": [""]}, "skills[0]"),
        ({"name": "A", "bio": "x" * 5000}, "bio"),
    ],
)
def test_bad_profile_values_are_refused_by_field(writer, settings, kwargs, field):
    with pytest.raises(ValidationError) as err:
        upsert_profile(writer, "ada", model=False, settings=settings, **kwargs)
    assert err.value.field == field


@pytest.mark.parametrize("bad", ["", "-x", "a b", "x" * 65, "a/b"])
def test_bad_member_ids_are_refused(writer, settings, bad):
    with pytest.raises(ValidationError) as err:
        upsert_profile(writer, bad, name="X", model=False, settings=settings)
    assert err.value.field == "memberId"


def test_community_records_are_written_only_by_the_community(db, account, embedder):
    plain = GraphWriter(db, account, embedder)
    with pytest.raises(ValidationError, match="community"):
        plain.write(NodeSpec(["MemberProfile"], {"memberId": "eve", "name": "Eve"}))


def test_anyone_network_self_join_and_leave(writer, db, account, settings):
    _profiles(writer, settings, "ada", "bob", "cy")
    net = create_network(writer, "ada", name="Makers", prompt="people who build things")
    nid = net["networkId"]
    assert net["members"] == ["ada"] and net["joinPolicy"] == "anyone"
    # bob sees the open network before joining, without its members
    [seen] = list_networks(db, _view(account, "bob"))
    assert seen["networkId"] == nid and seen["joined"] is False and "members" not in seen
    assert get_profile(db, _view(account, "bob"), "ada") is None
    assert join_network(writer, "bob", nid)["joined"] is True
    assert join_network(writer, "bob", nid)["joined"] is False  # idempotent
    assert get_profile(db, _view(account, "bob"), "ada")["name"] == "Ada"
    assert shared_networks(db, Caller(account.account_id), "ada", "bob") == [nid]
    assert network_members(db, _view(account, "bob"), nid) == ["ada", "bob"]
    assert [p["memberId"] for p in list_profiles(db, _view(account, "ada"))] == ["ada", "bob"]
    # any member of an open network invites others; the invitee is in once they join
    assert add_member(writer, "bob", nid, "cy") == {
        "networkId": nid,
        "memberId": "cy",
        "status": "invited",
        "added": False,
    }
    assert [p["memberId"] for p in list_profiles(db, _view(account, "cy"))] == ["cy"]
    assert network_members(db, _view(account, "bob"), nid) == ["ada", "bob"]
    assert join_network(writer, "cy", nid)["joined"] is True
    assert [p["memberId"] for p in list_profiles(db, _view(account, "cy"))] == ["ada", "bob", "cy"]
    leave_network(writer, "bob", nid)
    assert get_profile(db, _view(account, "bob"), "ada") is None
    assert get_profile(db, _view(account, "ada"), "bob") is None
    assert shared_networks(db, Caller(account.account_id), "ada", "bob") == []
    with pytest.raises(ValidationError, match="owner cannot leave"):
        leave_network(writer, "ada", nid)
    with pytest.raises(ValidationError) as err:
        leave_network(writer, "bob", nid)  # already left
    assert err.value.field == "networkId"


def test_invite_network_only_its_owner_adds_and_it_stays_hidden(writer, db, account, settings):
    _profiles(writer, settings, "ada", "bob", "cy")
    nid = create_network(writer, "ada", name="Board", join_policy="invite")["networkId"]
    assert list_networks(db, _view(account, "bob")) == []
    with pytest.raises(ValidationError) as hidden:
        join_network(writer, "bob", nid)
    with pytest.raises(ValidationError) as absent:
        join_network(writer, "bob", "network-does-not-exist")
    assert str(hidden.value).replace(nid, "ID") == str(absent.value).replace("network-does-not-exist", "ID")
    invitation = add_member(writer, "ada", nid, "bob", member_prompt="advises on hiring")
    assert invitation["status"] == "invited"
    [offer] = list_networks(db, _view(account, "bob"))  # the invitee sees the network, not its members
    assert (offer["networkId"], offer["invited"], offer["joined"], "members" in offer) == (nid, True, False, False)
    assert (
        get_profile(db, _view(account, "bob"), "ada") is None and get_profile(db, _view(account, "ada"), "bob") is None
    )
    with pytest.raises(ValidationError, match="not a member of network"):
        add_member(writer, "bob", nid, "cy")  # an invitee is not a member yet
    assert join_network(writer, "bob", nid)["joined"] is True  # accepted
    assert get_profile(db, _view(account, "ada"), "bob")["name"] == "Bob"
    with pytest.raises(ValidationError, match="invite-only: only its owner invites members"):
        add_member(writer, "bob", nid, "cy")
    leave_network(writer, "bob", nid)
    with pytest.raises(ValidationError, match="no network"):
        join_network(writer, "bob", nid)  # once out, bob cannot come back by himself
    # inviting an id that names no member answers as an invitation does: no one learns who exists
    ghost = add_member(writer, "ada", nid, "nobody")
    assert {**ghost, "memberId": "cy"} == add_member(writer, "ada", nid, "cy")
    assert network_members(db, _view(account, "ada"), nid) == ["ada"]
    assert leave_network(writer, "cy", nid)["status"] == "left"  # declined
    assert list_networks(db, _view(account, "cy")) == []
    with pytest.raises(ValidationError, match="no network"):
        join_network(writer, "cy", nid)  # a declined invitation is gone
    # the account's admin adds anyone anywhere, at once, and is told when no such member exists
    assert add_member(writer, None, nid, "cy")["added"] is True
    assert network_members(db, MemberView(Caller(account.account_id)), nid) == ["ada", "cy"]
    with pytest.raises(ValidationError) as err:
        add_member(writer, None, nid, "nobody")
    assert err.value.field == "memberId" and "no member 'nobody'" in str(err.value)


def test_member_view_rule_for_intents_and_pairs(writer, db, account, settings):
    _profiles(writer, settings, "ada", "bob", "cy")
    nid = create_network(writer, "ada", name="Makers")["networkId"]
    other = create_network(writer, "cy", name="Solo")["networkId"]
    join_network(writer, "bob", nid)
    writer.write_many(
        [
            NodeSpec(["Intent"], {"memberId": "ada", "description": "seeking a welder"}, node_id=f"i-ada-{nid}"),
            NodeSpec(["Intent"], {"memberId": "bob", "description": "offering welding"}, node_id=f"i-bob-{nid}"),
            NodeSpec(["Opportunity"], {"memberIds": ["ada", "bob"]}, node_id=f"o-{nid}"),
        ]
    )
    # ada's intent is assigned to the shared network, bob's to cy's network
    writer.write(NodeSpec(["Intent"], {}, node_id=f"i-ada-{nid}", edges=[Edge("IN_NETWORK", nid)]))
    writer.write(NodeSpec(["Intent"], {}, node_id=f"i-bob-{nid}", edges=[Edge("IN_NETWORK", other)]))

    def seen(member, label, kind):
        guard = visible_member_clause(_view(account, member), "n", kind=kind)
        rows = db.read(f"MATCH (n:{label}) WHERE {guard.clause} RETURN n.nodeId AS id ORDER BY id", **guard.params)
        return [r["id"] for r in rows]

    assert seen("bob", "Intent", "intent") == [f"i-ada-{nid}", f"i-bob-{nid}"]
    assert seen("ada", "Intent", "intent") == [f"i-ada-{nid}"]  # bob's is in a network ada is not in
    assert seen("cy", "Intent", "intent") == []
    assert seen("ada", "Opportunity", "pair") == seen("bob", "Opportunity", "pair") == [f"o-{nid}"]
    assert seen("cy", "Opportunity", "pair") == []
    # an unassigned intent is hidden again
    writer.write(
        NodeSpec(
            ["Intent"], {}, node_id=f"i-ada-{nid}", edges=[Edge("IN_NETWORK", nid, properties={"unassignedAt": "x"})]
        )
    )
    assert seen("bob", "Intent", "intent") == [f"i-bob-{nid}"]


def test_a_pinned_view_naming_another_member_is_refused_as_unknown(db, account, writer, settings):
    _profiles(writer, settings, "ada", "bob")
    view = _view(account, "ada")
    assert view.resolve(None) == "ada" and view.resolve("ada") == "ada"
    with pytest.raises(ValidationError) as other:
        view.resolve("bob")
    with pytest.raises(ValidationError) as absent:
        require_member(db, view, "zed")
    assert str(other.value).replace("bob", "X") == str(absent.value).replace("zed", "X")


def test_another_account_sees_nothing(writer, db, account, make_account, embedder, settings):
    _profiles(writer, settings, "ada")
    create_network(writer, "ada", name="Makers")
    other = make_account("other")
    for view in (MemberView(Caller(other.account_id)), MemberView(Caller(other.account_id), "ada")):
        assert list_profiles(db, view) == [] and list_networks(db, view) == []


def _prompt(db, account, nid: str, member: str) -> str | None:
    rows = db.read(
        "MATCH (m:NetworkMembership {accountId: $acc, networkId: $nid, memberId: $m}) RETURN m.memberPrompt AS p",
        acc=account.account_id,
        nid=nid,
        m=member,
    )
    return rows[0]["p"] if rows else None


def test_a_members_prompt_is_theirs_once_they_are_in(writer, db, account, settings):
    _profiles(writer, settings, "ada", "bob")
    nid = create_network(writer, "ada", name="Makers")["networkId"]
    add_member(writer, "ada", nid, "bob", member_prompt="welds frames")  # the invitation suggests one
    join_network(writer, "bob", nid)
    assert _prompt(db, account, nid, "bob") == "welds frames"  # kept when bob gives none
    assert join_network(writer, "bob", nid, member_prompt="builds bikes")["joined"] is False
    assert _prompt(db, account, nid, "bob") == "builds bikes"  # joining again sets his own
    with pytest.raises(ValidationError, match="^memberPrompt: 'bob' is in network .* already: their prompt is theirs"):
        add_member(writer, "ada", nid, "bob", member_prompt="sells bikes")
    assert _prompt(db, account, nid, "bob") == "builds bikes"
    assert add_member(writer, None, nid, "bob", member_prompt="mentors")["added"] is False  # the admin may
    assert _prompt(db, account, nid, "bob") == "mentors"
