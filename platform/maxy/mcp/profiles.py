"""Tool profiles: which of the installed tools one MCP server lists.

An agent pays for every tool it is shown, so a server lists a small default surface and the
rest is opt-in. A tool is in the profile named after its plugin (``taskstore``, ``community``,
``memory-agent``, ...) and in the profile its manifest gives (``profile: daily``), and ``all``
holds every tool:

- ``daily`` (the default): what an admin agent uses every day: memory search, get, write,
  forget, remove-relation and ingest, reports, conversation search and append, session context
  and compaction;
- ``tasks``: the task store and the work (provenance) tools;
- a plugin's name: all of its tools (``memory`` adds memory-delete and memory-reindex).

A server knows the installed tools it does not list, so an agent calling one hears which
profile to add instead of "unknown tool".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..errors import ValidationError
from ..plugins.discovery import LoadedPlugin, PluginTool

DEFAULT_PROFILE = "daily"
ALL = "all"
DEFAULT_PROFILES: tuple[str, ...] = (DEFAULT_PROFILE,)
COMMUNITY_PROFILE = "community"


def profiles_of(tool: PluginTool) -> tuple[str, ...]:
    """The profiles ``tool`` is in (besides ``all``): its plugin's, then its manifest's."""
    return (tool.plugin,) if tool.profile in (None, tool.plugin) else (tool.plugin, str(tool.profile))


def known_profiles(plugins: Sequence[LoadedPlugin]) -> list[str]:
    """Every profile the installed ``plugins`` define, the default first and ``all`` last."""
    named = {name for p in plugins for t in p.tools for name in profiles_of(t)} | {p.name for p in plugins}
    rest = sorted(named - {DEFAULT_PROFILE})
    return [DEFAULT_PROFILE, *rest, ALL] if DEFAULT_PROFILE in named else [*rest, ALL]


def parse_profiles(values: Iterable[str] | None) -> list[str]:
    """``["daily,tasks", "community"]`` -> ``["daily", "tasks", "community"]`` (order kept, no repeats)."""
    out: list[str] = []
    for value in values or ():
        for name in value.split(","):
            name = name.strip()
            if name and name not in out:
                out.append(name)
    return out


def check_profiles(values: Iterable[str], plugins: Sequence[LoadedPlugin], flag: str = "--profile") -> list[str]:
    """``values`` parsed and checked against the installed plugins: an unknown one is an error
    naming ``flag`` and the profiles there are; none given is the default."""
    names = parse_profiles(values)
    known = known_profiles(plugins)
    for name in names:
        if name not in known:
            raise ValidationError(flag, f"{name!r} is not a tool profile: use one or more of {', '.join(known)}")
    return names or list(DEFAULT_PROFILES)


def in_profiles(tool: PluginTool, profiles: Sequence[str]) -> bool:
    return ALL in profiles or any(name in profiles for name in profiles_of(tool))


def profile_to_add(tool: PluginTool) -> str:
    """The profile that would add ``tool`` to a server: the one its manifest names, else its plugin's."""
    return profiles_of(tool)[-1]


def split_tools(tools: Sequence[PluginTool], profiles: Sequence[str]) -> tuple[list[PluginTool], dict[str, str]]:
    """The tools ``profiles`` serve, and every other one mapped to the profile that would add it."""
    served = [t for t in tools if in_profiles(t, profiles)]
    elsewhere = {t.name: profile_to_add(t) for t in tools if not in_profiles(t, profiles)}
    return served, elsewhere


def not_served(tool: str, profile: str, profiles: Sequence[str]) -> str:
    """The one-line answer to a call of an installed tool this server does not list."""
    wider = ",".join([*profiles, profile])
    return (
        f"{tool}: this server does not serve it (tool profile {', '.join(profiles)}); it is in the "
        f"{profile!r} profile: add it with `maxy mcp config --profile {wider}` (or `maxy serve --profile {wider}`, "
        f"`maxy mcp key create --profile {wider}`) and restart the client"
    )
