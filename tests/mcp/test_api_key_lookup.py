"""Resolving an API key among many accounts: a key seen once is looked up in its own account
only (every HTTP request resolves its key, so this is per request), and what a search of every
account would find or refuse is still found or refused: a new key, a revoked one, a key whose
account is gone."""

from __future__ import annotations

from pathlib import Path

import maxy.serving.keys as keys_module
import pytest
from maxy.accounts import accounts_dir, create_account
from maxy.serving.keys import ApiKeyStore, create_api_key, revoke_api_key

ACCOUNTS = 60


def test_a_known_key_is_resolved_without_reading_every_account(data_root: Path, monkeypatch: pytest.MonkeyPatch):
    accounts = [create_account(data_root, f"tenant-{i}") for i in range(ACCOUNTS)]
    key, record = create_api_key(data_root, accounts[-1].account_id, role="admin")
    store = ApiKeyStore(data_root)
    assert store.resolve(key) == record

    scans: list[Path] = []
    every_account = keys_module.list_accounts
    monkeypatch.setattr(keys_module, "list_accounts", lambda root: scans.append(root) or every_account(root))
    assert all(store.resolve(key) == record for _ in range(20))
    assert scans == []  # its own account.json and key file only

    new_key, new_record = create_api_key(data_root, accounts[0].account_id, role="public", agent_slug="bot")
    assert store.resolve(new_key) == new_record  # not seen yet: found by looking everywhere
    assert len(scans) == 1
    assert store.resolve(key + "x") is None

    assert revoke_api_key(data_root, record.key_id)
    assert store.resolve(key) is None
    gone_key, gone_record = create_api_key(data_root, accounts[1].account_id, role="admin")
    assert store.resolve(gone_key) == gone_record
    (accounts_dir(data_root) / accounts[1].account_id / "account.json").unlink()
    assert store.resolve(gone_key) is None  # its account is no longer an account
