"""Each tool name of a specialist, classified against the catalogue (a pure function).

| class | what the name is | boot |
| --- | --- | --- |
| ``native`` | a Claude Code tool | passes |
| ``served`` | a tool a served Maxy plugin registers, in either naming form | passes |
| ``bridge`` | an ``mcp__`` name whose namespace is no Maxy plugin's (a third-party server) | passes |
| ``excluded-plugin`` | a tool of a plugin named in ``EXCLUDED_PLUGINS`` | passes, stripped from the specialist |
| ``unknown-tool-in-plugin`` | a served Maxy plugin's namespace, but no such tool on its server | refused |
| ``unknown-plugin-namespace`` | a Maxy plugin's namespace that nothing serves | refused |
| ``malformed`` | neither a Claude Code tool nor ``mcp__<server>__<tool>`` | refused |
"""

from __future__ import annotations

from dataclasses import dataclass

from .catalogue import COMBINED_SERVER, Catalogue
from .names import is_native, parse_mcp_name

NATIVE = "native"
SERVED = "served"
BRIDGE = "bridge"
EXCLUDED = "excluded-plugin"
UNKNOWN_TOOL = "unknown-tool-in-plugin"
UNKNOWN_NAMESPACE = "unknown-plugin-namespace"
MALFORMED = "malformed"
CLASSES = (NATIVE, SERVED, BRIDGE, EXCLUDED, UNKNOWN_TOOL, UNKNOWN_NAMESPACE, MALFORMED)
DRIFT = frozenset({UNKNOWN_TOOL, UNKNOWN_NAMESPACE, MALFORMED})  # these refuse the start


@dataclass(frozen=True)
class Verdict:
    tool: str
    drift: str  # one of CLASSES
    plugin: str | None = None  # the Maxy plugin the name belongs to, when it names one

    @property
    def refuses(self) -> bool:
        return self.drift in DRIFT

    @property
    def stripped(self) -> bool:
        return self.drift == EXCLUDED


def classify(tool: str, catalogue: Catalogue) -> Verdict:
    if is_native(tool):
        return Verdict(tool, NATIVE)
    name = parse_mcp_name(tool)
    if name is None:
        return Verdict(tool, MALFORMED)
    plugin, server = catalogue.resolve(name.namespace)
    if plugin is None:
        if name.namespace == COMBINED_SERVER:
            return _combined(tool, name.tool, catalogue)
        return Verdict(tool, BRIDGE)
    entry = catalogue.plugins[plugin]
    if entry.excluded:
        return Verdict(tool, EXCLUDED, plugin)
    if not entry.active or entry.server is None or server != entry.server:
        return Verdict(tool, UNKNOWN_NAMESPACE, plugin)
    return Verdict(tool, SERVED if name.tool in entry.tools else UNKNOWN_TOOL, plugin)


def _combined(tool: str, name: str, catalogue: Catalogue) -> Verdict:
    """``mcp__maxy__<tool>``: the one server serving every plugin's tools."""
    owner = catalogue.owner_of(name)
    if owner is None:
        return Verdict(tool, UNKNOWN_TOOL)
    if owner.excluded:
        return Verdict(tool, EXCLUDED, owner.name)
    return Verdict(tool, SERVED if owner.active else UNKNOWN_TOOL, owner.name)
