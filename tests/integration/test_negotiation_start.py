"""Starting a negotiation, against the real Neo4j: the trigger is checked (one line naming it),
and a start is idempotent per opportunity - a repeat while it is open continues that negotiation,
and a retry after a crash between making the task and writing the Negotiation reuses the task,
so no task is left behind."""

from __future__ import annotations

from typing import Any

import pytest
from maxy.community.negotiation import Negotiations
from maxy.community.negotiation import state as st
from maxy.community.opportunities import get_opportunity
from maxy.community.view import MemberView
from maxy.config import load_settings
from maxy.errors import ValidationError
from maxy.graph.guards import Caller

from tests.integration.negotiation_setup import SEED, opportunity


def _setup(db, account, embedder, trigger: str = "ambient") -> tuple[Negotiations, str]:
    opp_id = opportunity(db, account, embedder, trigger)
    return Negotiations(db, account, load_settings(), embedder=embedder), opp_id


def _tasks(db, account) -> list[dict[str, Any]]:
    return db.read(
        "MATCH (t:Task {accountId: $acc, kind: 'negotiation'}) RETURN t.nodeId AS id, t.phase AS phase",
        acc=account.account_id,
    )


@pytest.mark.parametrize("trigger", ["manual", "", None, 3])
def test_an_unknown_trigger_is_one_line_naming_it_and_changes_nothing(db, account, embedder, trigger) -> None:
    negotiations, opp_id = _setup(db, account, embedder)
    with pytest.raises(ValidationError) as err:
        negotiations.start(opp_id, seed=SEED, trigger=trigger)  # type: ignore[arg-type]
    message = str(err.value)
    assert err.value.field == "trigger" and "\n" not in message
    assert "ambient" in message and "orchestrator" in message and repr(trigger) in message
    assert get_opportunity(db, MemberView(Caller(account.account_id)), opp_id)["status"] == "latent"
    assert _tasks(db, account) == []


def test_a_repeat_while_open_continues_the_same_negotiation(db, account, embedder) -> None:
    negotiations, opp_id = _setup(db, account, embedder)
    first = negotiations.start(opp_id, seed=SEED, candidate_kind="personal")
    assert first["state"] == "waiting_for_agent"
    again = negotiations.start(opp_id, seed=SEED, candidate_kind="personal", trigger="orchestrator")
    assert again["negotiationId"] == first["negotiationId"] and again["taskId"] == first["taskId"]
    assert len(_tasks(db, account)) == 1
    assert len(st.for_opportunity(db, negotiations.view, opp_id)) == 1


@pytest.mark.parametrize("trigger", ["ambient", "orchestrator"])
def test_a_crash_after_the_task_is_made_leaves_no_orphan(db, account, embedder, monkeypatch, trigger) -> None:
    negotiations, opp_id = _setup(db, account, embedder, trigger)

    def crash(*_: Any, **__: Any) -> None:
        raise RuntimeError("the process died here")

    with monkeypatch.context() as m:
        m.setattr(st, "create", crash)
        with pytest.raises(RuntimeError):
            negotiations.start(opp_id, seed=SEED)
    [orphan] = _tasks(db, account)
    assert orphan["phase"] == "executing"
    assert st.for_opportunity(db, negotiations.view, opp_id) == []

    out = negotiations.start(opp_id, seed=SEED)  # the retry: system negotiators, no key, the rule decides
    assert out["taskId"] == orphan["id"] and out["state"] == "completed"
    assert [t["id"] for t in _tasks(db, account)] == [orphan["id"]]
    assert _tasks(db, account)[0]["phase"] == "completed"
    opp = get_opportunity(db, negotiations.view, opp_id)
    assert opp["negotiationId"] == out["negotiationId"] and opp["status"] == out["outcome"]["status"]
