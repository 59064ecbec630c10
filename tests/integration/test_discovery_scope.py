"""Discovery searches inside the scope exactly: 65 members outside the source's networks whose
profiles are closer to the query than the one member inside never crowd that member out, on the
exact path (a small scope) and on the vector-index path with its raised k (a large one)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from maxy.community import MemberView, add_member, community_writer, create_network, upsert_profile
from maxy.community.discovery import discover_opportunities, search
from maxy.config import load_settings
from maxy.graph.guards import Caller

from tests.fake_anthropic import FakeAnthropic

CROWD = 65
DOCUMENT = "A senior React engineer who co-founds startups in Berlin and builds products."


def _evaluate(request: dict[str, Any], prompt: str) -> dict[str, Any]:
    found = re.findall(r'<candidate n="(\d+)">\n<profile>\nname: (\w+)', prompt)
    return {"evaluations": [{"candidate": int(n), "score": 85, "reasoning": "fits", "role": "agent"} for n, _ in found]}


@pytest.fixture()
def crowded(db, account, embedder, monkeypatch):
    nokey = load_settings(ANTHROPIC_API_KEY="")
    w = community_writer(db, account, embedder, Caller(account.account_id), created_by="test")
    upsert_profile(w, "ada", name="Ada", bio="Founder of a gardening app", model=False, settings=nokey)
    upsert_profile(w, "bob", name="Bob", bio="Engineer who likes React and startups", model=False, settings=nokey)
    mine = create_network(w, "ada", name="builders")["networkId"]
    add_member(w, None, mine, "bob")
    for i in range(CROWD):
        upsert_profile(w, f"c{i}", name=f"Crowd{i}", bio=DOCUMENT, model=False, settings=nokey)
    crowd = create_network(w, "c0", name="crowd")["networkId"]
    for i in range(1, CROWD):
        add_member(w, None, crowd, f"c{i}")
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        fake.tool_inputs |= {
            "record_lenses": lambda r, p: {"lenses": [{"label": "React co-founder", "corpus": "profiles"}]},
            "write_hypothetical_document": lambda r, p: {"document": DOCUMENT},
            "evaluate_opportunities": _evaluate,
        }
        yield w


@pytest.mark.parametrize("exact_members", [search.EXACT_MEMBERS, 0], ids=["exact", "index-raised-k"])
def test_members_outside_the_scope_never_crowd_out_a_candidate(crowded, monkeypatch, exact_members):
    monkeypatch.setattr(search, "EXACT_MEMBERS", exact_members)
    keyed = load_settings(ANTHROPIC_API_KEY="test-key")
    out = discover_opportunities(
        crowded, MemberView(crowded.caller, "ada"), keyed, query="a React co-founder in Berlin", persist=False
    )
    assert out["considered"] == 1
    assert [o["candidateMemberId"] for o in out["opportunities"]] == ["bob"]
