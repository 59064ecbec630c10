"""``maxy mcp config``: a ready ``.mcp.json`` for Claude Code and other MCP clients.

One stdio server entry per plugin that declares an MCP server and has tools for the role:

    {"mcpServers": {"memory": {"type": "stdio", "command": "/venv/bin/maxy",
                               "args": ["mcp", "serve", "memory", "--role", "public"],
                               "env": {"MAXY_CONFIG_DIR": "...", "ACCOUNT_ID": "...",
                                       "ALLOWED_SCOPES": "public", "AGENT_SLUG": "concierge"}}}}

The public role lists only plugins with at least one publicAllowlist tool and pins
ACCOUNT_ID, ALLOWED_SCOPES and AGENT_SLUG. Secrets (NEO4J_PASSWORD) are never written: the
server reads them from ``MAXY_CONFIG_DIR/.env``.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..accounts import validate_account
from ..config import Settings, config_dir, env_file
from ..errors import ConfigError, ValidationError
from ..graph.allowlist import check_agent_slug
from ..logs import log_line
from ..plugins.api import Role
from ..plugins.discovery import LoadedPlugin
from .server import check_public_pins, tools_for_role


def maxy_command() -> list[str]:
    """The ``maxy`` console script beside this interpreter, else ``python -m maxy``."""
    script = Path(sys.executable).parent / ("maxy.exe" if os.name == "nt" else "maxy")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-m", "maxy"]


def _pins(settings: Settings, role: Role, agent_slug: str | None, scopes: Sequence[str] | None) -> dict[str, str]:
    account = validate_account(settings.data_root, settings.ACCOUNT_ID)
    env: dict[str, str] = {"MAXY_CONFIG_DIR": str(config_dir().resolve()), "ACCOUNT_ID": account.account_id}
    if settings.DATA_ROOT:
        env["DATA_ROOT"] = str(Path(settings.DATA_ROOT).expanduser().resolve())
    if agent_slug:
        env["AGENT_SLUG"] = check_agent_slug(agent_slug, field="agent")
    if role == "public":
        chosen = list(scopes) if scopes else ["public"]
        pinned = settings.model_copy(update={"ALLOWED_SCOPES": chosen, "AGENT_SLUG": agent_slug})
        try:
            check_public_pins(pinned)
        except ConfigError as err:
            raise ValidationError("role", f"{err} (use --agent SLUG and --scopes public[,shared])") from None
        env["ALLOWED_SCOPES"] = ",".join(chosen)
    elif scopes:
        env["ALLOWED_SCOPES"] = ",".join(scopes)
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
) -> dict[str, Any]:
    env = _pins(settings, role, agent_slug, scopes)
    if not settings.NEO4J_PASSWORD or not _in_env_file("NEO4J_PASSWORD"):
        log_line(
            "mcp-config",
            "warn",
            level=logging.WARNING,
            reason="password-not-in-config-env",
            remedy=f"the spawned server reads NEO4J_PASSWORD from {env_file()}",
        )
    cmd = list(command) if command is not None else maxy_command()
    servers: dict[str, Any] = {}
    for plugin in plugins:
        if plugin.mcp_server is None or not tools_for_role([plugin], role):
            continue
        target = plugin.name if plugin.source == "entry-point" else plugin.module
        servers[plugin.mcp_server] = {
            "type": "stdio",
            "command": cmd[0],
            "args": [*cmd[1:], "mcp", "serve", target, "--role", role],
            "env": dict(env),
        }
    log_line("mcp-config", "built", role=role, servers=sorted(servers), agent=agent_slug)
    return {"mcpServers": servers}


def _in_env_file(key: str) -> bool:
    path = env_file()
    return path.exists() and any(line.split("=", 1)[0].strip() == key for line in path.read_text().splitlines())


def write_client_config(config: dict[str, Any], path: Path) -> Path:
    """Write (or merge into) ``path``: entries with the same server name are replaced."""
    path = Path(path)
    existing: dict[str, Any] = {}
    if path.exists():
        try:
            existing = json.loads(path.read_text() or "{}")
        except json.JSONDecodeError as err:
            raise ConfigError(f"{path} exists but is not JSON ({err}); move it away or fix it") from None
        if not isinstance(existing, dict):
            raise ConfigError(f"{path} exists but is not a JSON object")
    servers = dict(existing.get("mcpServers") or {})
    servers.update(config.get("mcpServers", {}))
    existing["mcpServers"] = servers
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(existing, indent=2) + "\n")
    os.replace(tmp, path)
    return path
