"""The specialist tool-drift gate: every server start (and ``maxy specialists check``) reads
every specialist definition and classifies each tool it names (``classify``).

A name that refuses (a tool its plugin does not serve, a Maxy namespace nothing serves, a
malformed name), a definition that cannot be read, two specialists of one name, or a link
leading out of its folder stops the start: one line per defect, then exit 1::

    [mcp] boot-failed reason=specialist-tool-drift specialist=<name> tool=<t> drift=<class> path=<file>
    [mcp] boot-failed reason=specialist-symlink-outside specialist=<stem> path=<file> target=<where it leads>

A tool of an excluded plugin passes but is stripped from its specialist, one line per
(specialist, plugin)::

    [mcp] specialist-tool-strip specialist=<name> plugin=<p> tools=<csv> reason=excluded

and a start that passes says so::

    [mcp] startup-self-test specialist-tool-drift=ok inspected=<N> stripped-specialists=<M>

:func:`spawn_tools` is what a spawn of a specialist may pass as its allowed tools: its
``tools:`` line without the stripped names.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Settings
from ..errors import MaxyError, ValidationError
from ..logs import log_line
from ..plugins.discovery import LoadedPlugin
from .catalogue import Catalogue, build_catalogue
from .classify import MALFORMED, UNKNOWN_NAMESPACE, UNKNOWN_TOOL, Verdict, classify
from .definitions import Definition, Folder, account_folder, plugin_folder, read_folder
from .names import parse_mcp_name

DRIFT_REASON = "specialist-tool-drift"
SYMLINK_REASON = "specialist-symlink-outside"


class SpecialistDriftError(MaxyError):
    """A specialist names a tool nothing serves (or cannot be read): the server must not start."""


@dataclass(frozen=True)
class Specialist:
    definition: Definition
    verdicts: tuple[Verdict, ...]

    @property
    def name(self) -> str:
        return self.definition.name

    def stripped(self) -> dict[str, list[str]]:
        """Plugin -> the tools of this specialist taken away because the plugin is excluded."""
        out: dict[str, list[str]] = {}
        for v in self.verdicts:
            if v.stripped and v.plugin is not None:
                out.setdefault(v.plugin, []).append(v.tool)
        return out

    def allowed_tools(self) -> list[str]:
        return [v.tool for v in self.verdicts if not v.stripped]

    def as_dict(self) -> dict[str, Any]:
        d = self.definition
        return {
            "name": d.name,
            "path": str(d.path),
            "origin": d.origin,
            "problem": d.problem,
            "tools": [{"tool": v.tool, "class": v.drift, "plugin": v.plugin} for v in self.verdicts],
            "stripped": self.stripped(),
            "allowedTools": self.allowed_tools() if d.problem is None else [],
        }


@dataclass(frozen=True)
class Defect:
    reason: str  # DRIFT_REASON or SYMLINK_REASON
    specialist: str
    path: Path
    detail: str  # what is wrong and how to fix it
    tool: str | None = None
    drift: str | None = None
    target: Path | None = None

    def log(self) -> None:
        if self.reason == SYMLINK_REASON:
            fields: dict[str, Any] = {"specialist": self.specialist, "path": self.path, "target": self.target}
        else:
            fields = {"specialist": self.specialist, "tool": self.tool, "drift": self.drift, "path": self.path}
            if self.tool is None:
                fields["detail"] = self.detail
        log_line("mcp", "boot-failed", level=logging.ERROR, reason=self.reason, **fields)

    def as_dict(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "specialist": self.specialist,
            "tool": self.tool,
            "drift": self.drift,
            "path": str(self.path),
            "target": str(self.target) if self.target else None,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class DriftReport:
    specialists: tuple[Specialist, ...]
    defects: tuple[Defect, ...]

    @property
    def ok(self) -> bool:
        return not self.defects

    @property
    def stripped_specialists(self) -> int:
        return sum(1 for s in self.specialists if s.stripped())

    def find(self, name: str) -> Specialist:
        found = next((s for s in self.specialists if s.name == name), None)
        if found is None:
            known = ", ".join(sorted({s.name for s in self.specialists})) or "none"
            raise ValidationError("name", f"no specialist is named {name!r} (specialists: {known})")
        return found

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "inspected": len(self.specialists),
            "strippedSpecialists": self.stripped_specialists,
            "specialists": [s.as_dict() for s in self.specialists],
            "defects": [d.as_dict() for d in self.defects],
        }


def folders(catalogue: Catalogue, settings: Settings) -> list[Folder]:
    """Every served plugin's agents folder, by plugin name, then the account's."""
    found = [plugin_folder(p.name, p.folder) for p in catalogue.agent_folders() if p.folder is not None]
    account = account_folder(settings.data_root, settings.ACCOUNT_ID)
    return found + ([account] if account is not None else [])


def inspect_specialists(plugins: Sequence[LoadedPlugin], settings: Settings) -> DriftReport:
    """Read and classify every definition; logs nothing of its verdicts (see :func:`log_report`)."""
    catalogue = build_catalogue(plugins, settings.EXCLUDED_PLUGINS or ())
    specialists: list[Specialist] = []
    defects: list[Defect] = []
    seen: dict[str, Path] = {}
    for folder in folders(catalogue, settings):
        for definition in read_folder(folder):
            verdicts = tuple(classify(tool, catalogue) for tool in definition.tools)
            specialists.append(Specialist(definition, verdicts))
            defects.extend(_defects(definition, verdicts, catalogue))
            if definition.problem is None and definition.name in seen:
                detail = f"{definition.path}: the name {definition.name!r} is also the name of {seen[definition.name]}; a specialist is called by its name: rename one"
                defects.append(Defect(DRIFT_REASON, definition.name, definition.path, detail, drift=MALFORMED))
            seen.setdefault(definition.name, definition.path)
    return DriftReport(tuple(specialists), tuple(defects))


def _defects(definition: Definition, verdicts: Sequence[Verdict], catalogue: Catalogue) -> list[Defect]:
    if definition.target is not None:
        return [
            Defect(SYMLINK_REASON, definition.name, definition.path, definition.problem or "", target=definition.target)
        ]
    if definition.problem is not None:
        return [Defect(DRIFT_REASON, definition.name, definition.path, definition.problem, drift=MALFORMED)]
    return [
        Defect(DRIFT_REASON, definition.name, definition.path, _fix(v, definition, catalogue), v.tool, v.drift)
        for v in verdicts
        if v.refuses
    ]


def _fix(verdict: Verdict, definition: Definition, catalogue: Catalogue) -> str:
    where = f"the tools: line of {definition.path}"
    name = parse_mcp_name(verdict.tool)
    if verdict.drift == UNKNOWN_TOOL and name is not None:
        owner = f"plugin {verdict.plugin!r} serves no tool" if verdict.plugin else "no plugin serves a tool"
        return (
            f"{verdict.tool!r}: {owner} {name.tool!r}; correct it in {where} "
            "(`maxy mcp plugins` lists the tools each plugin serves)"
        )
    if verdict.drift == UNKNOWN_NAMESPACE and verdict.plugin is not None:
        entry = catalogue.plugins[verdict.plugin]
        served = (
            f"plugin {entry.name!r} is served as mcp__plugin_{entry.name}_{entry.server}__<tool> or mcp__{entry.server}__<tool>"
            if entry.active and entry.server
            else f"nothing serves plugin {entry.name!r} here"
        )
        return (
            f"{verdict.tool!r}: {served}; correct it in {where}, install the plugin, "
            f"or add {entry.name} to EXCLUDED_PLUGINS to run without it"
        )
    return f"{verdict.tool!r} is neither a Claude Code tool nor an mcp__<server>__<tool> name; correct it in {where}"


def log_report(report: DriftReport) -> None:
    """The gate's lines: every defect, else every strip and the self-test."""
    for defect in report.defects:
        defect.log()
    if not report.ok:
        return
    for specialist in report.specialists:
        for plugin, tools in sorted(specialist.stripped().items()):
            log_line(
                "mcp",
                "specialist-tool-strip",
                level=logging.WARNING,
                specialist=specialist.name,
                plugin=plugin,
                tools=tools,
                reason="excluded",
            )
    log_line(
        "mcp",
        "startup-self-test",
        specialist_tool_drift="ok",
        inspected=len(report.specialists),
        stripped_specialists=report.stripped_specialists,
    )


