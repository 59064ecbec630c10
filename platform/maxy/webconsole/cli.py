"""``maxy console``: print a one-time login link to the console of a running ``maxy serve``.

The link opens a session for one API key of ``ACCOUNT_ID``: ``--key-id``, else the newest admin
key without any pin (no scopes, agent, member or task role), else a new admin key (its secret is never shown: the console needs only its
id). The link works once, for five minutes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..console import emit_json, err, friendly, out

if TYPE_CHECKING:
    from ..serving.keys import ApiKey

DEFAULT_URL = "http://127.0.0.1:8765"


def _key_for(data_root: Path, account_id: str, key_id: str | None) -> tuple[ApiKey, bool]:
    """The key to log in with, and whether it was created for this."""
    from ..errors import ValidationError
    from ..serving.keys import create_api_key, list_api_keys

    keys = list_api_keys(data_root, account_id)
    if key_id is not None:
        found = next((k for k in keys if k.key_id == key_id), None)
        if found is None:
            raise ValidationError(
                "--key-id", f"no API key {key_id!r} in account {account_id}: `maxy mcp key list` shows its keys"
            )
        if not found.holds_view:
            raise ValidationError(
                "--key-id",
                f"key {key_id} acts for community member {found.member_id!r} and reaches no memory, so no console "
                "page: leave out --key-id to log in with an admin key",
            )
        return found, False
    unpinned = [k for k in keys if is_operator_key(k)]
    if unpinned:
        return max(unpinned, key=lambda k: k.created_at), False
    _secret, record = create_api_key(data_root, account_id, role="admin")
    return record, True


def is_operator_key(key: ApiKey) -> bool:
    """The console's default key: an admin key with no pin at all (no scopes, agent, member or
    task role), so revoking a member's or a task role's key never ends the operator's session."""
    return (
        key.role == "admin"
        and key.scopes is None
        and key.agent_slug is None
        and key.member_id is None
        and key.task_role is None
    )


def _server_answers(url: str) -> bool:
    import httpx

    try:
        return httpx.get(url.rstrip("/") + "/health/live", timeout=3.0).status_code == 200
    except httpx.HTTPError:
        return False


def _check_url(url: str) -> str:
    from urllib.parse import urlsplit

    from ..errors import ValidationError

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path not in ("", "/"):
        raise ValidationError("--url", f"{url!r} is not the server's base URL: give e.g. {DEFAULT_URL}")
    return f"{parts.scheme}://{parts.netloc}"


# The commands, defined last: their options name the helpers above.
commands = typer.Typer()  # added to the main app by register()


@commands.command("console")
@friendly
def console_cmd(
    url: str = typer.Option(DEFAULT_URL, "--url", help="Where `maxy serve` answers."),
    key_id: str = typer.Option(None, "--key-id", help="Log in with this API key (default: an admin key)."),
    open_browser: bool = typer.Option(False, "--open", help="Also open the link in a browser."),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Print a one-time link (five minutes) that logs into the console of `maxy serve`."""
    from ..accounts import validate_account_id_env
    from ..config import load_settings
    from ..db import Database
    from .login import LOGIN_TTL, mint_login

    base = _check_url(url)
    settings = load_settings()
    account = validate_account_id_env(settings)
    key, created = _key_for(settings.data_root, account.account_id, key_id)
    with Database(settings) as db:  # the link is kept where every replica of `maxy serve` finds it
        token = mint_login(db, key.account_id, key.key_id)
    link = f"{base}/console/login?token={token}"
    answering = _server_answers(base)
    minutes = int(LOGIN_TTL.total_seconds() // 60)
    if json_out:
        emit_json(
            {
                "url": link,
                "keyId": key.key_id,
                "keyCreated": created,
                "serverAnswers": answering,
                "expiresInSeconds": int(LOGIN_TTL.total_seconds()),
            }
        )
    else:
        if created:
            err.print(
                f"created admin key {key.key_id} for the console (`maxy mcp key revoke {key.key_id}` ends its sessions)",
                markup=False,
                highlight=False,
            )
        out.print(link, markup=False, highlight=False, soft_wrap=True)
        err.print(
            f"opens once, within {minutes} minutes, as key {key.key_id} ({key.role})", markup=False, highlight=False
        )
        if not answering:
            err.print(
                f"note: nothing answers at {base}: start the server with `maxy serve` first",
                markup=False,
                highlight=False,
            )
    if open_browser:
        import webbrowser

        webbrowser.open(link)


def register(app: typer.Typer) -> None:
    app.add_typer(commands)
