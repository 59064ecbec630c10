"""The plugin system, and the public API a plugin's code imports.

A plugin is a Python package with a ``PLUGIN.md`` manifest beside its ``__init__.py``,
registered in the ``maxy.plugins`` entry-point group. Its code imports from here (and from
the platform's domain packages: ``maxy.graph``, ``maxy.search``, ``maxy.conversations`` ...),
never from another plugin:

- declaring tools (``api``): :func:`tool`, :class:`ToolContext`, :class:`ToolError`, the
  output model base :class:`ToolOutput`, :class:`Rendered` (text carrying its data) and
  :func:`title_of`;
- argument types (``arguments``): enums from the allow-lists (``Label``, ``RelationshipType``,
  ``Scope`` ...), ``OneOrMany`` and the described ``ScopeArg``, ``AgentsArg``, ``NodeId`` ...;
- checking arguments (``checks``): :func:`require`, :func:`check_text`, :func:`check_int`,
  :func:`check_string_list`, and :func:`tool_errors` for the platform's own refusals;
- nodes (``nodes``): :func:`load_node`, :func:`update_node`, :func:`active_conversation`,
  :func:`now_iso` and ``SYSTEM`` (the agent the platform writes as); the guarded reads under
  them, :func:`read_node` and :func:`readable_node_ids`, come from ``maxy.graph.nodes``;
- log lines in the platform's format: :func:`log_line`, :func:`short`;
- commands (``commands``): a plugin package that defines ``register_commands(app)`` adds its
  own ``maxy`` commands; :func:`cli_context` gives them the pinned ToolContext a tool gets,
  and :func:`friendly`, :func:`emit_json` and ``out`` print like every other command.

The rest of the package is the platform's side: ``discovery`` finds and loads plugins,
``manifest`` reads ``PLUGIN.md`` and ``commands`` runs the CLI hook.
"""

from __future__ import annotations

from ..console import emit_json, friendly, out
from ..graph.nodes import read_node, readable_node_ids
from ..logs import log_line, short
from .api import ROLES, Rendered, Role, ToolContext, ToolError, ToolOutput, ToolSpec, title_of, tool, tools_of
from .arguments import (
    ISO_DATE,
    AgentsArg,
    Direction,
    IndexedLabel,
    Label,
    NodeId,
    OneOrMany,
    RelationshipType,
    RelationshipTypes,
    Scope,
    ScopeArg,
)
from .checks import check_int, check_string_list, check_text, require, tool_errors
from .commands import cli_context
from .nodes import SYSTEM, active_conversation, load_node, now_iso, update_node

__all__ = [
    "ISO_DATE",
    "ROLES",
    "AgentsArg",
    "Direction",
    "IndexedLabel",
    "Label",
    "NodeId",
    "OneOrMany",
    "RelationshipType",
    "RelationshipTypes",
    "Scope",
    "ScopeArg",
    "SYSTEM",
    "Rendered",
    "Role",
    "ToolContext",
    "ToolError",
    "ToolOutput",
    "ToolSpec",
    "active_conversation",
    "check_int",
    "check_string_list",
    "check_text",
    "cli_context",
    "emit_json",
    "friendly",
    "load_node",
    "log_line",
    "now_iso",
    "out",
    "read_node",
    "readable_node_ids",
    "require",
    "short",
    "title_of",
    "tool",
    "tool_errors",
    "tools_of",
    "update_node",
]
