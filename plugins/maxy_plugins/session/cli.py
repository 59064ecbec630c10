"""``maxy session context [--json]``: the session plugin's command, added through the CLI
hook (``register_commands``) like any plugin's."""

from __future__ import annotations

import typer
from maxy.plugins import cli_context, emit_json, friendly, out

from .tools import render_session_context, session_context, session_context_data


def register_commands(app: typer.Typer) -> None:
    session_app = typer.Typer(no_args_is_help=True, help="Admin session context and compaction briefings.")
    app.add_typer(session_app, name="session")

    @session_app.command("context")
    @friendly
    def context_cmd(
        json_out: bool = typer.Option(False, "--json", help="The parts as JSON instead of the text block."),
    ) -> None:
        """Print the <previous-context> block the next admin turn injects."""
        ctx = cli_context(plugin="session")
        try:
            if json_out:
                data = session_context_data(ctx)
                emit_json({**data, "text": render_session_context(data)})
            else:
                text = session_context(ctx)
                out.print(text or "(no previous context)", highlight=False, markup=False, soft_wrap=True)
        finally:
            ctx.db.close()
