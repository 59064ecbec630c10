"""``maxy specialists check|tools``: the specialist tool-drift gate before a restart, and the
tools a spawn of one specialist may be given."""

from __future__ import annotations

from typing import Any

import typer

from ..console import emit_json, fail, friendly


def _report(modules: list[str] | None) -> Any:
    """The gate's report over every installed plugin (less EXCLUDED_PLUGINS) and ``--module``s."""
    from ..config import load_settings
    from ..errors import MaxyError, ValidationError
    from ..plugins.discovery import discover_plugins
    from .gate import inspect_specialists

    settings = load_settings()
    try:
        plugins = discover_plugins(None, modules or (), settings.EXCLUDED_PLUGINS or ())
    except MaxyError as err:
        if any(repr(m) in str(err) for m in modules or ()):
            raise ValidationError("--module", str(err)) from None
        raise
    return inspect_specialists(plugins, settings)


def _show(report: Any) -> None:
    from ..console import out

    def say(text: str) -> None:
        out.print(text, markup=False, highlight=False, soft_wrap=True)

    for specialist in report.specialists:
        d = specialist.definition
        say(f"{d.name}  {d.origin}  {d.path}")
        if d.problem:
            say(f"  problem: {d.problem}")
        width = max((len(v.tool) for v in specialist.verdicts), default=0)
        for v in specialist.verdicts:
            owner = f" ({v.plugin})" if v.plugin else ""
            say(f"  {v.tool:{width}}  {v.drift}{owner}")
        for plugin, tools in sorted(specialist.stripped().items()):
            say(f"  stripped ({plugin} is excluded): {', '.join(tools)}")
    if not report.specialists:
        say("no specialists: no plugin ships agents/*.md and the account's specialists/agents/ is empty")
    for defect in report.defects:
        say(f"defect: {defect.detail}")
    say(
        f"{len(report.specialists)} specialist(s) inspected, {report.stripped_specialists} with stripped tools, "
        f"{len(report.defects)} defect(s)"
    )


# The commands, defined last: their options name the helpers above.
commands = typer.Typer()  # added to the main app by register()


specialists_app = typer.Typer(
    no_args_is_help=True, help="Specialists (subagent definitions) and the tools they may use."
)


@specialists_app.command("check")
@friendly
def check_cmd(
    json_out: bool = typer.Option(False, "--json"),
    module: list[str] = typer.Option(None, "--module", help="Also load this plugin module (repeatable)."),
) -> None:
    """Check every specialist's tools as a server start does: each tool's class, the tools
    stripped for EXCLUDED_PLUGINS; exit 1 when a start would be refused."""
    from .gate import drift_error, log_report

    report = _report(module)
    log_report(report)
    if json_out:
        emit_json(report.as_dict())
    else:
        _show(report)
    if not report.ok:
        fail(str(drift_error(report)))


@specialists_app.command("tools")
@friendly
def tools_cmd(
    name: str = typer.Argument(..., help="The specialist's name, as its front matter says."),
    json_out: bool = typer.Option(False, "--json"),
    module: list[str] = typer.Option(None, "--module", help="Also load this plugin module (repeatable)."),
) -> None:
    """The tools a spawn of the specialist may be given, comma-separated: its tools: line
    without the tools of excluded plugins."""
    from ..console import out
    from .gate import spawn_tools

    report = _report(module)
    tools = spawn_tools(report, name)
    if json_out:
        emit_json({"specialist": name, "allowedTools": tools, "stripped": report.find(name).stripped()})
    else:
        out.print(",".join(tools), markup=False, highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.add_typer(commands)
    app.add_typer(specialists_app, name="specialists")
