"""The MCP plugin platform: manifests, discovery, the server factory (roles, eager _meta,
pinning, error mapping, audit), API keys, client configs and the proxy's rewriting.

Server behaviour is driven by the SDK's own client connected in-process to the real
server against the real Neo4j; the transports have their own modules (stdio, http).
"""

from __future__ import annotations

import json
import logging
import os
import stat
import textwrap
import uuid
from pathlib import Path

import anyio
import pytest
from maxy.config import load_settings
from maxy.mcp.proxy import Pending, note_requests, rewrite_response
from maxy.mcp.server import (
    BootGateError,
    EnvContexts,
    PublicToolNotReadOnly,
    create_mcp_server,
    tools_for_role,
)
from maxy.plugins.api import ToolError, tools_of
from maxy.plugins.discovery import (
    ENTRY_POINT_GROUP,
    available_plugins,
    discover_plugins,
    load_plugin,
)
from maxy.plugins.manifest import ManifestError, parse_manifest_text
from mcp import Client

from tests.plugins_fixture.helpers import (
    ECHO,
    SERVERLESS,
    count,
    seed_conversation,
    seed_notes,
    text,
    tool_calls,
)

EAGER = "anthropic/alwaysLoad"


# ---------------------------------------------------------------------------------------
# manifests
def test_manifest_parses_flags_and_server() -> None:
    m = parse_manifest_text(
        textwrap.dedent(
            """\
            ---
            name: demo
            description: A demo.
            mcp: {server: demo}
            tools:
              demo-read: {eager: true, adminAllowlist: true, publicAllowlist: true, readOnly: true}
              demo-drop: {adminAllowlist: true, destructive: true}
            ---
            # body is free text
            """
        ),
        "demo/PLUGIN.md",
    )
    assert (m.name, m.description, m.mcp_server) == ("demo", "A demo.", "demo")
    assert m.tools["demo-read"].eager and m.tools["demo-read"].public_allowlist
    assert m.tools["demo-drop"].destructive is True and m.tools["demo-drop"].read_only is None


@pytest.mark.parametrize(
    ("front", "needle"),
    [
        ("name: demo\n", "must start with a '---'"),
        ("---\nname: Demo Plugin\n---\n", "key 'name'"),
        ("---\nname: demo\nmcp: yes\n---\n", "key 'mcp'"),
        ("---\nname: demo\nmcp: {serverName: x}\n---\n", "key 'mcp.serverName'"),
        ("---\nname: demo\ntools: {t1: {eager: 'yes'}}\n---\n", "key 'tools.t1.eager'"),
        ("---\nname: demo\ntools: {t1: {adminAllowList: true}}\n---\n", "key 'tools.t1.adminAllowList'"),
        ("---\nname: demo\ntools: [t1]\n---\n", "key 'tools'"),
        ("---\nname: demo\n", "not closed"),
        ("---\nname: [demo\n---\n", "not valid YAML"),
    ],
)
def test_manifest_errors_name_file_and_key(front: str, needle: str) -> None:
    with pytest.raises(ManifestError) as err:
        parse_manifest_text(front, "plugins/demo/PLUGIN.md")
    assert "plugins/demo/PLUGIN.md" in str(err.value)
    assert needle in str(err.value)


# ---------------------------------------------------------------------------------------
# discovery
def _make_plugin(root: Path, package: str, manifest: str, code: str) -> str:
    pkg = root / package
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(textwrap.dedent(code))
    (pkg / "PLUGIN.md").write_text(textwrap.dedent(manifest))
    return package


@pytest.fixture()
def plugin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "pluginpkgs"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    return root


CODE_TWO_TOOLS = """
    from maxy.plugins import ToolContext, tool

    @tool("{p}-read", description="Read.", read_only=True)
    def read(ctx: ToolContext, q: str) -> str:
        return q

    @tool("{p}-write", description="Write.")
    def write(ctx: ToolContext, q: str) -> str:
        return q
"""


def _unique() -> str:
    return "p" + uuid.uuid4().hex[:8]


