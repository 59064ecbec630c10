"""``maxy mcp ...`` and ``maxy serve``: the MCP commands (a feature module: ``register(app)``)."""

from __future__ import annotations

import errno
import json
import re
import sys
from pathlib import Path
from typing import Any

import typer

from ..console import friendly

mcp_app = typer.Typer(no_args_is_help=True, help="MCP servers for agents: serve, proxy, client configs, API keys.")
key_app = typer.Typer(no_args_is_help=True, help="API keys for the streamable HTTP server (maxy serve).")
mcp_app.add_typer(key_app, name="key")


def _err(message: str) -> None:
    sys.stderr.write(f"error: {message}\n")
    sys.stderr.flush()


def _role(value: str) -> str:
    if value not in ("admin", "public"):
        raise typer.BadParameter("must be admin or public")
    return value


ALL = "all"  # the target that names every installed plugin
_TOOL_NAME = re.compile(r"[A-Za-z0-9_.:/-]{1,128}")


def _tool_names(values: list[str] | None) -> list[str] | None:
    for value in values or ():
        if not _TOOL_NAME.fullmatch(value):
            raise typer.BadParameter(
                f"{value!r} is not a tool name: use the upstream's name as tools/list shows it, e.g. read_neo4j_cypher",
                param_hint="--read-tool",
            )
    return values


def _plugins(names: list[str] | None, modules: list[str] | None, names_flag: str = "PLUGINS") -> Any:
    """The named plugins; none named, or ``all`` among them: every installed one (plus any
    module paths named beside it). A plugin that cannot be loaded is an error naming the flag
    (``--module``, else ``names_flag``) that asked for it."""
    from ..config import load_settings
    from ..errors import MaxyError, ValidationError
    from ..plugins.discovery import discover_plugins

    names = list(names or ())
    extra = list(modules or ())
    excluded = load_settings().EXCLUDED_PLUGINS or ()
    try:
        if ALL in names:
            extra += [n for n in names if n != ALL and "." in n]  # a module path is not installed: load it too
            return discover_plugins(None, extra, excluded)
        return discover_plugins(names or None, extra, excluded)
    except MaxyError as err:
        if any(repr(m) in str(err) for m in modules or ()):
            raise ValidationError("--module", str(err)) from None
        if any(repr(n) in str(err) for n in names):
            raise ValidationError(names_flag, str(err)) from None
        raise  # an installed plugin nobody named is broken: not a usage error


_PROFILE_HELP = (
    "Tool profiles to serve, comma-separated or repeated: daily (the default), tasks, memory, "
    "community, memory-agent, admin, any plugin's name, or all."
)
_KEY_PROFILE_HELP = (
    "The tool profiles the key is served (comma-separated or repeated), e.g. daily,tasks; default: the server's."
)


def served_plugins(
    plugins: list[str] | None, modules: list[str] | None, profile: list[str] | None, names_flag: str = "PLUGINS"
) -> tuple[Any, list[str]]:
    """The plugins to load and the tool profiles to serve. ``--profile`` given: those. Else
    plugins named (``all`` included): every tool of theirs. Else the default profile, and
    every tool of a plugin loaded by ``--module``."""
    from .profiles import ALL as EVERY
    from .profiles import DEFAULT_PROFILES, check_profiles

    loaded = _plugins(plugins, modules, names_flag)
    if profile:
        return loaded, check_profiles(profile, loaded)
    if plugins:
        return loaded, [EVERY]
    extra = [p.name for p in loaded if p.source == "module"]
    return loaded, [*DEFAULT_PROFILES, *extra]


def _task_role(value: str | None) -> str | None:
    from ..config import TASK_ROLE_VALUES

    if value is not None and value not in TASK_ROLE_VALUES:
        raise typer.BadParameter(f"{value!r} is not a task role: use one of {', '.join(TASK_ROLE_VALUES)}")
    return value


def _member(value: str | None) -> str | None:
    import re

    from ..config import MEMBER_ID_PATTERN

    if value is not None and not re.fullmatch(MEMBER_ID_PATTERN, value):
        raise typer.BadParameter(
            f"{value!r} is not a member id: a letter or digit, then letters, digits, '.', '_', '@' or '-'"
        )
    return value


