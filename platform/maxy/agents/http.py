"""``GET /agents/<slug>/context`` on ``maxy serve``: what a public agent is started with, for the
account of the admin API key that asks (``Authorization: Bearer`` or ``x-api-key``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from starlette.requests import Request  # at module level: FastAPI reads the route's annotations here

from ..config import Settings
from ..errors import ConfigError, ValidationError
from ..plugins.discovery import LoadedPlugin


def mount_agent_routes(app: Any, settings: Settings, store: Any, plugins: Sequence[LoadedPlugin]) -> None:
    from starlette.concurrency import run_in_threadpool
    from starlette.responses import JSONResponse

    from ..mcp.http import presented_key, unauthorized
    from .context import assemble_context

    @app.get(
        "/agents/{slug}/context",
        responses={
            400: {"description": "a bad slug or message, or no such agent in the key's account"},
            401: {"description": "no valid API key"},
            403: {"description": "a public key: only admin keys read agents' contexts"},
        },
    )
    async def agent_context(slug: str, request: Request, message: str | None = None) -> Any:
        """The agent's system prompt (identity, soul, knowledge by the staleness guard), its tool
        allow-list, its per-spawn MCP config and, with ``message`` and live memory, the memory
        context memory-search gives that message in the agent's view."""
        key, problem = presented_key(request.headers)
        record = await run_in_threadpool(store.resolve, key) if key else None
        if record is None:
            return unauthorized(problem)
        if record.role != "admin":
            return JSONResponse({"error": "API key: only an admin key reads an agent's context"}, status_code=403)
        if message is not None and not message.strip():
            return JSONResponse(
                {"error": "message: a message to fetch memory context for (not empty)"}, status_code=400
            )
        try:
            context = await run_in_threadpool(
                assemble_context, settings, record.account_id, slug, plugins, message=message
            )
        except (ValidationError, ConfigError) as err:
            return JSONResponse({"error": str(err)}, status_code=400)
        return context.as_dict()
