"""What the negotiation tests start from: Ada and Bob's profiles, written by the community's
writer, and an opportunity for Ada with Bob in network ``net-1`` scored with ``SEED``."""

from __future__ import annotations

from typing import Any

from maxy.community.members import upsert_profile
from maxy.community.opportunities import create_opportunity
from maxy.community.view import community_writer
from maxy.graph.guards import Caller
from maxy.graph.write import GraphWriter

SEED = {"score": 84, "reasoning": "Ada needs a compiler engineer; Bob builds compilers", "valencyRole": "agent"}


def ada_and_bob(db: Any, account: Any, embedder: Any) -> GraphWriter:
    """Ada's and Bob's profiles; the community writer that wrote them."""
    writer = community_writer(db, account, embedder, Caller(account.account_id), created_by="test")
    upsert_profile(writer, "ada", name="Ada", bio="Founder of a language start-up", model=False)
    upsert_profile(writer, "bob", name="Bob", bio="Compiler engineer", model=False)
    return writer


def opportunity(db: Any, account: Any, embedder: Any, trigger: str = "orchestrator") -> str:
    """Ada and Bob, and the id of Ada's opportunity with Bob (she the patient, he the agent)."""
    opp = create_opportunity(
        ada_and_bob(db, account, embedder),
        source_member_id="ada",
        candidate_member_id="bob",
        network_id="net-1",
        score=SEED["score"],
        reasoning=SEED["reasoning"],
        source_role="patient",
        candidate_role="agent",
        trigger=trigger,
    )
    return str(opp["opportunityId"])
