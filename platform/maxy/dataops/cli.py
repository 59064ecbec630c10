"""``maxy account delete``, ``maxy export``, ``maxy import``, ``maxy backup``, ``maxy restore``
(added to the main app by ``register``; ``maxy.cli`` is imported inside the commands, see
``maxy.ingest.cli``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer


def _account_group(app: typer.Typer) -> typer.Typer:
    for group in app.registered_groups:
        if group.name == "account" and group.typer_instance is not None:
            return group.typer_instance
    raise RuntimeError("the core `account` command group is missing")


def _unpinned(settings: Any, what: str) -> None:
    from ..errors import ConfigError

    if settings.ALLOWED_SCOPES or settings.AGENT_SLUG:
        raise ConfigError(
            f"{what} works on a whole account: unset ALLOWED_SCOPES and AGENT_SLUG (this process is pinned to a view)"
        )


def _live_account(data_root: Path, account: str) -> str:
    """A live account's canonical id, by name or id; a one-line refusal for a deleted or unknown one."""
    from ..accounts import account_option
    from ..errors import AccountError

    account_id = _deleted_id(data_root, account)
    if account_id is not None:
        raise AccountError("deleted", f"account {account_id} is deleted: there is nothing left to export")
    return account_option(data_root, account).account_id


def _deleted_id(data_root: Path, value: str) -> str | None:
    """The id ``value`` spells when it is a deleted account's (and no live one's), else None."""
    from . import account_files

    try:
        account_id = account_files.canonical_id(value)
    except ValueError:
        return None
    live = (account_files.live_folder(data_root, account_id) / account_files.ACCOUNT_FILE).is_file()
    return account_id if not live and account_files.deleted_at(data_root, account_id) is not None else None


