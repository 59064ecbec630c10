"""The task store's role is a pin like the account, scopes and agent: TASK_ROLE in a stdio
server's environment, ``taskRole`` in an API key's record (``maxy mcp key create --task-role``),
``maxy mcp config --task-role`` writing it into the client config. No tool argument sets or
changes it, a public server or key never carries one, and the serving process's own TASK_ROLE
never reaches an HTTP caller whose key has none."""

from __future__ import annotations

import json
import subprocess
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

STDIO_PROBES = {"other": {"taskRole": "approver"}, "snake": {"task_role": "orchestrator"}}
HTTP_PROBES = {"other": {"taskRole": "orchestrator"}}


def test_stdio_servers_take_the_task_role_from_their_environment(account, data_root: Path, tmp_path: Path) -> None:
    pinned_env = child_env(data_root, ACCOUNT_ID=account.account_id, TASK_ROLE="executor")
    bare_env = child_env(data_root, ACCOUNT_ID=account.account_id)

    async def both() -> tuple[dict[str, Any], dict[str, Any]]:
        return (
            await stdio_whoami(pinned_env, tmp_path / "pinned.log", STDIO_PROBES),
            await stdio_whoami(bare_env, tmp_path / "bare.log", STDIO_PROBES),
        )

    pinned, bare = anyio.run(both)

    assert pinned["who"]["taskRole"] == "executor"
    for refused in (pinned["other"], pinned["snake"]):
        assert refused.is_error
        assert "TASK_ROLE is pinned for this server; a tool argument cannot change it" in text(refused)
    assert "[mcp] pinned role=admin" in (tmp_path / "pinned.log").read_text()
    assert "taskRole=executor" in (tmp_path / "pinned.log").read_text()

    assert bare["who"]["taskRole"] is None
    for refused in (bare["other"], bare["snake"]):  # no role is a pin too: an argument cannot grant one
        assert refused.is_error and "this server has no task role" in text(refused)


def test_a_public_server_never_carries_a_task_role(account, data_root: Path) -> None:
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
        TASK_ROLE="executor",
    )
    line = one_error(proc, 1)
    assert "the public role cannot carry a task role (TASK_ROLE=executor)" in line and "unset TASK_ROLE" in line


def test_api_keys_pin_the_task_role_over_http(account, data_root: Path) -> None:
    executor_key, record = create_api_key(data_root, account.account_id, role="admin", task_role="executor")
    plain_key, _ = create_api_key(data_root, account.account_id, role="admin")
    assert record.task_role == "executor" and record.as_dict()["taskRole"] == "executor"
    # the serving process's own TASK_ROLE is never a caller's: only the key's counts
    settings = load_settings(DATA_ROOT=data_root, TASK_ROLE="approver")

    with serve_app(create_app(discover_plugins([], [ECHO]), settings)) as base:
        executor = anyio.run(http_whoami, base + "/mcp", executor_key, HTTP_PROBES)
        plain = anyio.run(http_whoami, base + "/mcp", plain_key, HTTP_PROBES)

    assert executor["who"]["taskRole"] == "executor"
    assert executor["other"].is_error and "TASK_ROLE is pinned for this server" in text(executor["other"])
    assert plain["who"]["taskRole"] is None
    assert plain["other"].is_error and "this server has no task role" in text(plain["other"])


def test_key_commands_create_list_and_refuse_task_roles(account, data_root: Path) -> None:
    def key(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(data_root, "mcp", "key", *args, ACCOUNT_ID=account.account_id)

    created = key("create", "--role", "admin", "--task-role", "approver", "--json")
    assert created.returncode == 0, created.stderr
    made = json.loads(created.stdout)
    assert made["taskRole"] == "approver" and made["key"].startswith("mxy_")

    public = key("create", "--role", "public", "--agent", "bot", "--task-role", "executor")
    assert "--task-role: a public key cannot carry a task role" in one_error(public, 2)
    unknown = key("create", "--role", "admin", "--task-role", "boss")
    assert "'boss' is not a task role: use one of orchestrator, executor" in one_error(unknown, 2)

    listed = json.loads(key("list", "--json").stdout)
    assert [(k["keyId"], k["taskRole"]) for k in listed] == [(made["keyId"], "approver")]  # nothing else stored
    plain = key("list").stdout
    assert f"{made['keyId']}  admin " in plain and "taskRole=approver" in plain


def test_a_hand_edited_task_role_no_key_can_hold_is_no_key(account, data_root: Path) -> None:
    good, _ = create_api_key(data_root, account.account_id, role="admin", task_role="orchestrator")
    store = ApiKeyStore(data_root)
    assert store.resolve(good) is not None and store.resolve(good).task_role == "orchestrator"  # type: ignore[union-attr]
    path = data_root / "accounts" / account.account_id / API_KEYS_FILE
    for role, task_role in (("admin", "boss"), ("public", "executor")):
        records = json.loads(path.read_text())
        records["keys"][0].update(role=role, taskRole=task_role, agentSlug="bot", scopes=["public"])
        path.write_text(json.dumps(records))
        assert ApiKeyStore(data_root).resolve(good) is None, (role, task_role)


def test_mcp_config_writes_the_task_role_into_the_servers_env(account, data_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "mcp.json"
    proc = run_cli(
        data_root, "mcp", "config", "--task-role", "spec_reviewer", "--out", str(out), ACCOUNT_ID=account.account_id
    )
    assert proc.returncode == 0, proc.stderr
    (entry,) = json.loads(out.read_text())["mcpServers"].values()
    assert entry["env"]["TASK_ROLE"] == "spec_reviewer"

    plain = run_cli(data_root, "mcp", "config", "--out", "-", ACCOUNT_ID=account.account_id)
    (entry,) = json.loads(plain.stdout)["mcpServers"].values()
    assert "TASK_ROLE" not in entry["env"]

    public = run_cli(
        data_root,
        "mcp",
        "config",
        "--role",
        "public",
        "--agent",
        "bot",
        "--task-role",
        "executor",
        "--out",
        "-",
        ACCOUNT_ID=account.account_id,
    )
    assert "--task-role: the public role cannot carry a task role" in one_error(public, 2)
    assert public.stdout == ""

    # the operator's own TASK_ROLE is not the public entry's: it is written without one
    role_in_shell = run_cli(
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
        TASK_ROLE="orchestrator",
    )
    assert role_in_shell.returncode == 0, role_in_shell.stderr
    (entry,) = json.loads(role_in_shell.stdout)["mcpServers"].values()
    assert "TASK_ROLE" not in entry["env"] and entry["env"]["AGENT_SLUG"] == "bot"
