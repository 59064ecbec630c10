"""``POST /api/agents/{id}/negotiations/pickup`` and ``.../{negotiationId}/respond`` on a real
``maxy serve`` app under uvicorn: a member's agent picks up its parked turn and answers it with its
own key; another agent's id, a key without a member and a negotiation the member cannot see all
answer like absent ones; two agents picking up at once over HTTP, exactly one gets the turn."""

from __future__ import annotations

import importlib
import json
import logging
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from maxy.community.negotiation import Negotiations
from maxy.community.negotiation.http import MAX_BODY_BYTES, TOO_LARGE
from maxy.config import load_settings
from maxy.plugins.discovery import discover_plugins
from maxy.serving.app import create_app
from maxy.serving.keys import create_api_key

from tests.fake_anthropic import FakeAnthropic
from tests.integration.negotiation_setup import SEED, opportunity
from tests.local_http import hang_up_mid_body, mcp_calls, raw_post, serve_app

ACCEPT = {
    "action": "accept",
    "assessment": {"reasoning": "Bob wants this work", "suggestedRoles": {"ownUser": "agent", "otherUser": "patient"}},
    "message": "Glad to",
}


@pytest.fixture()
def served(db, account, embedder, data_root: Path, monkeypatch):
    importlib.import_module("anthropic")
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        fake.tool_inputs["negotiation_turn"] = lambda r, p: {
            "action": "propose",
            "reasoning": "a strong match",
            "ownUser": "patient",
            "otherUser": "agent",
        }
        settings = load_settings(DATA_ROOT=data_root, ANTHROPIC_API_KEY="test-key")
        negotiations = Negotiations(db, account, settings, embedder=embedder)
        started = negotiations.start(opportunity(db, account, embedder), seed=SEED, candidate_kind="personal")
        keys = {
            name: create_api_key(data_root, account.account_id, role="admin", member_id=member)
            for name, member in (("bob", "bob"), ("bob2", "bob"), ("ada", "ada"), ("plain", None))
        }
        with serve_app(create_app(discover_plugins(None, []), settings)) as base:
            yield base, keys, started, negotiations