def test_discovery_loads_fixture_with_tools_submodule_and_flags() -> None:
    (echo,) = discover_plugins([], [ECHO])
    assert (echo.name, echo.module, echo.source, echo.mcp_server) == ("echo", ECHO, "module", "echo")
    search = echo.tool("echo-search")
    assert search is not None and search.eager and search.admin_allowlist and search.public_allowlist
    assert search.read_only and search.idempotent and not search.destructive
    write = echo.tool("echo-write")
    assert write is not None and write.eager and not write.public_allowlist and not write.read_only
    # the same plugin named by module path, through the one loader
    (again,) = discover_plugins([ECHO])
    assert again.name == "echo"


def test_entry_point_group_lists_first_party_plugins() -> None:
    assert ENTRY_POINT_GROUP == "maxy.plugins"
    assert available_plugins().get("memory") == "maxy_plugins.memory"


def test_unknown_plugin_name_is_a_clear_error() -> None:
    with pytest.raises(ManifestError, match="unknown plugin 'nope'"):
        discover_plugins(["nope"])


def test_tool_in_code_but_not_in_manifest_is_an_error(plugin_dir: Path) -> None:
    p = _unique()
    mod = _make_plugin(
        plugin_dir,
        p,
        f"---\nname: {p}\nmcp: {{server: {p}}}\ntools:\n  {p}-read: {{adminAllowlist: true}}\n---\n",
        CODE_TWO_TOOLS.format(p=p),
    )
    with pytest.raises(ManifestError, match=f"{p}-write.*missing from the manifest") as err:
        load_plugin(mod)
    assert "PLUGIN.md" in str(err.value)


def test_tools_of_every_submodule_belong_to_the_package(plugin_dir: Path) -> None:
    """A plugin split into several tool modules: each module's tools count for the package,
    and the manifest is checked against all of them."""
    p = _unique()
    manifest = f"---\nname: {p}\nmcp: {{server: {p}}}\ntools:\n  {p}-read: {{}}\n  {p}-write: {{}}\n---\n"
    mod = _make_plugin(plugin_dir, p, manifest, "from . import reading, writing  # noqa: F401\n")
    code = textwrap.dedent(CODE_TWO_TOOLS.format(p=p))
    head, write_tool = code.split(f'@tool("{p}-write"', 1)
    (plugin_dir / p / "reading.py").write_text(head)
    (plugin_dir / p / "writing.py").write_text(
        "from maxy.plugins import ToolContext, tool\n\n\n" + f'@tool("{p}-write"' + write_tool
    )
    plugin = load_plugin(mod)
    assert sorted(t.name for t in plugin.tools) == [f"{p}-read", f"{p}-write"]
    assert {s.fn.__module__ for s in tools_of(mod)} == {f"{mod}.reading", f"{mod}.writing"}
    assert tools_of(f"{mod}.reading")[0].name == f"{p}-read"  # a submodule's own tools, too


def test_tool_in_manifest_but_not_in_code_is_an_error(plugin_dir: Path) -> None:
    p = _unique()
    manifest = (
        f"---\nname: {p}\nmcp: {{server: {p}}}\ntools:\n  {p}-read: {{}}\n  {p}-write: {{}}\n  {p}-ghost: {{}}\n---\n"
    )
    mod = _make_plugin(plugin_dir, p, manifest, CODE_TWO_TOOLS.format(p=p))
    with pytest.raises(ManifestError, match=f"key 'tools.{p}-ghost'"):
        load_plugin(mod)


def test_manifest_annotation_disagreeing_with_code_is_an_error(plugin_dir: Path) -> None:
    p = _unique()
    manifest = (
        f"---\nname: {p}\nmcp: {{server: {p}}}\ntools:\n  {p}-read: {{readOnly: false}}\n  {p}-write: {{}}\n---\n"
    )
    mod = _make_plugin(plugin_dir, p, manifest, CODE_TWO_TOOLS.format(p=p))
    with pytest.raises(ManifestError, match=f"key 'tools.{p}-read.readOnly'"):
        load_plugin(mod)


