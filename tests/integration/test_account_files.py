"""One tenant's broken account.json never affects another tenant, and the broken file is named
in the error: as functions (hypothesis over broken contents), through the real CLI, and
through the HTTP server, whose key store lists every account on every request."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import anyio
import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from maxy.accounts import create_account, list_accounts, validate_account
from maxy.config import load_settings
from maxy.errors import AccountError
from maxy.plugins.discovery import discover_plugins
from maxy.serving.app import create_app
from maxy.serving.keys import create_api_key
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.cli_inprocess import maxy
from tests.hypothesis_profile import examples
from tests.local_http import serve_app
from tests.plugins_fixture.helpers import ECHO, REPO, text

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
# Records with wrong types or another account's id; "<healthy>" / "<BROKEN>" are filled in per example.
records = st.fixed_dictionaries(
    {"accountId": st.one_of(json_values, st.just("<healthy>"), st.just("<BROKEN>"))},
    optional={"name": json_values, "createdAt": json_values},
).map(json.dumps)
broken_contents = st.one_of(
    st.binary(max_size=64),
    json_values.map(lambda v: json.dumps(v).encode()),
    records.map(str.encode),
    st.just(b"\xff\xfe{not utf-8}"),
    st.just(b'{"accountId": '),
    st.just(b"[" * 5_000),  # nested deeper than the JSON parser recurses
)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=broken_contents)
def test_a_broken_account_file_breaks_only_its_own_account(tmp_path: Path, content: bytes) -> None:
    data = tmp_path / f"data-{os.urandom(4).hex()}"
    healthy, broken = create_account(data, "healthy"), create_account(data, "broken")
    content = content.replace(b"<healthy>", healthy.account_id.encode())
    broken.path.write_bytes(content.replace(b"<BROKEN>", broken.account_id.upper().encode()))
    try:
        readable = json.loads(content.decode("utf-8")).get("accountId") == broken.account_id
    except (ValueError, AttributeError, RecursionError):
        readable = False
    if readable:
        return  # the content happens to be a valid record of this account
    assert [a.account_id for a in list_accounts(data)] == [healthy.account_id]
    assert validate_account(data, healthy.account_id).account_id == healthy.account_id
    try:
        validate_account(data, broken.account_id)
    except AccountError as err:
        assert err.reason == "unreadable" and str(broken.path) in str(err) and "\n" not in str(err)
    else:
        raise AssertionError("a broken account validated")


def _folder(path: Path) -> None:
    path.mkdir()


def _pipe(path: Path) -> None:
    os.mkfifo(path)  # reading it would block every listing


def _dangling(path: Path) -> None:
    path.symlink_to(path.parent / "gone.json")


def _loop(path: Path) -> None:
    path.symlink_to(path)


def _huge(path: Path) -> None:  # a valid record, but every listing on every request would read it all
    path.write_bytes(b" " * 100_000 + json.dumps({"accountId": path.parent.name}).encode())


@pytest.mark.parametrize("make", [_folder, _pipe, _dangling, _loop, _huge])
def test_an_account_json_that_is_not_a_readable_file_is_named(tmp_path: Path, make: Callable[[Path], None]) -> None:
    data = tmp_path / "data"
    healthy, broken = create_account(data, "healthy"), create_account(data, "broken")
    broken.path.unlink()
    make(broken.path)
    listed: list[list[str]] = []
    # In a thread so that a listing blocked on the pipe fails the test instead of hanging it.
    worker = threading.Thread(target=lambda: listed.append([a.account_id for a in list_accounts(data)]), daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert listed == [[healthy.account_id]]
    assert validate_account(data, healthy.account_id).account_id == healthy.account_id
    with pytest.raises(AccountError) as err:
        validate_account(data, broken.account_id)
    assert err.value.reason == "unreadable" and str(broken.path) in str(err.value)
    assert "restore" in str(err.value) and "\n" not in str(err.value)


def test_listing_warns_once_naming_the_broken_file(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    data = tmp_path / "data"
    create_account(data, "healthy")
    broken = create_account(data, "broken")
    broken.path.write_bytes(b"null")
    with caplog.at_level(logging.WARNING, logger="maxy"):
        for _ in range(3):  # the HTTP key store lists on every request: one warning, not one per request
            list_accounts(data)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("[accounts] skip")]
    assert len(lines) == 1 and f"path={broken.path}" in lines[0] and "reason=unreadable-account-json" in lines[0]


def test_creating_where_accounts_cannot_be_written_is_one_clear_error(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "accounts").write_text("a file where the accounts folder belongs\n")
    with pytest.raises(AccountError) as err:
        create_account(data, "new")
    assert err.value.reason == "unwritable" and str(data / "accounts") in str(err.value)


def _cli(*args: str, data: Path, account: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("ACCOUNT_ID", "DATA_ROOT")}
    env.update({"DATA_ROOT": str(data), "ACCOUNT_ID": account, "MAXY_LOG_LEVEL": "WARNING"})
    return maxy(args, env)


def test_cli_names_the_broken_file_and_serves_the_healthy_account(db, tmp_path: Path) -> None:
    data = tmp_path / "data"
    healthy, broken = create_account(data, "healthy"), create_account(data, "broken")
    broken.path.write_bytes(b"[]")
    doc = tmp_path / "note.md"
    doc.write_text("# Note\n\nA healthy tenant still writes.\n")
    for args in (("account", "validate"), ("ingest", str(doc)), ("mcp", "serve")):
        bad = _cli(*args, data=data, account=broken.account_id)
        errors = [line for line in bad.stderr.splitlines() if line.startswith("error:")]
        assert bad.returncode == 1 and len(errors) == 1 and str(broken.path) in errors[0], bad.stderr
        assert "Traceback" not in bad.stderr
        if args[0] != "mcp":  # a healthy stdio server would wait for a client
            good = _cli(*args, data=data, account=healthy.account_id)
            assert good.returncode == 0, good.stderr
    listed = _cli("account", "list", "--json", data=data, account=healthy.account_id)
    assert listed.returncode == 0, listed.stderr
    assert [a["accountId"] for a in json.loads(listed.stdout)] == [healthy.account_id]
    assert f"path={broken.path}" in listed.stderr  # the skipped account is named, not silently hidden
    db.autocommit("MATCH (n:Node {accountId: $acc}) DETACH DELETE n", acc=healthy.account_id)


def test_http_keeps_serving_other_tenants(tmp_path: Path) -> None:
    data = tmp_path / "data"
    healthy, broken = create_account(data, "healthy"), create_account(data, "broken")
    key, _ = create_api_key(data, healthy.account_id, role="admin")
    for content in (b"null", b"[]", b"\xff\xfe not utf-8"):
        broken.path.write_bytes(content)

        async def call(url: str) -> str:
            async with (
                httpx2.AsyncClient(headers={"x-api-key": key}, timeout=httpx2.Timeout(30, read=60)) as http,
                streamable_http_client(url, http_client=http) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                result = await session.call_tool("echo-whoami", {})
                assert not result.is_error, text(result)
                return text(result)

        with serve_app(create_app(discover_plugins([], [ECHO]), load_settings(DATA_ROOT=data))) as base:
            who = json.loads(anyio.run(call, base + "/mcp"))
        assert who["accountId"] == healthy.account_id


def test_setup_never_replaces_a_broken_current_account(tmp_path: Path) -> None:
    """The only account's file is broken: setup names it and stops, instead of creating a new
    account and pointing ACCOUNT_ID away from the old one's graph."""
    data, config = tmp_path / "data", tmp_path / "config"
    config.mkdir()
    only = create_account(data, "only")
    only.path.write_bytes(b"null")
    env = {k: v for k, v in os.environ.items() if k not in ("ACCOUNT_ID", "DATA_ROOT", "MAXY_CONFIG_DIR")}
    env.update({"MAXY_CONFIG_DIR": str(config), "DATA_ROOT": str(data), "MAXY_LOG_LEVEL": "WARNING"})
    (config / ".env").write_text(f"ACCOUNT_ID={only.account_id}\n")
    proc = subprocess.run(
        [sys.executable, "-m", "maxy", "setup", "--skip-neo4j"],
        check=False,
        env=env,
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert proc.returncode == 1 and len(errors) == 1 and str(only.path) in errors[0], proc.stderr
    assert f"ACCOUNT_ID={only.account_id}" in (config / ".env").read_text()
    assert [p.name for p in (data / "accounts").iterdir()] == [only.account_id]  # no new account
