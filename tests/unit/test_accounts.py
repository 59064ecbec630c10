"""Accounts on disk and the boot-time ACCOUNT_ID validation."""

from __future__ import annotations

import json
import logging
import os

import pytest
from maxy.accounts import create_account, list_accounts, validate_account, validate_account_id_env
from maxy.config import load_settings
from maxy.errors import AccountError, ValidationError

from tests.cli_inprocess import maxy


def test_create_and_list(data_root):
    a = create_account(data_root, "first")
    b = create_account(data_root, "second")
    meta = json.loads((data_root / "accounts" / a.account_id / "account.json").read_text())
    assert meta["accountId"] == a.account_id and meta["name"] == "first"
    assert {x.account_id for x in list_accounts(data_root)} == {a.account_id, b.account_id}


def test_create_rejects_bad_input(data_root):
    with pytest.raises(ValidationError):
        create_account(data_root, "x", account_id="not-a-uuid")
    with pytest.raises(ValidationError):
        create_account(data_root, "   ")
    a = create_account(data_root, "x")
    with pytest.raises(ValidationError):
        create_account(data_root, "x", account_id=a.account_id)


def test_folder_whose_json_disagrees_is_not_an_account(data_root):
    a = create_account(data_root, "x")
    path = data_root / "accounts" / a.account_id / "account.json"
    path.write_text(json.dumps({"accountId": "00000000-0000-0000-0000-000000000001"}))
    assert list_accounts(data_root) == []


@pytest.mark.parametrize(
    ("setup", "reason"),
    [("none", "missing"), ("empty", "no-on-disk-account"), ("other", "mismatch")],
)
def test_validation_failures(data_root, setup, reason):
    if setup == "other":
        create_account(data_root, "someone")
    account_id = None if setup == "none" else "11111111-1111-1111-1111-111111111111"
    with pytest.raises(AccountError) as exc:
        validate_account(data_root, account_id)
    assert exc.value.reason == reason


def test_env_validation_logs_graph_health_line(data_root, caplog):
    caplog.set_level(logging.INFO, logger="maxy")
    a = create_account(data_root, "x")
    validated = validate_account_id_env(load_settings(ACCOUNT_ID=a.account_id, DATA_ROOT=data_root))
    assert validated.account_id == a.account_id
    assert f"[graph-health] account-id-env present=true id={a.account_id[:8]} matches-on-disk=true" in caplog.text
    with pytest.raises(AccountError):
        validate_account_id_env(load_settings(ACCOUNT_ID="22222222-2222-2222-2222-222222222222", DATA_ROOT=data_root))
    assert "[graph-health] account-id-env FATAL reason=mismatch" in caplog.text


def _maxy(*args, env_extra):
    env = {k: v for k, v in os.environ.items() if k not in ("ACCOUNT_ID", "DATA_ROOT")}
    env.update(env_extra)
    return maxy(["--verbose", *args], env)


@pytest.mark.parametrize("case", ["missing", "no-on-disk-account", "mismatch", "ok"])
def test_cli_process_exits_non_zero_on_bad_account(tmp_path, case):
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    data = tmp_path / "data"
    env = {"MAXY_CONFIG_DIR": str(cfg), "DATA_ROOT": str(data)}
    if case in ("mismatch", "ok"):
        acc = create_account(data, "x")
        env["ACCOUNT_ID"] = acc.account_id if case == "ok" else "33333333-3333-3333-3333-333333333333"
    elif case == "no-on-disk-account":
        env["ACCOUNT_ID"] = "33333333-3333-3333-3333-333333333333"
    proc = _maxy("account", "validate", env_extra=env)
    if case == "ok":
        assert proc.returncode == 0, proc.stderr
        assert "account-id-env present=true" in proc.stderr
    else:
        assert proc.returncode == 1
        assert f"[graph-health] account-id-env FATAL reason={case}" in proc.stderr
        assert "Traceback" not in proc.stderr


def test_cli_account_create_records_default_in_env_file(tmp_path):
    cfg = tmp_path / "cfg"
    env = {"MAXY_CONFIG_DIR": str(cfg), "DATA_ROOT": str(tmp_path / "data")}
    proc = _maxy("account", "create", "--name", "shop", "--json", env_extra=env)
    assert proc.returncode == 0, proc.stderr
    created = json.loads(proc.stdout)
    assert created.pop("default") is True, "the first account becomes the default"
    env_text = (cfg / ".env").read_text()
    assert f"ACCOUNT_ID={created['accountId']}" in env_text
    assert oct((cfg / ".env").stat().st_mode & 0o777) == "0o600"
    listed = json.loads(_maxy("account", "list", "--json", env_extra=env).stdout)
    assert listed == [dict(created, current=True)]
