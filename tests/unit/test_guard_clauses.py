"""Guard clauses: the generated Cypher of each layer, checked without a database."""

from __future__ import annotations

import pytest
from maxy.errors import ValidationError
from maxy.graph.guards import Caller, deleted_guard, node_guard, related_guard


# ---- unit checks -----------------------------------------------------------------------
def test_admin_guard_has_account_and_soft_delete_only():
    g = node_guard(Caller("acc-1"))
    assert g.clause == "n.deletedAt IS NULL AND n.pendingWrite IS NULL AND n.accountId = $g_accountId"
    assert g.params == {"g_accountId": "acc-1"}


def test_pending_nodes_are_hidden_except_from_their_own_write():
    assert "related.pendingWrite IS NULL" in related_guard(Caller("acc-1")).clause
    own = node_guard(Caller("acc-1"), "b", pending="w1")
    assert "(b.pendingWrite IS NULL OR b.pendingWrite = $g_pendingWrite)" in own.clause
    assert own.params == {"g_accountId": "acc-1", "g_pendingWrite": "w1"}


def test_public_guard_adds_scope_and_agent_layers():
    g = node_guard(Caller("acc-1", ("public",), "alpha"), var="node")
    assert "(node.scope IS NULL OR node.scope IN $g_allowedScopes)" in g.clause
    assert "(node.agents IS NOT NULL AND $g_agentSlug IN node.agents)" in g.clause
    assert g.params == {"g_accountId": "acc-1", "g_allowedScopes": ["public"], "g_agentSlug": "alpha"}


def test_related_guard_lets_untagged_nodes_through():
    g = related_guard(Caller("acc-1", ("public",), "alpha"))
    assert "(related.agents IS NULL OR $g_agentSlug IN related.agents)" in g.clause
    assert "related.accountId = $g_accountId" in g.clause


@pytest.mark.parametrize("var", ["n; MATCH (x) DETACH DELETE x", "N", "1n", "n.x", ""])
def test_guard_rejects_unsafe_variable_names(var):
    with pytest.raises(ValidationError):
        node_guard(Caller("acc"), var=var)


def test_caller_rejects_unknown_scope_and_missing_account():
    with pytest.raises(ValidationError):
        Caller("acc", ("secret",))
    with pytest.raises(ValidationError):
        Caller("")


def test_only_an_admin_view_reads_the_trash():
    assert Caller("acc").admin_view and Caller("acc", ("admin",), "alpha").admin_view
    assert Caller("acc", None, "alpha").admin_view and Caller("acc", ("shared", "admin")).admin_view
    for scopes in (("public",), ("public", "shared"), ("shared",)):
        with pytest.raises(ValidationError) as err:
            deleted_guard(Caller("acc", scopes, "alpha"))
        assert err.value.field == "deleted"
    g = deleted_guard(Caller("acc", ("admin",), "alpha"), "d")
    assert g.clause == (
        "d.deletedAt IS NOT NULL AND d.pendingWrite IS NULL AND d.accountId = $g_accountId"
        " AND (d.scope IS NULL OR d.scope IN $g_allowedScopes) AND (d.agents IS NOT NULL AND $g_agentSlug IN d.agents)"
    )
    assert g.params == {"g_accountId": "acc", "g_allowedScopes": ["admin"], "g_agentSlug": "alpha"}
