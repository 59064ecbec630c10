"""The member guard, property-based against the real Neo4j: random members, networks (join
policies anyone and invite), joins, adds and leaves by members of two accounts, intents assigned
to networks and opportunities between pairs. A plain-Python oracle replays the join rules and
states who may see what; every read (profiles, networks, network members, intents, pairs) must
return exactly what it allows for every viewer: own records always, others' profiles and
intents only through a network both are in, a pair's records only for its two members, the
admin every member of its own account, and never anything of another account."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
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
    upsert_profile,
    visible_member_clause,
)
from maxy.errors import ValidationError
from maxy.graph.guards import Caller
from maxy.graph.write import Edge, NodeSpec

from tests.conftest import purge_account
from tests.hypothesis_profile import examples

MEMBERS = ["ada", "bob", "cy", "dee"]

network_strategy = st.fixed_dictionaries(
    {
        "account": st.sampled_from([0, 0, 1]),
        "owner": st.sampled_from(MEMBERS),
        "policy": st.sampled_from(["anyone", "invite"]),
        # (actor, action, member): join and leave are the member's own; add is by the actor
        "steps": st.lists(
            st.tuples(st.sampled_from(MEMBERS), st.sampled_from(["join", "add", "leave"]), st.sampled_from(MEMBERS)),
            max_size=6,
        ),
    }
)
world_strategy = st.fixed_dictionaries(
    {
        "members": st.tuples(  # who has a profile in each account
            st.sets(st.sampled_from(MEMBERS), min_size=1), st.sets(st.sampled_from(MEMBERS), min_size=1)
        ),
        "networks": st.lists(network_strategy, min_size=1, max_size=4),
        # (account, owner, networks by index it is assigned to, index of one later unassigned or None)
        "intents": st.lists(
            st.tuples(
                st.sampled_from([0, 1]),
                st.sampled_from(MEMBERS),
                st.sets(st.integers(0, 3), max_size=2),
                st.none() | st.integers(0, 3),
            ),
            max_size=5,
        ),
        "pairs": st.lists(
            st.tuples(st.sampled_from([0, 1]), st.sampled_from(MEMBERS), st.sampled_from(MEMBERS)), max_size=3
        ),
    }
)


class Oracle:
    """The rules, replayed in Python: which memberships are active, and which invited, after each step."""

    def __init__(self, members: tuple[set[str], set[str]]):
        self.members = members
        self.networks: list[dict] = []  # {account, owner, policy, active: set, invited: set, id}
        self.intents: list[dict] = []  # {account, owner, id, networks: the ones it is still assigned to}

    def create(self, account: int, owner: str, policy: str) -> bool:
        if owner not in self.members[account]:
            return False
        self.networks.append(
            {"account": account, "owner": owner, "policy": policy, "active": {owner}, "invited": set()}
        )
        return True

    def step(self, net: dict, actor: str, action: str, member: str) -> bool:
        exists = self.members[net["account"]]
        asked = net["active"] | net["invited"]
        if action == "join":
            return member in exists and (net["policy"] == "anyone" or member in asked)  # a repeat is a no-op
        if action == "add":  # by a member: an invitation, refused or not alike for any id
            return actor in net["active"] and (net["policy"] == "anyone" or actor == net["owner"])
        return member in asked and member != net["owner"]

    def apply(self, net: dict, action: str, member: str) -> None:
        """What an allowed step changes."""
        if action == "join":
            net["active"].add(member)
            net["invited"].discard(member)
        elif action == "add":
            if member in self.members[net["account"]] and member not in net["active"]:
                net["invited"].add(member)
        else:
            net["active"].discard(member)
            net["invited"].discard(member)

    def shared(self, account: int, a: str, b: str) -> bool:
        return any(n["account"] == account and {a, b} <= n["active"] for n in self.networks)

    def by_id(self) -> dict[str, dict]:
        return {n["id"]: n for n in self.networks if "id" in n}

    def intent_seen(self, account: int, viewer: str | None, intent: dict) -> bool:
        if intent["account"] != account:
            return False
        if viewer is None or viewer == intent["owner"]:
            return True
        nets = self.by_id()
        return any({viewer, intent["owner"]} <= nets[nid]["active"] for nid in intent["networks"])

    def profile_seen(self, account: int, viewer: str | None, member: str) -> bool:
        if member not in self.members[account]:
            return False
        return viewer is None or viewer == member or self.shared(account, viewer, member)


def _apply(w, net: dict, actor: str, action: str, member: str) -> None:
    if action == "join":
        join_network(w, member, net["id"])
    elif action == "add":
        add_member(w, actor, net["id"], member)
    else:
        leave_network(w, member, net["id"])


def _build_networks(oracle: Oracle, writers: list, networks: list[dict]) -> list[tuple[int, str]]:
    """Each network through the product's API; a refusal happens exactly when the oracle says so."""
    ids: list[tuple[int, str]] = []
    for spec in networks:
        w = writers[spec["account"]]
        allowed = oracle.create(spec["account"], spec["owner"], spec["policy"])
        try:
            made = create_network(w, spec["owner"], name="n", join_policy=spec["policy"])
        except ValidationError as err:
            assert not allowed and err.field == "memberId"
            continue
        assert allowed
        net = oracle.networks[-1]
        net["id"] = made["networkId"]
        ids.append((spec["account"], net["id"]))
        for actor, action, member in spec["steps"]:
            allowed = oracle.step(net, actor, action, member)
            try:
                _apply(w, net, actor, action, member)
            except ValidationError:
                assert not allowed, (action, actor, member, net)
                continue
            assert allowed, (action, actor, member, net)
            oracle.apply(net, action, member)
    return ids


