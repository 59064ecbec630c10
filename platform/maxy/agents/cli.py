"""``maxy agent create|list|show|update|delete|context`` and ``maxy agent knowledge build``: the
account's public agents."""

from __future__ import annotations

from typing import Any

import typer

from ..console import emit_json, friendly


def _scopes(value: str | None) -> tuple[str, ...] | None:
    return None if value is None else tuple(s.strip() for s in value.split(",") if s.strip())


def _account() -> tuple[Any, str]:
    from ..accounts import validate_account_id_env
    from ..config import load_settings

    settings = load_settings()
    return settings.data_root, validate_account_id_env(settings).account_id


def _changes(
    name: str | None, live_memory: bool | None, keyword: list[str] | None, no_keywords: bool, scopes: str | None
) -> dict[str, Any]:
    """The config fields an update names (None: left as it is)."""
    from ..errors import ValidationError
    from .store import check_agent_scopes, check_display_name, check_keywords

    if no_keywords and keyword:
        raise ValidationError("--no-keywords", "give --keyword or --no-keywords, not both")
    changes: dict[str, Any] = {}
    if name is not None:
        changes["display_name"] = check_display_name(name)
    if live_memory is not None:
        changes["live_memory"] = live_memory
    if keyword or no_keywords:
        changes["knowledge_keywords"] = check_keywords(tuple(keyword or ()))
    if scopes is not None:
        changes["allowed_scopes"] = check_agent_scopes(_scopes(scopes))
    return changes


def _answer(config: Any, json_out: bool) -> None:
    from ..console import emit_json, out

    if json_out:
        emit_json(config.as_dict())
    else:
        _show(config, out)


def _print_context(context: Any) -> None:
    from ..console import out

    out.print(f"knowledge: {context.knowledge_source or 'none'}", markup=False, highlight=False)
    out.print(f"tools: {' '.join(context.allowed_tools) or 'none'}", markup=False, highlight=False)
    out.print(f"servers: {' '.join(context.mcp_config['mcpServers']) or 'none'}", markup=False, highlight=False)
    if context.screening is not None:
        s = context.screening
        out.print(f"screening: {s.verdict} ({s.action}, by {s.source})", markup=False, highlight=False)
        if s.refusal is not None:
            out.print(f"refusal: {s.refusal}", markup=False, highlight=False)
    if context.memory_context is not None:
        out.print(f"memory context:\n{context.memory_context}", markup=False, highlight=False)
    out.print(
        context.system_prompt or "(no system prompt: IDENTITY.md and SOUL.md are empty)",
        markup=False,
        highlight=False,
    )


