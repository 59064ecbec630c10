"""The community member is a pin like the task role: MEMBER_ID in a stdio server's environment,
``memberId`` in an API key's record (``maxy mcp key create --member``), ``maxy mcp config
--member`` writing it into the client config. A tool argument naming another member is refused
exactly as an unknown member is, a public server or key never carries one, and the serving
process's own MEMBER_ID never reaches an HTTP caller whose key has none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
from maxy.config import load_settings
from maxy.plugins.discovery import discover_plugins
from maxy.serving.app import create_app
from maxy.serving.keys import API_KEYS_FILE, ApiKeyStore, create_api_key

from tests.local_http import serve_app
from tests.mcp.pins import http_whoami, one_error, run_cli, stdio_whoami
from tests.plugins_fixture.helpers import ECHO, child_env, text

UNKNOWN = "no member 'bob' you can see in this account"


STDIO_PROBES = {"other": {"memberId": "bob"}, "snake": {"member_id": "bob"}}
HTTP_PROBES = {"other": {"memberId": "bob"}}


def test_stdio_servers_take_the_member_from_their_environment(account, data_root: Path, tmp_path: Path) -> None:
    env = child_env(data_root, ACCOUNT_ID=account.account_id, MEMBER_ID="ada", ALLOWED_SCOPES="shared")
    pinned = anyio.run(stdio_whoami, env, tmp_path / "pinned.log", STDIO_PROBES)
    assert pinned["who"]["memberId"] == "ada"
    for refused in (pinned["other"], pinned["snake"]):
        assert refused.is_error and UNKNOWN in text(refused)
    assert "member=ada" in (tmp_path / "pinned.log").read_text()


def test_a_public_server_never_acts_for_a_member(account, data_root: Path) -> None:
    proc = run_cli(
        data_root,
        "mcp",
        "serve",
        ECHO,
        "--role",
        "public",
        ACCOUNT_ID=account.account_id,
        ALLOWED_SCOPES="public",
        AGENT_SLUG="bot",
        MEMBER_ID="ada",
    )
    line = one_error(proc, 1)
    assert "the public role cannot act for a member (MEMBER_ID=ada)" in line and "unset MEMBER_ID" in line


def test_api_keys_pin_the_member_over_http(account, data_root: Path) -> None:
    ada_key, record = create_api_key(data_root, account.account_id, role="admin", member_id="ada", scopes=["shared"])
    plain_key, _ = create_api_key(data_root, account.account_id, role="admin")
    assert record.member_id == "ada" and record.as_dict()["memberId"] == "ada"
    settings = load_settings(DATA_ROOT=data_root, MEMBER_ID="zed")  # the serving process's own is no caller's

    with serve_app(create_app(discover_plugins([], [ECHO]), settings)) as base:
        ada = anyio.run(http_whoami, base + "/mcp", ada_key, HTTP_PROBES)
        plain = anyio.run(http_whoami, base + "/mcp", plain_key, HTTP_PROBES)

    assert ada["who"]["memberId"] == "ada"
    assert ada["other"].is_error and UNKNOWN in text(ada["other"])
    assert plain["who"]["memberId"] is None  # the admin names any member: echo only has no such argument
    assert UNKNOWN not in text(plain["other"])


def test_key_commands_create_list_and_refuse_members(account, data_root: Path) -> None:
    def key(*args: str) -> Any:
        return run_cli(data_root, "mcp", "key", *args, ACCOUNT_ID=account.account_id)

    created = key("create", "--role", "admin", "--member", "ada", "--json")
    assert created.returncode == 0, created.stderr
    made = json.loads(created.stdout)
    assert made["memberId"] == "ada"
    public = key("create", "--role", "public", "--agent", "bot", "--member", "ada")
    assert "--member: a public key cannot act for a member" in one_error(public, 2)
    bad = key("create", "--role", "admin", "--member", "a b")
    assert "--member: 'a b' is not a member id" in one_error(bad, 2)
    assert [(k["keyId"], k["memberId"]) for k in json.loads(key("list", "--json").stdout)] == [(made["keyId"], "ada")]
    assert "member=ada" in key("list").stdout


def test_a_hand_edited_member_no_key_can_hold_is_no_key(account, data_root: Path) -> None:
    good, _ = create_api_key(data_root, account.account_id, role="admin", member_id="ada")
    path = data_root / "accounts" / account.account_id / API_KEYS_FILE
    for role, member in (("admin", "a b"), ("public", "ada")):
        records = json.loads(path.read_text())
        records["keys"][0].update(role=role, memberId=member, agentSlug="bot", scopes=["public"])
        path.write_text(json.dumps(records))
        assert ApiKeyStore(data_root).resolve(good) is None, (role, member)


def test_mcp_config_writes_the_member_into_the_servers_env(account, data_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "mcp.json"
    proc = run_cli(data_root, "mcp", "config", "--member", "ada", "--out", str(out), ACCOUNT_ID=account.account_id)
    assert proc.returncode == 0, proc.stderr
    (entry,) = json.loads(out.read_text())["mcpServers"].values()
    assert entry["env"]["MEMBER_ID"] == "ada"
    public = run_cli(
        data_root,
        "mcp",
        "config",
        "--role",
        "public",
        "--agent",
        "bot",
        "--member",
        "ada",
        "--out",
        "-",
        ACCOUNT_ID=account.account_id,
    )
    assert "--member: the public role cannot act for a member" in one_error(public, 2)
    in_shell = run_cli(
        data_root,
        "mcp",
        "config",
        "--role",
        "public",
        "--agent",
        "bot",
        "--out",
        "-",
        ACCOUNT_ID=account.account_id,
        MEMBER_ID="ada",
    )
    (entry,) = json.loads(in_shell.stdout)["mcpServers"].values()
    assert "MEMBER_ID" not in entry["env"]
