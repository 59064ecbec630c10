"""Tool names as a specialist's ``tools:`` line spells them.

- Claude Code's own tools (``Read``, ``Bash``, ``Agent`` ...) are :data:`NATIVE_TOOLS`, the one
  list of them; one may carry an argument in parentheses (``Agent(researcher)``, ``Bash(git:*)``).
- MCP tools are ``mcp__<server>__<tool>``: a server of the client's own config (Maxy's
  ``maxy mcp config`` names them ``maxy``, or ``memory``, ``work`` ... with ``--per-plugin``),
  or ``mcp__plugin_<plugin>_<server>__<tool>`` for a server a Claude Code plugin brings.
- Anything else is malformed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Claude Code's built-in tools, as its permission rules and subagent tool lists spell them
NATIVE_TOOLS = frozenset(
    {
        "Agent",
        "Artifact",
        "AskUserQuestion",
        "Bash",
        "BashOutput",
        "CronCreate",
        "CronDelete",
        "CronList",
        "Edit",
        "EnterPlanMode",
        "EnterWorktree",
        "ExitPlanMode",
        "ExitWorktree",
        "Glob",
        "Grep",
        "KillBash",
        "KillShell",
        "LS",
        "LSP",
        "ListMcpResourcesTool",
        "MultiEdit",
        "NotebookEdit",
        "NotebookRead",
        "Read",
        "ReadMcpResourceTool",
        "Skill",
        "SlashCommand",
        "Task",
        "TaskCreate",
        "TaskGet",
        "TaskList",
        "TaskOutput",
        "TaskStop",
        "TaskUpdate",
        "TodoRead",
        "TodoWrite",
        "ToolSearch",
        "WebFetch",
        "WebSearch",
        "Write",
    }
)

PLUGIN_PREFIX = "plugin_"  # mcp__plugin_<plugin>_<server>__<tool>: a server a Claude Code plugin brings
_NATIVE_CALL = re.compile(r"^(?P<base>[A-Za-z]+)\((?P<argument>[^()]*)\)$")
# a namespace never holds "__" (the separator) nor ends in "_"; a tool name is what MCP allows
_MCP_NAME = re.compile(r"^mcp__(?P<namespace>[A-Za-z0-9](?:_?[A-Za-z0-9-])*)__(?P<tool>[A-Za-z0-9][A-Za-z0-9_.-]*)$")
MAX_TOOL_NAME = 256


@dataclass(frozen=True)
class McpName:
    """``mcp__<namespace>__<tool>``."""

    namespace: str
    tool: str


def is_native(name: str) -> bool:
    """A Claude Code tool, bare or with an argument (``Agent(researcher)``)."""
    if name in NATIVE_TOOLS:
        return True
    call = _NATIVE_CALL.match(name)
    return call is not None and call["base"] in NATIVE_TOOLS


def parse_mcp_name(name: str) -> McpName | None:
    """The namespace and tool of an ``mcp__<namespace>__<tool>`` name; None for any other shape."""
    if len(name) > MAX_TOOL_NAME:
        return None
    found = _MCP_NAME.match(name)
    return McpName(found["namespace"], found["tool"]) if found else None


def split_tools(value: object) -> list[str]:
    """The names of a ``tools:`` value: a comma-separated line (commas inside parentheses belong to
    the name: ``Agent(a, b)``) or a YAML list of names. Distinct, in order; raises ValueError
    saying what is wrong."""
    if isinstance(value, str):
        items = _split_line(value)
    elif isinstance(value, list):
        items = []
        for i, item in enumerate(value):
            if not isinstance(item, str) or not item.strip():
                raise ValueError(f"tools[{i}] must be a tool name, got {item!r}")
            items.append(item.strip())
    else:
        raise ValueError(f"tools must be a comma-separated line or a list of tool names, got {value!r}")
    names = list(dict.fromkeys(items))
    if not names:
        raise ValueError("tools lists no tool; name the tools the specialist may use")
    for name in names:
        if any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
            raise ValueError(f"tools holds {name!r}, which has a control character")
    return names


def _split_line(line: str) -> list[str]:
    items: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in line:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise ValueError(f"tools has a ')' without its '(': {line!r}")
        if ch == "," and depth == 0:
            items.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    if depth:
        raise ValueError(f"tools has a '(' that is not closed: {line!r}")
    items.append("".join(current).strip())
    return [item for item in items if item]  # "Read, Grep," : a trailing comma names nothing