def _show(config: Any, out: Any) -> None:
    d = config.as_dict()
    out.print(
        f"{d['slug']}  {d['displayName']}  liveMemory={str(d['liveMemory']).lower()}  "
        f"scopes={','.join(d['allowedScopes'])}  keywords={','.join(d['knowledgeKeywords']) or '-'}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


def _add_context_command(agent_app: typer.Typer) -> None:
    from ..console import emit_json, friendly

    @agent_app.command("context")
    @friendly
    def context_cmd(
        slug: str = typer.Argument(...),
        message: str = typer.Option(
            None, "--message", help="Also screen this inbound message and fetch its memory context."
        ),
        json_out: bool = typer.Option(False, "--json"),
    ) -> None:
        """What the agent is started with: its system prompt, tool allow-list and MCP config."""
        from ..config import load_settings
        from ..errors import ValidationError
        from ..plugins.discovery import discover_plugins
        from .context import assemble_context

        if message is not None and not message.strip():
            raise ValidationError("--message", "a message to fetch memory context for (not empty)")
        data_root, account_id = _account()
        settings = load_settings()
        plugins = discover_plugins(None, [], settings.EXCLUDED_PLUGINS or ())
        context = assemble_context(settings, account_id, slug, plugins, message=message)
        if json_out:
            emit_json(context.as_dict())
        else:
            _print_context(context)


def _add_knowledge_commands(agent_app: typer.Typer) -> None:
    from ..console import emit_json, friendly

    knowledge_app = typer.Typer(no_args_is_help=True, help="An agent's knowledge snapshot (KNOWLEDGE.md).")
    agent_app.add_typer(knowledge_app, name="knowledge")

    @knowledge_app.command("build")
    @friendly
    def build_cmd(
        slug: str = typer.Argument(...),
        limit: int = typer.Option(200, "--limit", help="At most this many nodes (1 to 2000)."),
        force: bool = typer.Option(False, "--force", help="Replace knowledge files written by hand."),
        json_out: bool = typer.Option(False, "--json"),
    ) -> None:
        """Regenerate KNOWLEDGE.md and KNOWLEDGE-SUMMARY.md from the public nodes tagged for the
        agent, broadened by its keyword subscriptions (never an admin-scoped node)."""
        from ..config import load_settings
        from ..console import out
        from ..db import Database
        from .knowledge import build_knowledge, check_limit

        check_limit(limit)
        _, account_id = _account()
        settings = load_settings()
        with Database(settings) as db:
            result = build_knowledge(settings, db, account_id, slug, limit=limit, force=force)
        if json_out:
            emit_json(result.as_dict())
            return
        d = result.as_dict()
        out.print(
            f"{d['slug']}: {d['nodes']} nodes ({d['tagged']} tagged, {d['fromKeywords']} from keywords"
            + (f", {d['leftOut']} left out by the size cap" if d["leftOut"] else "")
            + f"); summary {d['summary']}"
            + (f" ({d['summaryReason']})" if d["summaryReason"] else ""),
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        out.print(f"wrote {d['knowledgeFile']} and {d['summaryFile']}", markup=False, highlight=False, soft_wrap=True)


# The commands, defined last: their options name the helpers above.
commands = typer.Typer()  # added to the main app by register()


agent_app = typer.Typer(no_args_is_help=True, help="The account's public agents: config and texts.")


@agent_app.command("create")
@friendly
def create_cmd(
    slug: str = typer.Argument(..., help="The agent's slug: lower-case letters, digits, '-' or '_'."),
    name: str = typer.Option(None, "--name", help="The display name (default: the slug)."),
    live_memory: bool = typer.Option(False, "--live-memory/--no-live-memory", help="May search the graph mid-turn."),
    keyword: list[str] = typer.Option(None, "--keyword", help="A knowledge subscription (repeatable, at most 5)."),
    scopes: str = typer.Option("public", "--scopes", help="public, or public,shared."),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Create a public agent's directory: config.json, IDENTITY.md and SOUL.md (empty)."""
    from .store import AgentConfig, create_agent

    data_root, account_id = _account()
    config = AgentConfig(slug, name or slug, live_memory, tuple(keyword or ()), _scopes(scopes) or ())
    _answer(create_agent(data_root, account_id, config), json_out)


@agent_app.command("list")
@friendly
def list_cmd(json_out: bool = typer.Option(False, "--json")) -> None:
    """List the account's public agents."""
    from ..console import out
    from .store import list_agents

    agents = list_agents(*_account())
    if json_out:
        emit_json([a.as_dict() for a in agents])
        return
    for agent in agents:
        _show(agent, out)
    if not agents:
        out.print("no agents: `maxy agent create SLUG` makes one", markup=False, highlight=False)


@agent_app.command("show")
@friendly
def show_cmd(slug: str = typer.Argument(...), json_out: bool = typer.Option(False, "--json")) -> None:
    """Show one agent's config."""
    from .store import read_agent

    data_root, account_id = _account()
    _answer(read_agent(data_root, account_id, slug), json_out)


@agent_app.command("update")
@friendly
def update_cmd(
    slug: str = typer.Argument(...),
    name: str = typer.Option(None, "--name", help="A new display name."),
    live_memory: bool = typer.Option(None, "--live-memory/--no-live-memory", help="Change live memory."),
    keyword: list[str] = typer.Option(None, "--keyword", help="Replace the subscriptions (repeatable)."),
    no_keywords: bool = typer.Option(False, "--no-keywords", help="Drop every subscription."),
    scopes: str = typer.Option(None, "--scopes", help="public, or public,shared."),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Change an agent's config (only what is given)."""
    from .store import update_agent

    changes = _changes(name, live_memory, keyword, no_keywords, scopes)
    data_root, account_id = _account()
    _answer(update_agent(data_root, account_id, slug, **changes), json_out)


_add_context_command(agent_app)
_add_knowledge_commands(agent_app)


@agent_app.command("delete")
@friendly
def delete_cmd(
    slug: str = typer.Argument(...),
    yes: bool = typer.Option(False, "--yes", help="Confirm: the directory and its texts are removed."),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Delete an agent's directory (its config and texts; the graph is untouched)."""
    from ..accounts import account_ref, ref_label
    from ..console import err
    from ..errors import ValidationError
    from .store import delete_agent

    if not yes:
        raise ValidationError("--yes", f"deleting agent {slug!r} removes its texts: add --yes to confirm")
    data_root, account_id = _account()
    delete_agent(data_root, account_id, slug)
    ref = account_ref(data_root, account_id)
    if json_out:
        emit_json({"slug": slug, "deleted": True, "account": ref})
    else:
        err.print(f"deleted agent {slug} of {ref_label(ref)}", markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(commands)
    app.add_typer(agent_app, name="agent")
