"""The community plugin's profile and network tools over stdio with the SDK's client: an admin
server names members, a member's pinned server acts only for that member, an invitation answers
alike for a member and for no one and shows nothing until it is accepted, and what each member
reads follows the member rule (against the real Neo4j)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters

from tests.mcp.inprocess import stdio_inprocess
from tests.plugins_fixture.helpers import CLI, REPO, child_env, text


async def _session(env: dict[str, str], errlog: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", "serve", "community"], env=env, cwd=str(REPO))
    with errlog.open("w") as err:
        async with stdio_inprocess(params, errlog=err) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return [await s.call_tool(name, args) for name, args in calls]


def _data(result: Any) -> dict[str, Any]:
    assert not result.is_error, text(result)
    assert result.structured_content is not None, text(result)
    return result.structured_content


def test_members_act_for_themselves_and_see_through_shared_networks(account, data_root: Path, tmp_path: Path) -> None:
    admin_env = child_env(data_root, ACCOUNT_ID=account.account_id, ANTHROPIC_API_KEY="")
    made = anyio.run(
        _session,
        admin_env,
        tmp_path / "admin.log",
        [
            ("create_user_profile", {"memberId": "ada", "name": "Ada", "skills": ["welding"]}),
            ("create_user_profile", {"memberId": "bob", "name": "Bob", "interests": ["metal art"]}),
            ("create_user_profile", {"name": "Nobody"}),  # the admin must name the member
        ],
    )
    ada_made = _data(made[0])
    assert ada_made["hyde"]["generatedBy"] == "template" and ada_made["trace"][0]["type"] == "graph_start"
    assert made[2].is_error and "memberId: name the member" in text(made[2])

    ada_env = child_env(data_root, ACCOUNT_ID=account.account_id, MEMBER_ID="ada", ANTHROPIC_API_KEY="")
    ada = anyio.run(
        _session,
        ada_env,
        tmp_path / "ada.log",
        [
            ("create_network", {"name": "Forge", "joinPolicy": "invite"}),
            ("read_user_profiles", {}),
            ("update_user_profile", {"memberId": "bob", "bio": "hijacked"}),
            ("update_user_profile", {"bio": "Welder"}),
        ],
    )
    network = _data(ada[0])["networkId"]
    assert [p["memberId"] for p in _data(ada[1])["profiles"]] == ["ada"]
    assert ada[2].is_error and "no member 'bob' you can see" in text(ada[2])
    assert _data(ada[3])["bio"] == "Welder" and _data(ada[3])["skills"] == ["welding"]

    bob_env = child_env(data_root, ACCOUNT_ID=account.account_id, MEMBER_ID="bob", ANTHROPIC_API_KEY="")
    before = anyio.run(
        _session,
        bob_env,
        tmp_path / "bob.log",
        [("list_networks", {}), ("join_network", {"networkId": network})],
    )
    assert _data(before[0])["networks"] == []
    assert before[1].is_error and f"no network {network!r} you can see" in text(before[1])

    invited = anyio.run(
        _session,
        ada_env,
        tmp_path / "ada2.log",
        [
            ("add_network_member", {"networkId": network, "newMemberId": "bob"}),
            ("add_network_member", {"networkId": network, "newMemberId": "nobody"}),
            ("list_networks", {}),
        ],
    )
    answer = {k: v for k, v in _data(invited[0]).items() if k != "memberId"}
    assert answer == {"networkId": network, "status": "invited", "added": False}
    assert {k: v for k, v in _data(invited[1]).items() if k != "memberId"} == answer  # no one learns who exists
    assert _data(invited[2])["networks"][0]["members"] == ["ada"]  # bob is not in it until he joins
    after = anyio.run(
        _session,
        bob_env,
        tmp_path / "bob2.log",
        [
            ("read_user_profiles", {}),
            ("list_networks", {}),
            ("join_network", {"networkId": network}),
            ("read_user_profiles", {}),
            ("list_networks", {}),
            ("leave_network", {"networkId": network}),
        ],
    )
    assert [p["memberId"] for p in _data(after[0])["profiles"]] == ["bob"]  # an invitation shows nothing
    [offer] = _data(after[1])["networks"]
    assert (offer["networkId"], offer["invited"], offer["joined"], offer.get("members")) == (network, True, False, None)
    assert _data(after[2])["joined"] is True
    assert [p["memberId"] for p in _data(after[3])["profiles"]] == ["ada", "bob"]
    assert _data(after[4])["networks"][0]["members"] == ["ada", "bob"]
    assert _data(after[5])["status"] == "left"
