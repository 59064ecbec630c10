"""``maxy demo`` (the installer's main job) writes into the account named demo, created on first
use and reused after, never into the account ACCOUNT_ID names, and never records itself there."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from maxy.accounts import list_accounts
from maxy.config import env_file

from tests.cli_inprocess import maxy
from tests.conftest import purge_account
from tests.plugins_fixture.helpers import child_env, count

NOTES = """# Lighthouse keeping

## The keeper's log

The keeper of the Zanzibar lighthouse writes the weather into a log every evening at dusk.
"""


def _demo(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return maxy(["demo", *args], env, check=False)


def test_demo_writes_into_its_own_account(db, account, data_root: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text(NOTES)
    env = child_env(data_root, ACCOUNT_ID=account.account_id, MAXY_LOG_LEVEL="WARNING")
    dotenv = env_file().read_text() if env_file().exists() else None
    args = (str(notes), "-q", "Who writes the weather log?", "--json")
    first = _demo(env, *args)
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    demo_id = report["account"]["accountId"]
    try:
        assert report["account"] == {"accountId": demo_id, "name": "demo", "created": True}
        assert demo_id != account.account_id
        assert (report["ingested"], report["failed"]) == (1, 0)
        [answer] = report["answers"]
        assert answer["question"] == "Who writes the weather log?"
        assert "Zanzibar lighthouse" in json.dumps(answer["results"][0]["properties"])
        # the documents are the demo account's; the user's account holds nothing
        assert count(db, demo_id, "KnowledgeDocument") == 1
        assert count(db, account.account_id, "Node") == 0
        assert (env_file().read_text() if env_file().exists() else None) == dotenv  # ACCOUNT_ID not replaced

        again = _demo(env, *args)
        assert again.returncode == 0, again.stderr
        second = json.loads(again.stdout)
        assert second["account"] == {"accountId": demo_id, "name": "demo", "created": False}
        assert (second["ingested"], second["skipped"]) == (0, 1)  # unchanged: nothing written twice
        assert [a.name for a in list_accounts(data_root)].count("demo") == 1
        assert count(db, demo_id, "KnowledgeDocument") == 1
    finally:
        purge_account(db, demo_id)


def test_demo_prints_answers_and_refuses_a_missing_path(db, account, data_root: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text(NOTES)
    env = child_env(data_root, ACCOUNT_ID=account.account_id, MAXY_LOG_LEVEL="WARNING")
    missing = _demo(env, str(tmp_path / "nowhere.md"))
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    assert [line for line in missing.stderr.splitlines() if line.startswith("error:")], missing.stderr
    assert not list_accounts(data_root)[1:], "a refused run must not create the demo account"

    shown = _demo(env, str(notes), "-q", "Who writes the weather log?")
    demo = next(a for a in list_accounts(data_root) if a.name == "demo")
    try:
        assert shown.returncode == 0, shown.stderr
        assert "Q: Who writes the weather log?" in shown.stdout
        assert " 1. " in shown.stdout and "Zanzibar lighthouse" in shown.stdout
        assert f"demo: account demo ({demo.account_id}, created)" in shown.stderr
    finally:
        purge_account(db, demo.account_id)


def test_setup_never_makes_the_demo_account_the_users(db, settings, data_root: Path, tmp_path: Path) -> None:
    """With only the demo's account on disk and no ACCOUNT_ID recorded, setup creates the user's
    own account rather than adopting the demo's."""
    from maxy.accounts import create_account

    demo = create_account(data_root, "demo")
    config = tmp_path / "config"
    env = child_env(
        data_root,
        MAXY_CONFIG_DIR=str(config),
        NEO4J_URI=settings.NEO4J_URI,
        NEO4J_PASSWORD=settings.NEO4J_PASSWORD,
        EMBED_MODEL=settings.EMBED_MODEL,
        MAXY_LOG_LEVEL="WARNING",
    )
    made = maxy(["setup", "--skip-neo4j", "--json"], env, check=False)
    assert made.returncode == 0, made.stderr
    recorded = dict(line.split("=", 1) for line in (config / ".env").read_text().splitlines() if "=" in line)
    users = [a for a in list_accounts(data_root) if a.account_id != demo.account_id]
    assert [a.name for a in users] == ["default"]
    assert recorded["ACCOUNT_ID"] == users[0].account_id != demo.account_id
