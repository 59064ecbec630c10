"""The active conversation of a stdio server: the session its compaction, context and audit belong to.

An admin stdio server always has one, found in this order:

1. ``SESSION_NODE_ID``, else ``SESSION_ID``, from the environment (a sessionId or a nodeId);
2. ``CLAUDE_CODE_SESSION_ID``, which Claude Code sets in the environment of the stdio servers
   it starts (the id of the session the server was started in);
3. otherwise one minted at start (a UUID, logged), one per server process.

Its Conversation need not exist: ``session-compact`` creates it on first use, and until then
the audit's ToolCalls stand alone. The id is kept as ``SESSION_NODE_ID`` (the active
conversation), never as ``SESSION_ID``, which would limit every search to that session.

The generated ``.mcp.json`` passes ``"SESSION_NODE_ID": "${CLAUDE_CODE_SESSION_ID:-}"``; a
client that expands ``${VAR}`` / ``${VAR:-default}`` in env values (Claude Code does) fills it
in, and for one that passes the text through unexpanded, the server expands it from its own
environment, so the same config works with both.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Mapping

from ..config import Settings
from ..logs import log_line, short
from ..plugins.api import Role

CLIENT_SESSION_VARIABLE = "CLAUDE_CODE_SESSION_ID"
CONFIG_REFERENCE = "${" + CLIENT_SESSION_VARIABLE + ":-}"  # what `maxy mcp config` writes
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}")


def expand_reference(value: str | None, environ: Mapping[str, str]) -> str | None:
    """``value`` with ``${VAR}`` / ``${VAR:-default}`` / ``${VAR-default}`` references expanded
    from ``environ`` (a client that does not expand them passes them through as text);
    None when nothing but blanks is left."""
    if not value:
        return None

    def one(match: re.Match[str]) -> str:
        found = environ.get(match.group(1))
        return found if found else (match.group(2) or "")

    expanded = _REFERENCE.sub(one, value).strip()
    return expanded or None


def with_active_session(settings: Settings, role: Role, environ: Mapping[str, str] | None = None) -> Settings:
    """``settings`` with the server's active conversation resolved (see the module docstring)."""
    env = os.environ if environ is None else environ
    node = expand_reference(settings.SESSION_NODE_ID, env)
    session = expand_reference(settings.SESSION_ID, env)
    if node:
        source = "SESSION_NODE_ID"
    elif session:
        source = "SESSION_ID"
    elif role == "admin" and env.get(CLIENT_SESSION_VARIABLE, "").strip():
        node, source = env[CLIENT_SESSION_VARIABLE].strip(), CLIENT_SESSION_VARIABLE
    elif role == "admin":
        node, source = str(uuid.uuid4()), "minted"
    else:
        source = "none"
    if source != "none":
        log_line("mcp", "active-session", source=source, session=short(node or session))
    return settings.model_copy(update={"SESSION_NODE_ID": node, "SESSION_ID": session})