def _write_intents(oracle: Oracle, writers: list, accounts: list, ids: list, specs: list) -> None:
    for n, (account, owner, assigned, unassigned) in enumerate(specs):
        if owner not in oracle.members[account]:
            continue
        targets = [ids[k][1] for k in sorted(assigned) if k < len(ids) and ids[k][0] == account]
        node_id = f"intent-{n}-{accounts[account].account_id[:8]}"
        edges = [Edge("IN_NETWORK", t) for t in targets]
        writers[account].write(
            NodeSpec(["Intent"], {"memberId": owner, "description": "x"}, node_id=node_id, edges=edges)
        )
        live = set(targets)
        if unassigned is not None and unassigned < len(ids) and ids[unassigned][1] in live:
            gone = Edge("IN_NETWORK", ids[unassigned][1], properties={"unassignedAt": "t"})
            writers[account].write(NodeSpec(["Intent"], {}, node_id=node_id, edges=[gone]))
            live.discard(ids[unassigned][1])
        oracle.intents.append({"account": account, "owner": owner, "id": node_id, "networks": live})


def _guarded(db, view: MemberView, label: str, kind: str) -> set[str]:
    guard = visible_member_clause(view, "n", kind=kind)  # type: ignore[arg-type]
    return {r["id"] for r in db.read(f"MATCH (n:{label}) WHERE {guard.clause} RETURN n.nodeId AS id", **guard.params)}


def _check_networks(db, oracle: Oracle, view: MemberView, a: int, viewer: str | None) -> None:
    by_id = oracle.by_id()
    mine = {k for k, n in by_id.items() if n["account"] == a and (viewer is None or viewer in n["active"])}
    open_ones = {k for k, n in by_id.items() if n["account"] == a and n["policy"] == "anyone"}
    asked = {k for k, n in by_id.items() if n["account"] == a and viewer is not None and viewer in n["invited"]}
    listed = {n["networkId"]: n for n in list_networks(db, view)}
    assert {k for k, n in listed.items() if n["joined"]} == mine
    assert {k for k, n in listed.items() if n["invited"]} == asked
    assert set(listed) == mine | open_ones | asked  # invite-only networks stay hidden from outsiders
    for nid in mine:
        assert set(listed[nid]["members"]) == by_id[nid]["active"]
        assert set(network_members(db, view, nid)) == by_id[nid]["active"]
    for nid in set(by_id) - mine - open_ones:
        with pytest.raises(ValidationError):
            network_members(db, view, nid)


@hsettings(max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(world=world_strategy)
def test_every_community_read_returns_exactly_what_the_member_rule_allows(db, settings, make_accounts, world):
    accounts = make_accounts
    for acc in accounts:
        purge_account(db, acc.account_id)
    writers = [community_writer(db, acc, None, Caller(acc.account_id), created_by="test") for acc in accounts]
    oracle = Oracle(world["members"])
    for i, members in enumerate(world["members"]):
        for member in sorted(members):
            upsert_profile(writers[i], member, name=member.title(), model=False, settings=settings)
    ids = _build_networks(oracle, writers, world["networks"])
    _write_intents(oracle, writers, accounts, ids, world["intents"])
    pairs = []
    for n, (account, a, b) in enumerate(world["pairs"]):
        node_id = f"pair-{n}-{accounts[account].account_id[:8]}"
        writers[account].write(NodeSpec(["Opportunity"], {"memberIds": [a, b]}, node_id=node_id))
        pairs.append({"account": account, "members": {a, b}, "id": node_id})

    for a, acc in enumerate(accounts):
        for viewer in [None, *MEMBERS]:
            view = MemberView(Caller(acc.account_id), viewer)
            want = {m for m in MEMBERS if oracle.profile_seen(a, viewer, m)}
            assert {p["memberId"] for p in list_profiles(db, view)} == want, (a, viewer)
            for member in MEMBERS:
                assert (get_profile(db, view, member) is not None) == (member in want), (a, viewer, member)
            _check_networks(db, oracle, view, a, viewer)
            seen = {i["id"] for i in oracle.intents if oracle.intent_seen(a, viewer, i)}
            assert _guarded(db, view, "Intent", "intent") == seen, (a, viewer)
            seen_pairs = {p["id"] for p in pairs if p["account"] == a and (viewer is None or viewer in p["members"])}
            assert _guarded(db, view, "Opportunity", "pair") == seen_pairs, (a, viewer)


@pytest.fixture()
def make_accounts(make_account):
    return [make_account("community-a"), make_account("community-b")]
