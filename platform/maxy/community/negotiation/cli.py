"""``maxy negotiations sweep``: fire the negotiation timers that are due and resume negotiations a
stopped process left mid-step, once (``maxy serve`` does the same in the background)."""

from __future__ import annotations

import typer

from ...console import emit_json, friendly, out

# The commands, defined last: their options name the helpers above.
commands = typer.Typer()  # added to the main app by register()


negotiations_app = typer.Typer(no_args_is_help=True, help="Negotiations between members' agents.")


@negotiations_app.command("sweep")
@friendly
def sweep_cmd(json_out: bool = typer.Option(False, "--json")) -> None:
    """Fire the due timers of the account's negotiations (an expired claim back to the queue, a
    turn unclaimed for 24 hours to the system negotiator, a personal-vs-personal negotiation
    past 24 hours stalled) and finish the negotiations a stopped process left half-done."""
    from ...accounts import validate_account_id_env
    from ...config import load_settings
    from ...db import Database
    from ...embeddings import get_embedder
    from .engine import Negotiations
    from .sweep import sweep

    settings = load_settings()
    account = validate_account_id_env(settings)
    with Database(settings) as db:
        summary = sweep(Negotiations(db, account, settings, embedder=get_embedder(settings)))
    if json_out:
        emit_json(summary)
        return
    for fired in summary["fired"]:
        out.print(f"fired    {fired['kind']:<9}{fired['negotiationId']}", markup=False, highlight=False)
    for resumed in summary["resumed"]:
        out.print(f"resumed  {resumed}", markup=False, highlight=False)
    out.print(
        f"{len(summary['fired'])} timer(s) fired, {len(summary['resumed'])} negotiation(s) resumed, "
        f"{summary['staleTimers']} stale timer(s) cancelled",
        markup=False,
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    app.add_typer(commands)
    app.add_typer(negotiations_app, name="negotiations")