def _post(url: str, key: str | None, body: Any = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    content = json.dumps(body).encode() if body is not None else b""
    return httpx.post(url, content=content, headers={**headers, "content-type": "application/json"}, timeout=60)


def test_a_members_agent_picks_up_and_answers_its_turn(served) -> None:
    base, keys, started, negotiations = served
    nid = started["negotiationId"]
    bob_key, bob = keys["bob"]
    ada_key, ada = keys["ada"]
    plain_key, plain = keys["plain"]
    pickup = f"{base}/api/agents/{bob.key_id}/negotiations/pickup"
    assert _post(pickup, None).status_code == 401
    assert _post(pickup, "mxy_nope_nope").status_code == 401
    # another agent's id, and a key bound to no member: like an agent that does not exist
    other = _post(pickup, ada_key)
    assert (
        other.status_code == 404
        and other.json() == _post(f"{base}/api/agents/nobody/negotiations/pickup", bob_key).json()
    )
    assert _post(f"{base}/api/agents/{plain.key_id}/negotiations/pickup", plain_key).status_code == 404
    assert _post(f"{base}/api/agents/{ada.key_id}/negotiations/pickup", ada_key).status_code == 204  # not ada's turn

    respond = f"{base}/api/agents/{bob.key_id}/negotiations/{nid}/respond"
    assert _post(respond, bob_key, ACCEPT).status_code == 409  # not picked up yet
    got = _post(pickup, bob_key)
    assert got.status_code == 200
    turn = got.json()
    assert (turn["negotiationId"], turn["turnNumber"], turn["counterpartyAction"]) == (nid, 2, "propose")
    assert turn["ownUser"]["name"] == "Bob" and [h["action"] for h in turn["history"]] == ["propose"]
    assert _post(pickup, bob_key).status_code == 204  # claimed: nothing else waits

    # the claim is this agent's alone, even against another agent of the same member
    bob2_key, bob2 = keys["bob2"]
    assert _post(f"{base}/api/agents/{bob2.key_id}/negotiations/{nid}/respond", bob2_key, ACCEPT).status_code == 409
    absent = _post(f"{base}/api/agents/{ada.key_id}/negotiations/nope/respond", ada_key, ACCEPT)
    assert absent.status_code == 404 and absent.json()["error"].startswith("negotiationId: no negotiation 'nope'")
    bad = _post(respond, bob_key, {**ACCEPT, "action": "shrug"})
    assert bad.status_code == 400 and bad.json()["error"].startswith("action: 'shrug' is not open here")
    assert _post(respond, bob_key, "not a turn").status_code == 400

    done = _post(respond, bob_key, ACCEPT)
    assert done.status_code == 200
    out = done.json()
    assert out["state"] == "completed" and out["outcome"]["hasOpportunity"] is True
    assert {r["memberId"]: r["role"] for r in out["outcome"]["agreedRoles"]} == {"ada": "patient", "bob": "agent"}
    assert _post(respond, bob_key, ACCEPT).status_code == 409  # answered once


def test_a_turn_past_the_cap_is_refused_before_it_is_read(served) -> None:
    base, keys, started, negotiations = served
    bob_key, bob = keys["bob"]
    nid = started["negotiationId"]
    assert _post(f"{base}/api/agents/{bob.key_id}/negotiations/pickup", bob_key).status_code == 200  # claimed
    before = len(negotiations.load(nid).turns)
    path = f"/api/agents/{bob.key_id}/negotiations/{nid}/respond"
    # a declared length past the cap is answered at once: the server never waits for those bytes
    status, _headers, body = raw_post(f"{base}{path}", bob_key, f"Content-Length: {100 * MAX_BODY_BYTES}\r\n", [])
    assert (status, json.loads(body)) == (413, TOO_LARGE)
    # a chunked body has no length: read up to the cap and refused as it runs past it (one byte
    # past it, and no end: a server reading on would wait for the rest, and time out)
    payload = b"[" + b" " * MAX_BODY_BYTES
    framed = [
        b"%x\r\n%s\r\n" % (len(p), p) for p in (payload[at : at + 16_000] for at in range(0, len(payload), 16_000))
    ]
    status, _headers, body = raw_post(f"{base}{path}", bob_key, "Transfer-Encoding: chunked\r\n", framed)
    assert (status, json.loads(body)) == (413, TOO_LARGE)
    assert len(negotiations.load(nid).turns) == before  # nothing recorded: the claim still stands
    assert _post(f"{base}{path}", bob_key, ACCEPT).status_code == 200


def test_two_agents_picking_up_over_http_exactly_one_wins(served) -> None:
    base, keys, started, _ = served
    barrier = threading.Barrier(2)
    codes: dict[str, int] = {}

    def agent(name: str) -> None:
        key, record = keys[name]
        barrier.wait()
        codes[name] = _post(f"{base}/api/agents/{record.key_id}/negotiations/pickup", key).status_code

    threads = [threading.Thread(target=agent, args=(n,)) for n in ("bob", "bob2")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(codes.values()) == [200, 204]


def _raw(url: str, key: str, body: bytes, content_type: str = "application/json") -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}", "content-type": content_type}
    return httpx.post(url, content=body, headers=headers, timeout=60)


def test_a_lone_surrogate_or_a_nul_is_refused_naming_the_field_and_nothing_is_recorded(served) -> None:
    base, keys, started, negotiations = served
    bob_key, bob = keys["bob"]
    nid = started["negotiationId"]
    assert _post(f"{base}/api/agents/{bob.key_id}/negotiations/pickup", bob_key).status_code == 200
    respond = f"{base}/api/agents/{bob.key_id}/negotiations/{nid}/respond"
    good = json.dumps(ACCEPT)
    for bad, field in (
        (good.replace("Bob wants this work", "\\ud800 lone"), "assessment.reasoning"),
        (good.replace("Glad to", "Glad\\u0000to"), "message"),
        (good.replace('"ownUser"', '"own\\udfffUser"'), "assessment.suggestedRoles"),
    ):
        refused = _raw(respond, bob_key, bad.encode())
        assert refused.status_code == 400, refused.text
        assert refused.json()["error"].startswith(f"{field}: ") and "\n" not in refused.json()["error"]
    assert len(negotiations.load(nid, None).turns) == 1  # nothing was recorded: the turn is still open
    assert _post(respond, bob_key, ACCEPT).status_code == 200


def test_json_routes_answer_415_to_another_content_type(served) -> None:
    base, keys, started, _negotiations = served
    bob_key, bob = keys["bob"]
    assert _post(f"{base}/api/agents/{bob.key_id}/negotiations/pickup", bob_key).status_code == 200
    respond = f"{base}/api/agents/{bob.key_id}/negotiations/{started['negotiationId']}/respond"
    body = json.dumps(ACCEPT).encode()
    for kind in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""):
        refused = _raw(respond, bob_key, body, kind)
        assert refused.status_code == 415, (kind, refused.text)
        assert refused.json()["error"].startswith("Content-Type: ")
    assert _raw(respond, bob_key, body, "application/json; charset=utf-8").status_code == 200


def test_a_client_hanging_up_mid_body_is_one_line_and_no_traceback(served, caplog) -> None:
    base, keys, started, _negotiations = served
    bob_key, bob = keys["bob"]
    assert _post(f"{base}/api/agents/{bob.key_id}/negotiations/pickup", bob_key).status_code == 200
    path = f"/api/agents/{bob.key_id}/negotiations/{started['negotiationId']}/respond"
    caplog.set_level(logging.INFO)
    lines = hang_up_mid_body(f"{base}{path}", bob_key, 5000, b'{"action": "acc', caplog)
    assert any(line.startswith("[http] client-disconnected") and f"path={path}" in line for line in lines), lines
    assert _post(f"{base}{path}", bob_key, ACCEPT).status_code == 200  # the turn is still this agent's to answer


def test_a_bad_string_already_stored_never_breaks_a_reply(served, db) -> None:
    """A turn recorded before the boundary checks, its reasoning holding a lone surrogate, is read
    back over MCP by the member and the admin with U+FFFD in its place."""
    import anyio

    base, keys, started, _negotiations = served
    nid = started["negotiationId"]
    stored = db.read("MATCH (n:Negotiation {nodeId: $id}) RETURN n.turnsJson AS t", id=nid)[0]["t"]
    poisoned = stored.replace("a strong match", "\\ud800 lone")
    assert poisoned != stored
    db.write("MATCH (n:Negotiation {nodeId: $id}) SET n.turnsJson = $t", id=nid, t=poisoned)
    for key in (keys["bob"][0], keys["plain"][0]):
        got, listed = anyio.run(
            mcp_calls,
            f"{base}/mcp",
            key,
            [("get_negotiation", {"negotiationId": nid}), ("list_negotiations", {})],
        )
        assert not got.is_error and not listed.is_error
        assert "\ufffd lone" in json.dumps(got.structured_content, ensure_ascii=False)
        assert "\ufffd lone" in got.content[0].text
