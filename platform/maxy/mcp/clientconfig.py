"""``maxy mcp config``: a ready ``.mcp.json`` for Claude Code and other MCP clients.

One stdio server entry, ``maxy``, that serves the tools of the chosen profiles (the default:
``daily``) for the role in one process:

    {"mcpServers": {"maxy": {"type": "stdio", "command": "/venv/bin/maxy",
                             "args": ["mcp", "serve", "--profile", "daily", "--role", "admin"],
                             "env": {"MAXY_CONFIG_DIR": "...", "ACCOUNT_ID": "...",
                                     "SESSION_NODE_ID": "${CLAUDE_CODE_SESSION_ID:-}"}}}}

Without ``--profile`` the entry loads ``all`` the installed plugins and serves every tool;
``--plugin`` names the plugins instead (only those that declare
an MCP server and have tools for the role), and ``per_plugin`` writes one entry (one process)
per plugin, named after its server. The admin entry passes the client's session as
the active conversation (``maxy.mcp.active_session``) and, when given, the task store's role
(TASK_ROLE) and the community member (MEMBER_ID); the public one pins ACCOUNT_ID, ALLOWED_SCOPES and AGENT_SLUG, never a task role or a member. Secrets (NEO4J_PASSWORD) are never written: the server reads
them from ``MAXY_CONFIG_DIR/.env``. Writing merges into an existing file and replaces the
entries an earlier run wrote (any entry that runs ``maxy mcp serve``).
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..accounts import validate_account
from ..config import MEMBER_ID_PATTERN, TASK_ROLE_VALUES, Settings, config_dir, env_file
from ..errors import ConfigError, ValidationError
from ..fsfaults import atomic_write
from ..identifiers import check_agent_slug
from ..logs import log_line
from ..plugins.api import Role
from ..plugins.discovery import LoadedPlugin
from .active_session import CONFIG_REFERENCE
from .server import check_boot_gate, check_public_pins, tools_for_role

SERVER_NAME = "maxy"
ALL = "all"


def maxy_command() -> list[str]:
    """The ``maxy`` console script beside this interpreter, else ``python -m maxy``."""
    script = Path(sys.executable).parent / ("maxy.exe" if os.name == "nt" else "maxy")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-m", "maxy"]


def _writer_pins(role: Role, task_role: str | None, member_id: str | None) -> dict[str, str]:
    """TASK_ROLE and MEMBER_ID, when given: an admin entry's only (public agents never write)."""
    env: dict[str, str] = {}
    if task_role is not None:
        if role == "public":
            raise ValidationError("taskRole", "the public role cannot carry a task role: public agents never write")
        if task_role not in TASK_ROLE_VALUES:
            raise ValidationError(
                "taskRole", f"{task_role!r} is not a task role: use one of {', '.join(TASK_ROLE_VALUES)}"
            )
        env["TASK_ROLE"] = task_role
    if member_id is not None:
        if role == "public":
            raise ValidationError("memberId", "the public role cannot act for a member: public agents never write")
        if not re.fullmatch(MEMBER_ID_PATTERN, member_id):
            raise ValidationError("memberId", f"{member_id!r} is not a member id")
        env["MEMBER_ID"] = member_id
    return env


def _pins(
    settings: Settings,
    role: Role,
    agent_slug: str | None,
    scopes: Sequence[str] | None,
    task_role: str | None,
    member_id: str | None = None,
) -> dict[str, str]:
    account = validate_account(settings.data_root, settings.ACCOUNT_ID)
    env: dict[str, str] = {"MAXY_CONFIG_DIR": str(config_dir().resolve()), "ACCOUNT_ID": account.account_id}
    if settings.DATA_ROOT:
        env["DATA_ROOT"] = str(Path(settings.DATA_ROOT).expanduser().resolve())
    if agent_slug:
        env["AGENT_SLUG"] = check_agent_slug(agent_slug, field="agent")
    if role == "public":
        chosen = list(scopes) if scopes else ["public"]
        # the entry's own pins; this process's TASK_ROLE is not written into it (--task-role is checked below)
        pinned = settings.model_copy(
            update={"ALLOWED_SCOPES": chosen, "AGENT_SLUG": agent_slug, "TASK_ROLE": None, "MEMBER_ID": None}
        )
        try:
            check_public_pins(pinned)
        except ConfigError as err:
            raise ValidationError("role", f"{err} (use --agent SLUG and --scopes public[,shared])") from None
        env["ALLOWED_SCOPES"] = ",".join(chosen)
    elif scopes:
        env["ALLOWED_SCOPES"] = ",".join(scopes)
    env |= _writer_pins(role, task_role, member_id)
    if os.environ.get("PYTHONPATH"):  # an uninstalled checkout, or plugins importable only from there
        parts = [p for p in os.environ["PYTHONPATH"].split(os.pathsep) if p]
        env["PYTHONPATH"] = os.pathsep.join(str(Path(p).resolve()) for p in parts)
    return env


