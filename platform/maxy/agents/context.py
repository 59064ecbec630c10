"""What a public agent is started with: its system prompt, its tool allow-list and its per-spawn
MCP configuration, assembled from its folder and config (``maxy agent context``, and
``GET /agents/<slug>/context`` on ``maxy serve``).

- **System prompt**: ``IDENTITY.md``, ``SOUL.md`` and its knowledge, each under its own heading.
  The knowledge is ``KNOWLEDGE-SUMMARY.md`` unless ``KNOWLEDGE.md`` was changed after it (a stale
  summary is never used), else whichever of the two exists.
- **Tools**: the read-only public tools of the plugins it may use, as ``mcp__<server>__<tool>``.
  Without ``liveMemory`` the memory plugin is left out, so the agent has no graph access mid-turn.
- **MCP config**: one stdio entry per plugin exposing a public tool (the memory plugin only with
  ``liveMemory``), pinned to the account, the agent's scopes and slug, and its keywords.
- **Screening** (``message`` given): the inbound gateway's verdict on the message as a public
  sender's (``gateway.screen_message``); its metadata block closes the system prompt. A message
  the gateway discards is answered with its refusal and goes no further.
- **Memory context** (``message`` given and passed, ``liveMemory`` on): what memory-search answers
  it (the gateway's retrieval query when it wrote one) through a fresh, pinned memory server
  (``fetch_memory_context``); None otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Settings
from ..gateway.screen import Screening, screen_message
from ..logs import log_line, short
from ..plugins.discovery import LoadedPlugin
from .store import AgentConfig, agent_dir, read_agent

MEMORY_PLUGIN = "memory"
SECTIONS = (("IDENTITY.md", "Identity"), ("SOUL.md", "Soul"))


@dataclass(frozen=True)
class AgentContext:
    config: AgentConfig
    system_prompt: str
    knowledge_source: str | None  # KNOWLEDGE.md, KNOWLEDGE-SUMMARY.md, or None
    allowed_tools: list[str]
    mcp_config: dict[str, Any]
    memory_context: str | None = None
    screening: Screening | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "agent": self.config.as_dict(),
            "systemPrompt": self.system_prompt,
            "knowledgeSource": self.knowledge_source,
            "allowedTools": self.allowed_tools,
            "mcpConfig": self.mcp_config,
            "memoryContext": self.memory_context,
            "screening": None if self.screening is None else self.screening.as_dict(),
            "refusal": None if self.screening is None else self.screening.refusal,
        }


def _text(path: Path) -> str | None:
    """A regular file's text (a symbolic link is never followed); None when absent."""
    if not path.is_file() or path.is_symlink():
        return None
    return path.read_text(encoding="utf-8", errors="replace").strip()


def knowledge_file(folder: Path) -> Path | None:
    """The staleness guard: the summary, unless KNOWLEDGE.md is newer; else whichever exists."""
    full, summary = folder / "KNOWLEDGE.md", folder / "KNOWLEDGE-SUMMARY.md"
    have_full = full.is_file() and not full.is_symlink()
    have_summary = summary.is_file() and not summary.is_symlink()
    if have_full and have_summary:
        return full if full.stat().st_mtime_ns > summary.stat().st_mtime_ns else summary
    return full if have_full else summary if have_summary else None


def system_prompt(folder: Path) -> tuple[str, str | None]:
    """The assembled prompt and the knowledge file it used."""
    parts = []
    for name, heading in SECTIONS:
        text = _text(folder / name)
        if text:
            parts.append(f"# {heading}\n\n{text}")
    knowledge = knowledge_file(folder)
    text = _text(knowledge) if knowledge is not None else None
    if text:
        parts.append(f"# Knowledge\n\n{text}")
    return "\n\n".join(parts), knowledge.name if knowledge is not None and text else None


def spawn_plugins(plugins: Sequence[LoadedPlugin], config: AgentConfig) -> list[LoadedPlugin]:
    """The plugins an agent's spawn serves: those exposing a public tool, memory only with liveMemory."""
    from ..mcp.server import tools_for_role

    chosen = [p for p in plugins if p.mcp_server is not None and tools_for_role([p], "public")]
    return [p for p in chosen if config.live_memory or p.name != MEMORY_PLUGIN]


def allowed_tools(plugins: Sequence[LoadedPlugin]) -> list[str]:
    from ..mcp.server import tools_for_role

    return sorted(f"mcp__{p.mcp_server}__{t.name}" for p in plugins for t in tools_for_role([p], "public"))


def assemble_context(
    settings: Settings,
    account_id: str,
    slug: str,
    plugins: Sequence[LoadedPlugin],
    *,
    message: str | None = None,
    channel: str = "web",
    command: Sequence[str] | None = None,
) -> AgentContext:
    from ..mcp.clientconfig import build_client_config

    config = read_agent(settings.data_root, account_id, slug)
    prompt, source = system_prompt(agent_dir(settings.data_root, account_id, slug))
    served = spawn_plugins(plugins, config)
    pinned = settings.model_copy(update={"ACCOUNT_ID": account_id})
    mcp = build_client_config(
        served,
        "public",
        settings=pinned,
        agent_slug=slug,
        scopes=config.allowed_scopes,
        command=command,
        per_plugin=True,
    )
    if config.knowledge_keywords:
        for entry in mcp["mcpServers"].values():
            entry["env"]["KNOWLEDGE_KEYWORDS"] = ",".join(config.knowledge_keywords)
    tools = allowed_tools(served)
    screening = screen_message(settings, message, channel=channel, role="public") if message is not None else None
    memory = None
    if screening is not None:
        prompt = f"{prompt}\n\n{screening.metadata_block()}" if prompt else screening.metadata_block()
        if screening.refusal is None:
            memory = memory_context(settings, account_id, config, screening.query or message or "")
    log_line(
        "agents",
        "context",
        accountId=short(account_id),
        slug=slug,
        liveMemory=config.live_memory,
        knowledge=source,
        tools=len(tools),
        memoryContext=None if memory is None else len(memory),
        verdict=None if screening is None else screening.verdict,
    )
    return AgentContext(config, prompt, source, tools, mcp, memory, screening)


def memory_context(settings: Settings, account_id: str, config: AgentConfig, message: str) -> str | None:
    """memory-search for ``message`` with the agent's own pins (None without live memory)."""
    from .bridge import fetch_memory_context

    env = {**os.environ, "DATA_ROOT": str(settings.data_root)}
    return fetch_memory_context(message, account_id=account_id, agent=config, env=env)
