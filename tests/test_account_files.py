"""One tenant's broken account.json never affects another tenant, and the broken file is named
in the error: as functions (hypothesis over broken contents), through the real CLI, and
through the HTTP server, whose key store lists every account on every request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import httpx2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from maxy.accounts import create_account, list_accounts, validate_account
from maxy.config import load_settings
from maxy.errors import AccountError
from maxy.plugins.discovery import discover_plugins
from maxy.plugins.http import create_api_key, create_app
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.local_http import serve_app
from tests.plugins_fixture.helpers import ECHO, REPO, text

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
broken_contents = st.one_of(
    st.binary(max_size=64),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.just(b"\xff\xfe{not utf-8}"),
    st.just(b'{"accountId": '),
)


@settings(max_examples=80, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=broken_contents)
def test_a_broken_account_file_breaks_only_its_own_account(tmp_path: Path, content: bytes) -> None:
    data = tmp_path / f"data-{os.urandom(4).hex()}"
    healthy, broken = create_account(data, "healthy"), create_account(data, "broken")
    broken.path.write_bytes(content)
    try:
        readable = json.loads(content.decode("utf-8")).get("accountId") == broken.account_id
    except (ValueError, AttributeError):
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


def test_a_directory_or_unreadable_file_is_named_too(tmp_path: Path) -> None:
    data = tmp_path / "data"
    healthy, broken = create_account(data, "healthy"), create_account(data, "broken")
    broken.path.unlink()
    broken.path.mkdir()  # account.json is a folder
    assert [a.account_id for a in list_accounts(data)] == [healthy.account_id]
    try:
        validate_account(data, broken.account_id)
    except AccountError as err:
        assert str(broken.path) in str(err)
    else:
        raise AssertionError("a broken account validated")


def _cli(*args: str, data: Path, account: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("ACCOUNT_ID", "DATA_ROOT")}
    env.update({"DATA_ROOT": str(data), "ACCOUNT_ID": account, "MAXY_LOG_LEVEL": "WARNING"})
    return subprocess.run([sys.executable, "-m", "maxy", *args], env=env, cwd=REPO, capture_output=True, text=True, timeout=180)


def test_cli_names_the_broken_file_and_serves_the_healthy_account(db, tmp_path: Path) -> None:
    data = tmp_path / "data"
    healthy, broken = create_account(data, "healthy"), create_account(data, "broken")
    broken.path.write_bytes(b"[]")
    doc = tmp_path / "note.md"
    doc.write_text("# Note\n\nA healthy tenant still writes.\n")
    for args in (("account", "validate"), ("ingest", str(doc))):
        bad = _cli(*args, data=data, account=broken.account_id)
        errors = [line for line in bad.stderr.splitlines() if line.startswith("error:")]
        assert bad.returncode == 1 and len(errors) == 1 and str(broken.path) in errors[0], bad.stderr
        assert "Traceback" not in bad.stderr
        good = _cli(*args, data=data, account=healthy.account_id)
        assert good.returncode == 0, good.stderr
    listed = _cli("account", "list", "--json", data=data, account=healthy.account_id)
    assert [a["accountId"] for a in json.loads(listed.stdout)] == [healthy.account_id]
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
