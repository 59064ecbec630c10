"""``maxy gateway screen``: screen one message as the inbound gateway does."""

from __future__ import annotations

from typing import Any

import typer

from ..console import emit_json, friendly


def _print(screening: Any) -> None:
    from ..console import out

    d = screening.as_dict()
    rows = [
        ("verdict", d["verdict"] + ("  (prompt injection)" if d["promptInjection"] else "")),
        ("action", d["action"]),
        ("intent", d["intent"] or "unknown"),
        ("language", d["language"] or "unknown"),
        ("complexity", d["complexity"] or "unknown"),
        ("query", d["query"] or "-"),
        ("source", d["source"] + (f" ({d['fallthrough']})" if d["fallthrough"] else "")),
        ("patterns", ", ".join(d["localHits"]) or "-"),
        ("latency", f"{d['latencyMs']:.0f} ms"),
    ]
    if d["refusal"]:
        rows.append(("refusal", d["refusal"]))
    for name, value in rows:
        out.print(f"{name:<11}{value}", markup=False, highlight=False)


# The commands, defined last: their options name the helpers above.
commands = typer.Typer()  # added to the main app by register()


gateway_app = typer.Typer(no_args_is_help=True, help="The inbound message gateway.")


@gateway_app.command("screen")
@friendly
def screen_cmd(
    text: str = typer.Argument(..., help="The message, as its sender wrote it."),
    channel: str = typer.Option("web", "--channel", help="web, whatsapp-dm or whatsapp-group."),
    role: str = typer.Option("public", "--role", help="Who sent it: public (a visitor) or admin."),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Screen and classify one inbound message: verdict, prompt injection, intent, language,
    complexity, the retrieval query (public) and the refusal a discarded public message gets."""
    from ..config import load_settings
    from .screen import screen_message

    screening = screen_message(load_settings(), text, channel=channel, role=role)
    if json_out:
        emit_json(screening.as_dict())
    else:
        _print(screening)


def register(app: typer.Typer) -> None:
    app.add_typer(commands)
    app.add_typer(gateway_app, name="gateway")
