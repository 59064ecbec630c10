"""An API key file that cannot be read is never overwritten: the real CLI refuses with one line
naming the file, the problem and the fix; the server keeps serving every other account."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

import pytest
from maxy.accounts import create_account
from maxy.serving.keys import API_KEYS_FILE, ApiKeyStore, create_api_key

from tests.cli_inprocess import maxy
from tests.plugins_fixture.helpers import child_env

BROKEN = {
    "trailing comma": (b'{"keys": [\n  {"keyId": "k1", "hash": "h", "role": "admin"},\n]}\n', "line 3 column 1"),
    "not UTF-8": (b'{"keys": [\n  {"keyId": "k\xe9"}]}', "is not UTF-8 at line 2 column 15 (byte 0xe9)"),
    "a list": (b"[]", 'must be an object {"keys": [...]}, but the file holds a list'),
    "null": (b"null", "but the file holds null:"),
    "no keys": (b'{"key": []}', '"keys" is missing'),
    "keys not a list": (b'{"keys": 3}', '"keys" is a number'),
    "a key not an object": (b'{"keys": [{"keyId": "k1"}, "k2"]}', "keys[1] must be an object, but is a string"),
    "empty": (b"", "line 1 column 1"),
}


def _cli(data_root: Path, *args: str, **pins: str) -> subprocess.CompletedProcess[str]:
    return maxy(["mcp", "key", *args], child_env(data_root, **pins))


def _snapshot(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mtime_ns


def _keys_file(data_root: Path, account_id: str) -> Path:
    return data_root / "accounts" / account_id / API_KEYS_FILE


@pytest.mark.parametrize("case", list(BROKEN))
def test_create_refuses_a_broken_key_file(case: str, data_root: Path) -> None:
    content, where = BROKEN[case]
    account = create_account(data_root, "keys")
    path = _keys_file(data_root, account.account_id)
    path.write_bytes(content)
    before = _snapshot(path)

    proc = _cli(data_root, "create", "--role", "admin", ACCOUNT_ID=account.account_id)

    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ""  # no key was printed: none was stored
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith(f"error: API key file {path} ")
    assert where in lines[0]
    assert lines[0].endswith(f": fix or remove {path}; nothing was changed")
    assert _snapshot(path) == before
    assert sorted(p.name for p in path.parent.iterdir() if p.name.startswith("api-keys")) == [API_KEYS_FILE]


def test_revoke_never_rewrites_a_broken_file(data_root: Path) -> None:
    broken_account = create_account(data_root, "broken")
    good_account = create_account(data_root, "good")
    broken = _keys_file(data_root, broken_account.account_id)
    broken.parent.mkdir(parents=True, exist_ok=True)
    broken.write_bytes(BROKEN["trailing comma"][0])
    before = _snapshot(broken)
    _, kept = create_api_key(data_root, good_account.account_id, role="admin")
    _, revoked = create_api_key(data_root, good_account.account_id, role="admin")

    # the key is found in a readable file: revoked there, the broken file untouched
    proc = _cli(data_root, "revoke", revoked.key_id)
    assert proc.returncode == 0 and f"revoked {revoked.key_id}" in proc.stderr, proc.stderr
    good_keys = _keys_file(data_root, good_account.account_id).read_text()
    assert kept.key_id in good_keys and revoked.key_id not in good_keys
    # not found anywhere readable: it may be in the broken file, so that is the error
    proc = _cli(data_root, "revoke", "k1")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        (
            f"error: API key file {broken} is not valid JSON at line 3 column 1 (Expecting value): "
            f"fix or remove {broken}; nothing was changed"
        )
    ]
    assert _snapshot(broken) == before


def test_store_serves_other_accounts_and_warns_once_per_change(
    data_root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    broken_account = create_account(data_root, "broken")
    good_account = create_account(data_root, "good")
    broken_key, _ = create_api_key(data_root, broken_account.account_id, role="admin")
    good_key, good = create_api_key(data_root, good_account.account_id, role="public", agent_slug="bot")
    path = _keys_file(data_root, broken_account.account_id)
    intact = path.read_bytes()
    store = ApiKeyStore(data_root)
    assert store.resolve(broken_key) is not None

    def warnings() -> list[str]:
        return [r.getMessage() for r in caplog.records if "api-keys-unreadable" in r.getMessage()]

    path.write_bytes(intact.replace(b"}\n  ]", b"},\n  ]", 1))  # a trailing comma
    for _ in range(5):
        found = store.resolve(good_key)
        assert found is not None and (found.key_id, found.account_id) == (good.key_id, good_account.account_id)
        assert store.resolve(broken_key) is None  # its keys are refused, not guessed
    assert len(warnings()) == 1 and f"path={path} " in warnings()[0] and "is not valid JSON at line" in warnings()[0]

    path.write_bytes(b'{"keys": 3}')  # broken differently: one more warning
    for _ in range(3):
        assert store.resolve(good_key) is not None and store.resolve(broken_key) is None
    assert len(warnings()) == 2 and '\\"keys\\" is a number' in warnings()[1]

    path.write_bytes(intact)  # fixed: served again
    assert store.resolve(broken_key) is not None and len(warnings()) == 2
