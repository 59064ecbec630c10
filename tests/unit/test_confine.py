"""The write-confinement rules as pure functions (no database): what a pinned view may create
and change, and the per-view id root."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st
from maxy.errors import GraphWriteError, ValidationError
from maxy.graph.confine import check_confined, default_visibility, id_root, is_confined, not_writable, resolve_update
from maxy.graph.guards import Caller

ACC = "4f1c2a8e-0000-4000-8000-000000000001"
SCOPES = ("public", "shared", "admin")
scope_pins = st.one_of(st.none(), st.sets(st.sampled_from(SCOPES), min_size=1).map(lambda s: tuple(sorted(s))))
callers = st.builds(Caller, st.just(ACC), scope_pins, st.sampled_from([None, "a", "b"]))
scopes = st.sampled_from([None, *SCOPES])
agent_lists = st.one_of(st.none(), st.lists(st.sampled_from(["a", "b", "c"]), max_size=3))


def visible(caller: Caller, scope: str | None, agents: list[str] | None) -> bool:
    """The read guard's scope and agent layers, in plain Python."""
    scope_ok = caller.allowed_scopes is None or scope is None or scope in caller.allowed_scopes
    agent_ok = caller.agent_slug is None or (agents is not None and caller.agent_slug in agents)
    return scope_ok and agent_ok


@given(callers, scopes, agent_lists)
def test_a_new_node_is_either_confined_or_refused(caller: Caller, scope, agents) -> None:
    s, a = default_visibility(caller, scope, agents)
    try:
        check_confined(caller, s, a)
    except ValidationError as err:
        assert caller.pinned and not is_confined(caller, s, a)
        assert err.field in ("scope", "agents") and "nothing was written" in str(err)
    else:
        assert is_confined(caller, s, a) and visible(caller, s, a)  # what it writes, it can read back


@given(callers)
def test_defaults_land_in_the_most_private_pinned_scope_and_the_pinned_agent(caller: Caller) -> None:
    scope, agents = default_visibility(caller, None, None)
    if caller.allowed_scopes is None:
        assert scope is None
    else:
        assert scope == next(s for s in ("admin", "shared", "public") if s in caller.allowed_scopes)
    assert agents == ([caller.agent_slug] if caller.agent_slug else None)
    if caller.pinned:
        assert is_confined(caller, scope, agents)


@given(callers, scopes, agent_lists, scopes, agent_lists)
def test_an_update_moves_visibility_only_between_confined_states(caller: Caller, old_s, old_a, new_s, new_a) -> None:
    old_agents = sorted(set(old_a)) if old_a is not None else None
    final_s = old_s if new_s is None else new_s
    final_a = old_agents if new_a is None else sorted(set(new_a))
    changed = (final_s, final_a) != (old_s, old_agents)
    allowed = (
        not caller.pinned
        or not changed
        or (is_confined(caller, old_s, old_a) and is_confined(caller, final_s, final_a))
    )
    if allowed:
        resolve_update(caller, (old_s, old_a), new_s, new_a)
    else:
        with pytest.raises(ValidationError):
            resolve_update(caller, (old_s, old_a), new_s, new_a)


def test_view_key_and_id_root() -> None:
    assert Caller(ACC).view_key is None and id_root(Caller(ACC)) == ACC
    pins = [(s, a) for s in (None, ("public",), ("public", "shared"), ("shared",)) for a in (None, "a", "b")]
    keys = {Caller(ACC, s, a).view_key for s, a in pins if s or a}
    assert len(keys) == len([p for p in pins if p[0] or p[1]])  # every pinned view has its own ids
    for perm in itertools.permutations(("public", "shared", "admin")):
        assert Caller(ACC, perm, "a").view_key == Caller(ACC, ("admin", "public", "shared"), "a").view_key
    assert id_root(Caller(ACC, ("public",), "a")).startswith(ACC + "\x1f")


def test_the_refusal_names_the_field_and_the_id_only() -> None:
    err = not_writable("edges[0].target", "n-1")
    assert isinstance(err, GraphWriteError) and err.reason == "not-writable"
    assert str(err) == "edges[0].target: no node 'n-1' that you can write; nothing was written"