def account_delete(
    account: str = typer.Argument(
        ..., metavar="NAME_OR_ID", help="The account's name or id (`maxy account list`); a deleted one by its id."
    ),
    purge_now: bool = typer.Option(False, "--purge", help="Hard-delete at once instead of after the grace period."),
    yes: bool = typer.Option(False, "--yes", help="Confirm --purge."),
    force: bool = typer.Option(False, "--force", help="Delete even the active account (ACCOUNT_ID)."),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Delete an account: hidden at once, its graph and files purged after the grace period."""
    from ..accounts import account_option, account_ref, ref_label
    from ..config import load_settings
    from ..console import emit_json, out
    from ..db import Database
    from . import account_files
    from .deletion import delete_account

    settings = load_settings()
    _unpinned(settings, "maxy account delete")
    # a live account by name or id; a deleted one (to delete again, or purge now) by its id
    account_id = (
        _deleted_id(settings.data_root, account) or account_option(settings.data_root, account, "NAME_OR_ID").account_id
    )
    ref = account_ref(settings.data_root, account_id)  # read before its folder moves aside
    ref["name"] = ref["name"] or account_files.deleted_name(settings.data_root, account_id)
    where = ref_label(ref)
    with Database(settings) as db:
        result = delete_account(
            db,
            settings.data_root,
            account_id,
            active_account_id=settings.ACCOUNT_ID,
            force=force,
            purge_now=purge_now,
            confirmed=yes,
        )
    if json_out:
        emit_json(dict(result.as_dict(), account=ref))
    elif result.purged:
        out.print(f"deleted {where}: {result.purgedNodes} node(s) purged", highlight=False)
    elif result.alreadyDeleted:
        out.print(
            f"{where} was already deleted at {result.deletedAt}; `maxy account purge` removes it "
            "after the grace period (or --purge --yes now)",
            markup=False,
            highlight=False,
        )
    else:
        out.print(
            f"deleted {where}: {result.stamped} node(s) hidden; `maxy account purge` removes them after the grace period",
            markup=False,
            highlight=False,
        )


def account_purge(
    grace_days: float = typer.Option(7, "--grace-days", min=0, help="Keep deleted accounts this many days."),
    dry_run: bool = typer.Option(False, "--dry-run", help="List the accounts that would go; delete nothing."),
    yes: bool = typer.Option(False, "--yes", help="Confirm --grace-days 0 (every deleted account, at once)."),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Hard-delete the graph and files of accounts deleted longer ago than the grace period."""
    from ..accounts import ref_label
    from ..config import load_settings
    from ..console import emit_json, out
    from ..db import Database
    from ..errors import ValidationError
    from . import account_files
    from .deletion import purge_deleted_accounts

    if grace_days == 0 and not (yes or dry_run):
        raise ValidationError("--grace-days", "0 purges every deleted account at once: add --yes (or --dry-run)")
    settings = load_settings()
    # the names, read before the purge removes the folders that hold them
    names = {
        a: account_files.deleted_name(settings.data_root, a) for a in account_files.deleted_accounts(settings.data_root)
    }
    with Database(settings) as db:
        done = purge_deleted_accounts(db, settings.data_root, grace_days, dry_run=dry_run)
    refs = [{"id": a, "name": names.get(a, "")} for a in done]
    verb = "would purge" if dry_run else "purged"
    if json_out:
        emit_json({"graceDays": grace_days, "dryRun": dry_run, "purged": done, "accounts": refs})
    elif not done:
        out.print(f"no deleted account is past its grace period ({grace_days:g} days)", highlight=False)
    else:
        for ref in refs:
            out.print(f"{verb} {ref_label(ref)}: {done[ref['id']]} node(s)", markup=False, highlight=False)


def export_cmd(
    account: str | None = typer.Option(None, "--account", help="The account to export (default: ACCOUNT_ID)."),
    with_vectors: bool = typer.Option(False, "--with-vectors", help="Include each node's embedding."),
) -> None:
    """Write one account (record, nodes, relationships) as JSON Lines to stdout."""
    from ..accounts import validate_account
    from ..config import load_settings
    from ..db import Database
    from .export import export_account

    settings = load_settings()
    _unpinned(settings, "maxy export")
    if account is None:
        account_id = validate_account(settings.data_root, settings.ACCOUNT_ID).account_id
    else:
        account_id = _live_account(settings.data_root, account)
    with Database(settings) as db:
        export_account(db, settings.data_root, account_id, sys.stdout, with_vectors=with_vectors)


def import_cmd(
    file: Path = typer.Argument(..., help="A file written by `maxy export`."),
    replace: bool = typer.Option(False, "--replace", help="Overwrite the account's nodes if it has any."),
    reembed: bool = typer.Option(False, "--reembed", help="Ignore the file's vectors and embed again."),
    no_embed: bool = typer.Option(False, "--no-embed", help="Leave missing vectors for `maxy reindex`."),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Import an account from `maxy export` output into its (new, deleted or empty) account id."""
    from ..accounts import account_ref, ref_label, same_name
    from ..config import load_settings
    from ..console import emit_json, err, out
    from ..db import Database
    from .importing import check_file, import_account

    settings = load_settings()
    _unpinned(settings, "maxy import")
    plan = check_file(file)  # bad input is refused before the embedder loads
    embedder = None
    if not no_embed and (reembed or not plan.vectors):
        from ..embeddings import get_embedder
        from ..errors import ConfigError

        try:
            embedder = get_embedder(settings)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    with Database(settings) as db:
        result = import_account(
            db, settings.data_root, file, replace=replace, reembed=reembed, embedder=embedder, plan=plan
        )
    ref = account_ref(settings.data_root, result.accountId)
    namesakes = [a.account_id for a in same_name(settings.data_root, ref["name"]) if a.account_id != result.accountId]
    if ref["name"] and namesakes:
        err.print(
            f"warning: another account is named {ref['name']!r} ({', '.join(namesakes)}): "
            "pick these accounts by id, or rename one in its account.json",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    if json_out:
        emit_json(dict(result.as_dict(), account=ref))
    else:
        out.print(
            f"imported {ref_label(ref)}: {result.nodes} node(s), {result.relationships} "
            f"relationship(s); vectors {result.vectors}",
            markup=False,
            highlight=False,
        )


def backup_cmd(
    out_dir: Path | None = typer.Option(None, "--out", help="Folder for the dump (default: <config dir>/backups)."),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Dump the managed Neo4j's database (the server is stopped and started around it)."""
    from ..config import load_settings
    from ..console import emit_json, out
    from .backup import backup

    info = backup(load_settings(), out_dir)
    if json_out:
        emit_json(info)
    else:
        out.print(f"backup written: {info['file']} ({info['bytes']} bytes)", highlight=False)


def restore_cmd(
    file: Path = typer.Argument(..., help="A .dump file written by `maxy backup`."),
    yes: bool = typer.Option(False, "--yes", help="Confirm: the database is replaced by the file's."),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Replace the managed Neo4j's database with a backup (stopped, loaded, started, counted)."""
    from ..config import load_settings
    from ..console import emit_json, out
    from ..errors import ValidationError
    from .backup import restore

    if not yes:
        raise ValidationError("--yes", "restore replaces every account's graph with the backup's: add --yes")
    info = restore(load_settings(), file)
    if json_out:
        emit_json(info)
    else:
        counts = info["counts"]
        out.print(
            f"restored {info['file']}: {counts['nodes']} node(s), {counts['relationships']} relationship(s)",
            highlight=False,
        )


def register(app: typer.Typer) -> None:
    from ..console import friendly

    accounts = _account_group(app)
    accounts.command("delete")(friendly(account_delete))
    accounts.command("purge")(friendly(account_purge))
    app.command("export")(friendly(export_cmd))
    app.command("import")(friendly(import_cmd))
    app.command("backup")(friendly(backup_cmd))
    app.command("restore")(friendly(restore_cmd))