# ---------------------------------------------------------------------------------------
# roles and the boot gate (no database needed)
def test_roles_select_allowlisted_tools() -> None:
    plugins = discover_plugins([], [ECHO])
    admin = {t.name for t in tools_for_role(plugins, "admin")}
    public = {t.name for t in tools_for_role(plugins, "public")}
    assert admin == {"echo-search", "echo-whoami", "echo-write", "echo-fail", "echo-crash"}
    assert public == {"echo-search", "echo-whoami", "echo-slow-search"}


def test_public_role_refuses_a_public_tool_that_writes(plugin_dir: Path) -> None:
    p = _unique()
    manifest = (
        f"---\nname: {p}\nmcp: {{server: {p}}}\ntools:\n  {p}-read: {{publicAllowlist: true}}\n"
        f"  {p}-write: {{publicAllowlist: true}}\n---\n"
    )
    plugins = [load_plugin(_make_plugin(plugin_dir, p, manifest, CODE_TWO_TOOLS.format(p=p)))]
    with pytest.raises(PublicToolNotReadOnly, match=f"{p}-write"):
        create_mcp_server(plugins, "public", lambda plugin, headers: None)  # type: ignore[arg-type,return-value]
    create_mcp_server(plugins, "admin", lambda plugin, headers: None)  # type: ignore[arg-type,return-value]


def test_boot_gate_refuses_allowlisted_tool_without_server(caplog: pytest.LogCaptureFixture) -> None:
    plugins = discover_plugins([], [ECHO, SERVERLESS])
    caplog.set_level(logging.INFO)
    with pytest.raises(BootGateError) as err:
        create_mcp_server(plugins, "admin", lambda plugin, headers: None)  # type: ignore[arg-type,return-value]
    assert (err.value.plugin, err.value.tool) == ("serverless", "serverless-ping")
    assert "boot-failed reason=mcp-allowlist-without-server plugin=serverless tool=serverless-ping" in caplog.text
    assert "PLUGIN.md" in str(err.value)


