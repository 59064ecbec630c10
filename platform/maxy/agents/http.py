"""``GET /agents/<slug>/context`` on ``maxy serve``: what a public agent is started with, for the
account of the admin API key that asks (``Authorization: Bearer`` or ``x-api-key``).

A key reads the context of an agent inside its own view only: its pinned agent (or any, when it
pins none) and scopes that cover the agent's (or any, when it pins none). A member's key reaches
only the view it states (``ApiKey.sees_agent``). Any other agent answers exactly as an agent that
does not exist."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from starlette.requests import Request  # at module level: FastAPI reads the route's annotations here

from ..config import Settings
from ..errors import ConfigError, ValidationError
from ..logs import log_line
from ..plugins.discovery import LoadedPlugin
from ..textcheck import check_clean
from .store import no_such_agent, read_agent


def context_in_view(
    settings: Settings, record: Any, slug: str, plugins: Sequence[LoadedPlugin], message: str | None
) -> dict[str, Any]:
    """The agent's context as the key may read it; ValidationError (the absent agent's) when the
    agent lies outside the key's view."""
    from .context import assemble_context

    config = read_agent(settings.data_root, record.account_id, slug)
    if not record.sees_agent(config.slug, config.allowed_scopes):
        log_line("agents", "context-refused", keyId=record.key_id, reason="outside-view")
        raise no_such_agent(slug)
    return assemble_context(settings, record.account_id, slug, plugins, message=message).as_dict()


def mount_agent_routes(app: Any, settings: Settings, store: Any, plugins: Sequence[LoadedPlugin]) -> None:
    from starlette.concurrency import run_in_threadpool

    from ..httpjson import JSONAnswer
    from ..serving.auth import presented_key, unauthorized

    @app.get(
        "/agents/{slug}/context",
        responses={
            400: {"description": "a bad slug or message, or no such agent in the key's view"},
            401: {"description": "no valid API key"},
            403: {"description": "a public key: only admin keys read agents' contexts"},
        },
    )
    async def agent_context(slug: str, request: Request, message: str | None = None) -> Any:
        """The agent's system prompt (identity, soul, knowledge by the staleness guard), its tool
        allow-list, its per-spawn MCP config and, with ``message`` and live memory, the memory
        context memory-search gives that message in the agent's view. The agent must lie inside
        the key's view (its pinned agent and scopes)."""
        key, problem = presented_key(request.headers)
        record = await run_in_threadpool(store.resolve, key) if key else None
        if record is None:
            return unauthorized(problem)
        if record.role != "admin":
            return JSONAnswer({"error": "API key: only an admin key reads an agent's context"}, status_code=403)
        if message is not None and not message.strip():
            return JSONAnswer({"error": "message: a message to fetch memory context for (not empty)"}, status_code=400)
        try:
            check_clean(message, "message")
            return await run_in_threadpool(context_in_view, settings, record, slug, plugins, message)
        except (ValidationError, ConfigError) as err:
            return JSONAnswer({"error": str(err)}, status_code=400)