def build_client_config(
    plugins: Sequence[LoadedPlugin],
    role: Role,
    *,
    settings: Settings,
    agent_slug: str | None = None,
    scopes: Sequence[str] | None = None,
    command: Sequence[str] | None = None,
    serve_all: bool = False,
    per_plugin: bool = False,
    task_role: str | None = None,
    member_id: str | None = None,
    profiles: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The ``mcpServers`` of ``plugins`` for ``role``. ``serve_all``: ``plugins`` are every installed
    plugin, and the entry loads all of them (so a plugin installed later is loaded too) and serves
    the tools of ``profiles`` (``maxy.mcp.profiles``; None: every tool)."""
    env = _pins(settings, role, agent_slug, scopes, task_role, member_id)
    if role == "admin":
        env["SESSION_NODE_ID"] = CONFIG_REFERENCE
    if not settings.NEO4J_PASSWORD or not _in_env_file("NEO4J_PASSWORD"):
        log_line(
            "mcp-config",
            "warn",
            level=logging.WARNING,
            reason="password-not-in-config-env",
            remedy=f"the spawned server reads NEO4J_PASSWORD from {env_file()}",
        )
    cmd = list(command) if command is not None else maxy_command()
    served = [p for p in plugins if p.mcp_server is not None and tools_for_role([p], role)]

    def entry(targets: Sequence[str]) -> dict[str, Any]:
        if profiles is not None and list(targets) == [ALL]:
            targets = ["--profile", ",".join(profiles)]
        args = [*cmd[1:], "mcp", "serve", *targets, "--role", role]
        return {"type": "stdio", "command": cmd[0], "args": args, "env": dict(env)}

    servers: dict[str, Any] = {}
    if per_plugin:
        for plugin in served:
            servers[str(plugin.mcp_server)] = entry([_target(plugin)])
    elif served:
        if serve_all:
            check_boot_gate(plugins)  # `serve all` would refuse to start: say so now, not in the client
        servers[SERVER_NAME] = entry([ALL] if serve_all else [_target(p) for p in served])
    log_line(
        "mcp-config",
        "built",
        role=role,
        servers=sorted(servers),
        plugins=[p.name for p in served],
        agent=agent_slug,
        taskRole=task_role,
        member=member_id,
        profiles=",".join(profiles) if profiles is not None and serve_all else None,
    )
    return {"mcpServers": servers}


def _target(plugin: LoadedPlugin) -> str:
    return plugin.name if plugin.source == "entry-point" else plugin.module


def _in_env_file(key: str) -> bool:
    path = env_file()
    return path.exists() and any(line.split("=", 1)[0].strip() == key for line in path.read_text().splitlines())


def _runs_maxy_serve(entry: object) -> bool:
    """An entry an earlier ``maxy mcp config`` wrote: its arguments run ``maxy mcp serve``."""
    if not isinstance(entry, dict) or not isinstance(entry.get("args"), list):
        return False
    args = [str(a) for a in entry["args"]]
    calls_maxy = "maxy" in Path(str(entry.get("command", ""))).name or "maxy" in args[:3]
    return calls_maxy and any(args[i : i + 2] == ["mcp", "serve"] for i in range(len(args) - 1))


def write_client_config(config: dict[str, Any], path: Path) -> tuple[Path, list[str]]:
    """Write (or merge into) ``path``; returns it and the names of the entries replaced: those
    with the new entries' names, and every other one that runs ``maxy mcp serve`` (an earlier
    layout, such as one server per plugin, so no Maxy server is started twice)."""
    path = Path(path)
    if not path.parent.is_dir():  # a mistyped --out is refused, not turned into new folders
        raise ConfigError(
            f"--out {path}: the folder {path.parent} does not exist: create it first or choose another --out"
        )
    existing: dict[str, Any] = {}
    if path.exists():
        try:
            existing = json.loads(path.read_text() or "{}")
        except json.JSONDecodeError as err:
            raise ConfigError(f"{path} exists but is not JSON ({err}); move it away or fix it") from None
        if not isinstance(existing, dict):
            raise ConfigError(f"{path} exists but is not a JSON object")
    new = config.get("mcpServers", {})
    old = dict(existing.get("mcpServers") or {})
    replaced = sorted(name for name, entry in old.items() if name in new or _runs_maxy_serve(entry))
    servers = {name: entry for name, entry in old.items() if name not in replaced}
    servers.update(new)
    existing["mcpServers"] = servers
    atomic_write(path, json.dumps(existing, indent=2) + "\n")
    if replaced:
        log_line("mcp-config", "replaced", path=str(path), servers=replaced)
    return path, replaced