def _scopes(value: str | None) -> list[str] | None:
    from ..config import SCOPE_VALUES

    scopes = [s.strip() for s in value.split(",") if s.strip()] if value else None
    unknown = [s for s in scopes or () if s not in SCOPE_VALUES]
    if unknown:
        raise typer.BadParameter(
            f"unknown scope(s) {', '.join(map(repr, unknown))}: use {', '.join(SCOPE_VALUES)}", param_hint="--scopes"
        )
    return scopes


# ---------------------------------------------------------------------------------------
@mcp_app.command("serve")
@friendly
def mcp_serve(
    plugins: list[str] = typer.Argument(
        None, help="Plugin names (entry points) or module paths, or `all`: every tool of these; default: --profile."
    ),
    role: str = typer.Option("admin", "--role", callback=_role, help="admin or public."),
    module: list[str] = typer.Option(None, "--module", help="Also load this plugin module (repeatable)."),
    profile: list[str] = typer.Option(None, "--profile", help=_PROFILE_HELP),
) -> None:
    """Serve plugins' tools over stdio in one process, pinned by ACCOUNT_ID, ALLOWED_SCOPES,
    AGENT_SLUG, SESSION_ID, TASK_ROLE, MEMBER_ID; the active conversation is SESSION_NODE_ID, else the client's session
    (CLAUDE_CODE_SESSION_ID), else one minted at start."""
    from ..config import load_settings
    from .active_session import with_active_session
    from .server import run_stdio

    settings = load_settings()  # a bad setting stops the server before any plugin loads
    loaded, profiles = served_plugins(plugins, module, profile)
    run_stdio(loaded, role, with_active_session(settings, role), profiles)  # type: ignore[arg-type]


@mcp_app.command(
    "proxy",
    context_settings={"allow_interspersed_args": False, "ignore_unknown_options": True},
)
@friendly
def mcp_proxy(
    command: list[str] = typer.Argument(..., help="The upstream stdio MCP server command, after `--`."),
    read_tool: list[str] = typer.Option(
        None,
        "--read-tool",
        callback=_tool_names,
        help="The upstream's read-query tool, whose results get Neo4j's warnings (repeatable; default read_neo4j_cypher).",
    ),
    probe_timeout: float = typer.Option(
        2.0, "--probe-timeout", min=0.1, max=60.0, help="Seconds a read's response waits for its warnings probe."
    ),
) -> None:
    """Relay an upstream stdio MCP server, flagging every tool eager (_meta anthropic/alwaysLoad) and
    putting Neo4j's warnings (EXPLAIN of the same query) in front of each read result."""
    from .envelope import READ_TOOL
    from .proxy import run_proxy

    raise typer.Exit(run_proxy(command, read_tools=read_tool or (READ_TOOL,), probe_timeout=probe_timeout))


@mcp_app.command("config")
@friendly
def mcp_config(
    role: str = typer.Option("admin", "--role", callback=_role, help="admin or public."),
    agent: str | None = typer.Option(None, "--agent", help="Agent slug to pin (required for public)."),
    scopes: str | None = typer.Option(None, "--scopes", help="Scopes to pin, e.g. public or public,shared."),
    out: Path = typer.Option(Path(".mcp.json"), "--out", help="File to write (merged); '-' prints to stdout."),
    plugin: list[str] = typer.Option(None, "--plugin", help="Only these plugins (names or module paths)."),
    per_plugin: bool = typer.Option(
        False, "--per-plugin", help="One server (one process) per plugin instead of one for all of them."
    ),
    task_role: str | None = typer.Option(
        None, "--task-role", callback=_task_role, help="The task store's role the server acts as (admin only)."
    ),
    member_id: str | None = typer.Option(
        None, "--member", callback=_member, help="The community member the server acts for (admin only)."
    ),
    profile: list[str] = typer.Option(None, "--profile", help=_PROFILE_HELP),
) -> None:
    """Write a ready .mcp.json for Claude Code and other clients: one stdio server, named maxy,
    serving the tools of the daily profile (or --profile, --plugin) for the role with the role's pins."""
    from ..config import load_settings
    from .clientconfig import build_client_config, write_client_config
    from .profiles import COMMUNITY_PROFILE

    if member_id is not None and not profile and not plugin:
        profile = ["daily", COMMUNITY_PROFILE]  # a member's server is for the community
    loaded, profiles = served_plugins(plugin or None, None, profile, "--plugin")
    config = build_client_config(
        loaded,
        role,  # type: ignore[arg-type]
        settings=load_settings(),
        agent_slug=agent,
        scopes=_scopes(scopes),
        serve_all=not plugin or plugin == [ALL],
        per_plugin=per_plugin,
        task_role=task_role,
        member_id=member_id,
        profiles=profiles if not plugin or profile else None,
    )
    if str(out) == "-":
        sys.stdout.write(json.dumps(config, indent=2) + "\n")
        return
    path, replaced = write_client_config(config, out)
    done = (
        f"wrote {path} ({', '.join(config['mcpServers']) or 'no servers'}; role {role}; tools: {', '.join(profiles)})"
    )
    sys.stderr.write(done + (f"; replaced {', '.join(replaced)}" if replaced else "") + "\n")