def drift_error(report: DriftReport) -> SpecialistDriftError:
    first = report.defects[0]
    more = (
        f" ({len(report.defects)} defects in all; `maxy specialists check` lists them)"
        if len(report.defects) > 1
        else ""
    )
    return SpecialistDriftError(f"specialist {first.specialist!r} cannot start: {first.detail}{more}")


def check_specialists(plugins: Sequence[LoadedPlugin], settings: Settings) -> DriftReport:
    """The gate at a server's start: raises SpecialistDriftError after the boot-failed lines."""
    report = inspect_specialists(plugins, settings)
    log_report(report)
    if not report.ok:
        raise drift_error(report)
    return report


def spawn_tools(report: DriftReport, name: str) -> list[str]:
    """The tools a spawn of specialist ``name`` may be given: its tools: line without the
    tools of excluded plugins. A specialist with a defect has none to give."""
    specialist = report.find(name)
    own = [d for d in report.defects if d.path == specialist.definition.path]
    if own:
        raise SpecialistDriftError(f"specialist {name!r} cannot start: {own[0].detail}")
    tools = specialist.allowed_tools()
    log_line(
        "specialists",
        "spawn-allowlist",
        specialist=name,
        count=len(tools),
        stripped=len(specialist.verdicts) - len(tools),
        sourced_from="agent-frontmatter",
    )
    return tools
