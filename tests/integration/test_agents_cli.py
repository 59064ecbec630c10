"""`maxy agent create|list|show|update|delete` as an operator runs them, and the agent store's
confinement: whatever the slug, nothing is read or written outside the account's agents folder."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from maxy.accounts import create_account
from maxy.agents import AgentConfig, create_agent, delete_agent, list_agents, read_agent, update_agent
from maxy.errors import ConfigError, ValidationError

from tests.cli_inprocess import maxy
from tests.hypothesis_profile import examples
from tests.plugins_fixture.helpers import child_env


def _agent(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return maxy(["agent", *args], env, check=False)


def test_an_operator_creates_shows_updates_lists_and_deletes_an_agent(data_root: Path) -> None:
    account = create_account(data_root, "agents")
    env = child_env(data_root, ACCOUNT_ID=account.account_id, MAXY_LOG_LEVEL="WARNING")
    made = _agent(
        env, "create", "concierge", "--name", "Front desk", "--keyword", "pricing", "--keyword", "Pricing", "--json"
    )
    assert made.returncode == 0, made.stderr
    config = json.loads(made.stdout)
    assert config["displayName"] == "Front desk" and config["knowledgeKeywords"] == ["pricing"]
    assert config["liveMemory"] is False and config["allowedScopes"] == ["public"]
    folder = data_root / "accounts" / account.account_id / "agents" / "concierge"
    assert sorted(p.name for p in folder.iterdir()) == ["IDENTITY.md", "SOUL.md", "config.json"]
    assert oct((folder / "config.json").stat().st_mode & 0o777) == "0o600"

    again = _agent(env, "create", "concierge")
    assert again.returncode == 2 and again.stderr.count("\n") == 1 and "exists" in again.stderr
    updated = json.loads(
        _agent(env, "update", "concierge", "--live-memory", "--scopes", "public,shared", "--json").stdout
    )
    assert updated["liveMemory"] is True and updated["allowedScopes"] == ["public", "shared"]
    assert updated["knowledgeKeywords"] == ["pricing"] and updated["updatedAt"] >= updated["createdAt"]
    assert json.loads(_agent(env, "show", "concierge", "--json").stdout) == updated
    _agent(env, "create", "helper")
    listed = _agent(env, "list")
    assert [line.split()[0] for line in listed.stdout.splitlines()] == ["concierge", "helper"]

    for args, field in [
        (["create", "Front Desk"], "SLUG"),
        (["create", "x", "--scopes", "public,admin"], "--scopes"),
        (["create", "z", "--name", " "], "--name"),
        (
            [
                "create",
                "y",
                "--keyword",
                "a",
                "--keyword",
                "b",
                "--keyword",
                "c",
                "--keyword",
                "d",
                "--keyword",
                "e",
                "--keyword",
                "f",
            ],
            "--keyword",
        ),
        (["update", "concierge", "--keyword", "a", "--no-keywords"], "--no-keywords"),
        (["show", "nobody"], "SLUG"),
        (["delete", "helper"], "--yes"),
    ]:
        refused = _agent(env, *args)
        assert refused.returncode == 2 and refused.stderr.startswith(f"error: {field}: "), (args, refused.stderr)
        assert refused.stderr.count("\n") == 1
    assert _agent(env, "delete", "helper", "--yes").returncode == 0
    assert not (folder.parent / "helper").exists()
    assert [a["slug"] for a in json.loads(_agent(env, "list", "--json").stdout)] == ["concierge"]


def test_a_broken_or_linked_agent_folder_is_named_never_followed(data_root: Path, tmp_path: Path) -> None:
    account = create_account(data_root, "agents")
    create_agent(data_root, account.account_id, AgentConfig("concierge", "Front desk"))
    root = data_root / "accounts" / account.account_id / "agents"
    (root / "concierge" / "config.json").write_text("{not json")
    with pytest.raises(ConfigError, match="config.json cannot be read"):
        read_agent(data_root, account.account_id, "concierge")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "config.json").write_text(json.dumps({"displayName": "x"}))
    os.symlink(outside, root / "linked")
    with pytest.raises(ConfigError, match="symbolic link"):
        read_agent(data_root, account.account_id, "linked")
    with pytest.raises(ConfigError, match="symbolic link"):
        delete_agent(data_root, account.account_id, "linked")
    assert (outside / "config.json").exists()
    assert list_agents(data_root, account.account_id) == []  # both are skipped, with a log line each


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(slug=st.text(min_size=0, max_size=80))
def test_no_slug_reaches_outside_the_agents_folder(data_root: Path, slug: str) -> None:
    """The oracle: after any create, update, show or delete with any slug, every file written
    lies under the account's agents folder, and any refusal is a ValidationError."""
    accounts = data_root / "accounts"
    account = next((p.name for p in accounts.iterdir()), None) if accounts.exists() else None
    account = account or create_account(data_root, "fuzz").account_id
    before = {p for p in data_root.rglob("*")}
    for action in (
        lambda: create_agent(data_root, account, AgentConfig(slug, "n")),
        lambda: update_agent(data_root, account, slug, live_memory=True),
        lambda: read_agent(data_root, account, slug),
        lambda: delete_agent(data_root, account, slug),
    ):
        try:
            action()
        except ValidationError:
            pass
    root = (accounts / account / "agents").resolve()
    for path in set(data_root.rglob("*")) - before:
        assert path.resolve() == root or root in path.resolve().parents, path