def test_coverage_line_when_the_gate_passes(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    create_mcp_server(discover_plugins([], [ECHO]), "admin", lambda plugin, headers: None)  # type: ignore[arg-type,return-value]
    assert "mcp-config-allowlist-coverage admin-tools=5 admin-registered=5" in caplog.text


# ---------------------------------------------------------------------------------------
# the server, in-process, against the real Neo4j
def _server(data_root: Path, role: str, **pins: object):
    settings = load_settings(DATA_ROOT=data_root, **pins)
    plugins = discover_plugins([], [ECHO])
    contexts = EnvContexts(settings, role)  # type: ignore[arg-type]
    server = create_mcp_server(plugins, role, contexts)  # type: ignore[arg-type]
    contexts.open(plugins)
    return server, contexts


def _run(fn):
    return anyio.run(fn)


def test_tools_list_eager_meta_and_annotations(account, data_root: Path) -> None:
    server, contexts = _server(data_root, "admin", ACCOUNT_ID=account.account_id)

    async def main() -> tuple:
        async with Client(server) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            return tools, await client.call_tool("echo-search", {"query": "x", "lmit": 5})

    try:
        tools, typo = _run(main)
    finally:
        contexts.close()
    assert typo.is_error and text(typo) == "lmit: unknown argument for echo-search (arguments: limit, query)"
    assert set(tools) == {"echo-search", "echo-whoami", "echo-write", "echo-fail", "echo-crash"}
    assert {n for n, t in tools.items() if (t.meta or {}).get(EAGER)} == {"echo-search", "echo-write"}
    assert all(not t.meta for n, t in tools.items() if n not in {"echo-search", "echo-write"})
    search = tools["echo-search"]
    assert search.annotations.read_only_hint is True and search.annotations.idempotent_hint is True
    assert tools["echo-write"].annotations.read_only_hint is False
    assert "ctx" not in search.input_schema["properties"]
    assert search.input_schema["required"] == ["query"]


def test_admin_calls_pinning_errors_and_audit(
    db, account, make_account, data_root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    other = make_account("other")
    seed_notes(db, account, other)
    conv_node, conv_session = seed_conversation(db, account)
    session = str(uuid.uuid4())
    server, contexts = _server(
        data_root, "admin", ACCOUNT_ID=account.account_id, SESSION_ID=session, SESSION_NODE_ID=conv_session
    )
    calls = [
        ("echo-search", {"query": "alpha"}),
        ("echo-write", {"name": "beta note", "scope": "shared"}),
        ("echo-write", {"name": "gamma", "scope": "nonsense"}),  # bad input: nothing written
        ("echo-write", {}),  # missing argument
        ("echo-search", {"query": "alpha", "account_id": other.account_id}),
        ("echo-search", {"query": "alpha", "accountId": other.account_id}),
        ("echo-search", {"query": "alpha", "session_id": str(uuid.uuid4())}),
        ("echo-search", {"query": "alpha", "account_id": account.account_id}),  # the pinned value itself: fine
        ("echo-fail", {"message": "nope"}),
        ("echo-crash", {}),
    ]

    async def main() -> list:
        async with Client(server) as client:
            return [await client.call_tool(name, args) for name, args in calls]

    try:
        results = _run(main)
    finally:
        contexts.close()
    search, write, bad_scope, missing, wide1, wide2, wide3, same, fail, crash = results
    assert not search.is_error
    assert text(search).splitlines() == [
        "alpha admin bot (scope: admin)",
        "alpha public bot (scope: public)",
        "alpha public other (scope: public)",
        "alpha public untagged (scope: public)",
        "alpha shared bot (scope: shared)",
    ]
    assert not write.is_error and json.loads(text(write))["created"] is True
    assert bad_scope.is_error and text(bad_scope).startswith("scope: must be one of")
    assert missing.is_error and text(missing) == "invalid arguments for echo-write: name: Field required"
    assert wide1.is_error and "account_id: ACCOUNT_ID is pinned" in text(wide1)
    assert wide2.is_error and "accountId: ACCOUNT_ID is pinned" in text(wide2)
    assert wide3.is_error and "session_id: SESSION_ID is pinned" in text(wide3)
    assert not same.is_error
    assert fail.is_error and text(fail) == "message: nope"
    assert crash.is_error and "RuntimeError" in text(crash)
    assert "internal detail" not in text(crash) and "Traceback" not in text(crash)
    # only the good write reached the graph
    names = {
        r["name"] for r in db.read("MATCH (n:Note) WHERE n.accountId = $a RETURN n.name AS name", a=account.account_id)
    }
    assert "beta note" in names and "gamma" not in names
    # one ToolCall per call, linked to the active Conversation, admin-scoped
    audit = tool_calls(db, account.account_id)
    assert [a["toolName"] for a in audit] == [name for name, _ in calls]
    assert all(a["conversation"] == conv_session and a["pluginName"] == "echo" for a in audit)
    assert all(a["sessionId"] == conv_session and a["scope"] == "admin" for a in audit)
    assert [a["isError"] for a in audit] == [r.is_error for r in results]
    assert json.loads(audit[1]["input"]) == {"name": "beta note", "scope": "shared"}
    assert audit[8]["output"] == "message: nope"
    assert all(a["startedAt"] <= a["completedAt"] for a in audit)
    assert caplog.text.count(f"[persist] tool-call persisted tool=echo-search conversation={conv_session[:8]}") == 5
    assert count(db, other.account_id, "ToolCall") == 0
    assert conv_node


def test_public_role_sees_only_its_scope_agent_and_account(db, account, make_account, data_root: Path) -> None:
    other = make_account("other")
    seed_notes(db, account, other)
    server, contexts = _server(
        data_root, "public", ACCOUNT_ID=account.account_id, ALLOWED_SCOPES="public", AGENT_SLUG="bot"
    )
    widen = [
        {"query": "alpha", "account_id": other.account_id},
        {"query": "alpha", "allowed_scopes": ["public", "admin"]},
        {"query": "alpha", "allowedScopes": ["admin"]},
        {"query": "alpha", "scopes": ["shared"]},
        {"query": "alpha", "agent_slug": "other"},
        {"query": "alpha", "agentSlug": "other"},
    ]

    async def main() -> tuple:
        async with Client(server) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            found = await client.call_tool("echo-search", {"query": "alpha"})
            who = await client.call_tool("echo-whoami", {})
            hidden = await client.call_tool("echo-write", {"name": "x"})
            refused = [await client.call_tool("echo-search", args) for args in widen]
            return names, found, who, hidden, refused

    before = count(db, account.account_id, "ToolCall")
    try:
        names, found, who, hidden, refused = _run(main)
    finally:
        contexts.close()
    assert names == {"echo-search", "echo-whoami", "echo-slow-search"}
    assert text(found) == "alpha public bot (scope: public)"
    assert json.loads(text(who))["allowedScopes"] == ["public"] and json.loads(text(who))["agentSlug"] == "bot"
    assert hidden.is_error  # not registered for the public role
    assert all(r.is_error and "is pinned for this server" in text(r) for r in refused)
    assert count(db, account.account_id, "ToolCall") == before  # public calls are not audited


def test_public_role_needs_its_pins(account, data_root: Path) -> None:
    from maxy.errors import ConfigError

    for pins, needle in [
        ({"AGENT_SLUG": "bot"}, "ALLOWED_SCOPES"),
        ({"ALLOWED_SCOPES": "public"}, "AGENT_SLUG"),
        ({"ALLOWED_SCOPES": "public,admin", "AGENT_SLUG": "bot"}, "admin scope"),
    ]:
        with pytest.raises(ConfigError, match=needle):
            _server(data_root, "public", ACCOUNT_ID=account.account_id, **pins)


def test_audit_failure_never_fails_the_call(
    account, data_root: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from maxy.errors import DatabaseUnavailable
    from maxy.mcp import audit

    def broken(ctx):
        raise DatabaseUnavailable("Neo4j is not reachable (simulated for the audit write)")

    monkeypatch.setattr(audit, "find_conversation", broken)
    caplog.set_level(logging.INFO)
    server, contexts = _server(data_root, "admin", ACCOUNT_ID=account.account_id)

    async def main():
        async with Client(server) as client:
            return await client.call_tool("echo-whoami", {})

    try:
        result = _run(main)
    finally:
        contexts.close()
    assert not result.is_error
    assert "[persist] warn tool-call-not-persisted tool=echo-whoami" in caplog.text


# ---------------------------------------------------------------------------------------
# API keys
def test_api_keys_are_hashed_pinned_and_revocable(account, data_root: Path) -> None:
    from maxy.errors import ValidationError
    from maxy.serving.keys import (
        ApiKeyStore,
        create_api_key,
        list_api_keys,
        revoke_api_key,
    )

    key, record = create_api_key(data_root, account.account_id, role="public", agent_slug="bot")
    assert record.scopes == ("public",) and record.agent_slug == "bot"
    path = data_root / "accounts" / account.account_id / "api-keys.json"
    assert key not in path.read_text() and record.key_hash in path.read_text()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    store = ApiKeyStore(data_root)
    assert store.resolve(key) == record
    assert store.resolve(key + "x") is None and store.resolve("") is None and store.resolve("mxy_zz_zz") is None
    admin_key, admin = create_api_key(data_root, account.account_id, role="admin")
    assert admin.scopes is None and store.resolve(admin_key).role == "admin"  # type: ignore[union-attr]
    assert {k.key_id for k in list_api_keys(data_root)} == {record.key_id, admin.key_id}
    assert revoke_api_key(data_root, record.key_id) and store.resolve(key) is None
    with pytest.raises(ValidationError, match="agent"):
        create_api_key(data_root, account.account_id, role="public")
    with pytest.raises(ValidationError, match="admin scope"):
        create_api_key(data_root, account.account_id, role="public", agent_slug="bot", scopes=["admin"])
    with pytest.raises(Exception, match="matches no account"):
        create_api_key(data_root, str(uuid.uuid4()), role="admin")


def test_http_key_contexts_refuse_wrong_role(account, data_root: Path) -> None:
    from maxy.mcp.http import KeyContexts
    from maxy.serving.keys import ApiKeyStore, create_api_key

    key, _ = create_api_key(data_root, account.account_id, role="public", agent_slug="bot")
    settings = load_settings(DATA_ROOT=data_root)
    admin_contexts = KeyContexts(settings, "admin", ApiKeyStore(data_root), None, None)  # type: ignore[arg-type]
    with pytest.raises(ToolError, match="public role, not admin"):
        admin_contexts("echo", {"x-api-key": key})
    public = KeyContexts(settings, "public", ApiKeyStore(data_root), None, None)  # type: ignore[arg-type]
    ctx = public("echo", {"x-api-key": key})
    assert (ctx.caller.account_id, ctx.caller.allowed_scopes, ctx.caller.agent_slug) == (
        account.account_id,
        ("public",),
        "bot",
    )
    assert ctx.pinned["ALLOWED_SCOPES"] == ["public"] and ctx.pinned["AGENT_SLUG"] == "bot"


# ---------------------------------------------------------------------------------------
# client configs
def test_client_config_pins_public_servers(account, data_root: Path, tmp_path: Path) -> None:
    from maxy.errors import ValidationError
    from maxy.mcp.clientconfig import build_client_config, write_client_config

    settings = load_settings(DATA_ROOT=data_root, ACCOUNT_ID=account.account_id)
    plugins = discover_plugins([], [ECHO, SERVERLESS])
    config = build_client_config(plugins, "public", settings=settings, agent_slug="bot", command=["maxy"])
    assert list(config["mcpServers"]) == ["maxy"]  # one server; serverless has no server and no public tool
    entry = config["mcpServers"]["maxy"]
    assert entry["command"] == "maxy" and entry["args"] == ["mcp", "serve", ECHO, "--role", "public"]
    env = entry["env"]
    assert (env["ACCOUNT_ID"], env["ALLOWED_SCOPES"], env["AGENT_SLUG"]) == (account.account_id, "public", "bot")
    assert "NEO4J_PASSWORD" not in env
    with pytest.raises(ValidationError, match="AGENT_SLUG"):
        build_client_config(plugins, "public", settings=settings, command=["maxy"])
    admin = build_client_config(plugins, "admin", settings=settings, command=["maxy"])
    assert "ALLOWED_SCOPES" not in admin["mcpServers"]["maxy"]["env"]
    out = tmp_path / ".mcp.json"
    out.write_text(json.dumps({"mcpServers": {"keep": {"command": "x"}}}))
    write_client_config(config, out)
    assert set(json.loads(out.read_text())["mcpServers"]) == {"keep", "maxy"}


# ---------------------------------------------------------------------------------------
# the proxy's wire rewriting
def test_proxy_flags_only_tools_list_responses(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    pending = Pending()
    note_requests(b'{"jsonrpc":"2.0","id":7,"method":"tools/list"}\n', pending)
    note_requests(b'[{"jsonrpc":"2.0","id":"b","method":"tools/list"}]\n', pending)
    other = b'{"jsonrpc":"2.0","id":8,"result":{"tools":[{"name":"x"}]}}\n'
    assert rewrite_response(other, pending) == other  # id 8 was not a tools/list request
    line = b'{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"a"},{"name":"b","_meta":{"k":1}}]}}\n'
    out = json.loads(rewrite_response(line, pending))
    assert [t["_meta"] for t in out["result"]["tools"]] == [{EAGER: True}, {"k": 1, EAGER: True}]
    assert "[graph-mcp] tools/list eager-flagged count=2" in caplog.text
    batch = json.loads(rewrite_response(b'[{"jsonrpc":"2.0","id":"b","result":{"tools":[{"name":"c"}]}}]\n', pending))
    assert batch[0]["result"]["tools"][0]["_meta"] == {EAGER: True}
    assert rewrite_response(b"not json\n", pending) == b"not json\n"
    deep = b"[" * 100_000 + b"]" * 100_000 + b"\n"  # deeper than the parser goes: relayed untouched
    note_requests(deep, pending)
    assert rewrite_response(deep, pending) == deep


def test_audit_input_never_holds_secrets():
    from maxy.mcp.audit import _input_json

    text = _input_json(
        {
            "kind": "login",
            "apiKey": "sk-live-123",
            "inputs": {"user": "ada", "pin": "1234", "otpCode": "999"},
            "inputSchema": {"properties": {"otpCode": {"type": "string", "secret": True}}},
        }
    )
    assert "sk-live-123" not in text and "1234" not in text and "999" not in text
    assert "ada" in text and "[redacted]" in text