@mcp_app.command("plugins")
@friendly
def mcp_plugins(
    json_out: bool = typer.Option(False, "--json"),
    module: list[str] = typer.Option(None, "--module", help="Also load this plugin module (repeatable)."),
) -> None:
    """List the installed plugins, their MCP server and every tool with its flags."""
    loaded = _plugins(None, module)
    data = [
        {
            "name": p.name,
            "module": p.module,
            "source": p.source,
            "mcpServer": p.mcp_server,
            "tools": {t.name: t.flags() for t in p.tools},
        }
        for p in loaded
    ]
    if json_out:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return
    for p in data:
        sys.stdout.write(f"{p['name']}  server={p['mcpServer'] or '-'}  ({p['module']}, {p['source']})\n")
        for name, flags in p["tools"].items():
            on = [k for k, v in flags.items() if v]
            sys.stdout.write(f"  {name:28} {' '.join(on) or '-'}\n")


# ---------------------------------------------------------------------------------------
@key_app.command("create")
@friendly
def key_create(
    role: str = typer.Option(..., "--role", callback=_role, help="admin or public."),
    agent: str | None = typer.Option(None, "--agent", help="Agent slug the key is pinned to (required for public)."),
    scopes: str | None = typer.Option(None, "--scopes", help="Pinned scopes; public keys default to public."),
    account: str | None = typer.Option(None, "--account", help="The account, by name or id (default: ACCOUNT_ID)."),
    task_role: str | None = typer.Option(
        None, "--task-role", callback=_task_role, help="The task store's role of the key's calls (admin keys only)."
    ),
    member_id: str | None = typer.Option(
        None, "--member", callback=_member, help="The community member the key's calls act for (admin keys only)."
    ),
    profile: list[str] = typer.Option(None, "--profile", help=_KEY_PROFILE_HELP),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Create an API key for `maxy serve`; the key is printed once and stored only as a hash."""
    from ..accounts import account_option, account_ref, ref_label
    from ..config import load_settings
    from ..serving.keys import create_api_key
    from .profiles import check_profiles

    settings = load_settings()
    profiles = check_profiles(profile, _plugins(None, None)) if profile else None
    key, record = create_api_key(
        settings.data_root,
        account_option(settings.data_root, account).account_id if account else settings.ACCOUNT_ID or "",
        role=role,  # type: ignore[arg-type]
        agent_slug=agent,
        scopes=_scopes(scopes),
        task_role=task_role,
        member_id=member_id,
        profiles=profiles,
    )
    ref = account_ref(settings.data_root, record.account_id)
    if json_out:
        sys.stdout.write(json.dumps(dict(record.as_dict(), key=key, account=ref), indent=2) + "\n")
    else:
        sys.stdout.write(key + "\n")
        sys.stderr.write(
            f"key {record.key_id}: role {record.role}, agent {record.agent_slug or '-'}, "
            f"scopes {_view(record.as_dict())}, task role {record.task_role or '-'}, "
            f"member {record.member_id or '-'}, "
            f"tools {','.join(record.profiles) if record.profiles else 'the server default'}, "
            f"{ref_label(ref)} "
            "(shown once; send it as Authorization: Bearer <key>, or as the x-api-key header)\n"
        )
        if not record.holds_view:
            sys.stderr.write(
                "it reaches only the community's tools, as that member: add --scopes or --agent to reach memory\n"
            )


def _view(key: dict[str, Any]) -> str:
    """The scopes a key reads, in words: a member's key made without a view reads no memory."""
    if not key["memoryView"]:
        return "none"
    return ",".join(key["scopes"]) if key["scopes"] else "all"


@key_app.command("list")
@friendly
def key_list(json_out: bool = typer.Option(False, "--json")) -> None:
    """List API keys (never the keys themselves)."""
    from ..config import load_settings
    from ..serving.keys import list_api_keys

    keys = [k.as_dict() for k in list_api_keys(load_settings().data_root)]
    if json_out:
        sys.stdout.write(json.dumps(keys, indent=2) + "\n")
        return
    for k in keys:
        scopes = _view(k)
        sys.stdout.write(
            f"{k['keyId']}  {k['role']:6}  agent={k['agentSlug'] or '-'}  scopes={scopes}  "
            f"taskRole={k['taskRole'] or '-'}  member={k['memberId'] or '-'}  "
            f"tools={','.join(k.get('profiles') or ()) or 'default'}  {k['accountId']}\n"
        )


@key_app.command("revoke")
@friendly
def key_revoke(key_id: str = typer.Argument(..., help="The key id shown by `maxy mcp key list`.")) -> None:
    """Revoke an API key."""
    from ..config import load_settings
    from ..serving.keys import revoke_api_key

    if not revoke_api_key(load_settings().data_root, key_id):
        _err(f"no API key with id {key_id}")
        raise typer.Exit(1)
    sys.stderr.write(f"revoked {key_id}\n")


# ---------------------------------------------------------------------------------------
def serve(
    plugins: list[str] = typer.Argument(
        None, help="Plugin names or module paths, or `all`: every tool of these; default: --profile."
    ),
    host: str = typer.Option("127.0.0.1", "--host"),
    port: int = typer.Option(8765, "--port", min=1, max=65535),
    module: list[str] = typer.Option(None, "--module", help="Also load this plugin module (repeatable)."),
    profile: list[str] = typer.Option(
        None, "--profile", help=_PROFILE_HELP + " A key made with --profile is served its own."
    ),
    stateless: bool = typer.Option(
        False,
        "--stateless",
        help="Answer each /mcp request without an MCP session, so any of several replicas answers any "
        "request (default: MAXY_MCP_STATELESS).",
    ),
) -> None:
    """Serve the MCP tools over streamable HTTP at /mcp (Authorization: Bearer <key> or x-api-key) in a
    FastAPI app; /docs and /openapi.json describe it."""
    from ..serving.app import serve_http

    _check_address(host, port)
    loaded, profiles = served_plugins(plugins, module, profile)
    serve_http(loaded, host=host, port=port, profiles=profiles, stateless=True if stateless else None)


def _check_address(host: str, port: int) -> None:
    """A port in use or a host that is not this machine's is one line naming the flag, before
    anything starts (the server's own message would come after the plugins are loaded)."""
    import socket

    from ..errors import MaxyError

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as err:
        raise MaxyError(f"--host: {host!r} is not a host name or address of this machine ({err})") from None
    family, kind, proto, _name, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as err:
            flag = "--port" if err.errno == errno.EADDRINUSE else "--host"
            raise MaxyError(
                f"{flag}: cannot listen on {host}:{port} ({err.strerror}); choose another with {flag}"
            ) from None


def register(app: typer.Typer) -> None:
    app.add_typer(mcp_app, name="mcp")
    app.command("serve")(friendly(serve))


def main() -> None:
    """``python -m maxy.mcp.cli``: these commands alone (before ``maxy.cli`` discovers them)."""
    from ..logs import configure

    configure()  # LOG_LEVEL, else every line, as `maxy mcp serve` logs
    app = typer.Typer(no_args_is_help=True, add_completion=False, help="Maxy MCP commands.")
    register(app)
    app()


if __name__ == "__main__":
    main()
