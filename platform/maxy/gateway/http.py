"""``POST /gateway/screen`` on ``maxy serve``: screen one inbound message for the API key that
asks (``Authorization: Bearer`` or ``x-api-key``). The body is ``{"text", "channel", "role"}``;
``role`` defaults to the key's own, and a public key screens public messages only.

The key is checked as ``/mcp`` checks it (``context_for_key``): a key whose account is gone or
whose public pins are broken gets 401. The body is read up to :data:`MAX_BODY_BYTES` and no
further: a larger Content-Length, or a stream that runs past it, gets 413 before the rest is
read."""

from __future__ import annotations

import logging
import threading
from typing import Any

from starlette.requests import Request  # at module level: FastAPI reads the route's annotations here

from ..config import Settings
from ..db import Database
from ..errors import ValidationError
from ..httpjson import (
    BodyRefused,
    ClientGone,
    JSONAnswer,
    check_media_type,
    gone,
    json_body,
    parse_json,
    read_within,
    refusal,
)
from ..logs import log_line
from .screen import MAX_TEXT_CHARS, check_channel, check_role, check_text, screen_message

FIELDS = ("text", "channel", "role")
BODY_SCHEMA = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "the message, as the sender wrote it"},
        "channel": {"type": "string", "default": "web"},
        "role": {"type": "string", "enum": ["public", "admin"], "description": "default: the key's own"},
    },
    "required": ["text"],
    "additionalProperties": False,
}
EXAMPLE = '{"text": "...", "channel": "web"}'
# The longest text JSON-escaped (12 bytes, a surrogate pair of \uXXXX, for one character), and the other fields
MAX_BODY_BYTES = 12 * MAX_TEXT_CHARS + 1024


class BodyTooLarge(ValidationError):
    """A body past MAX_BODY_BYTES (a 413)."""


def check_length(content_length: str | None) -> None:
    """Refuse a declared Content-Length that is not a number or is past MAX_BODY_BYTES."""
    if content_length is None:
        return
    if not content_length.strip().isdigit():
        raise ValidationError("body", "Content-Length is not a number of bytes: send the body's length in bytes")
    if int(content_length) > MAX_BODY_BYTES:
        raise BodyTooLarge(
            "body", f"{int(content_length)} bytes, at most {MAX_BODY_BYTES}: screen one message at a time"
        )


async def read_capped(request: Request) -> bytes:
    """The request's body, read no further than MAX_BODY_BYTES (BodyTooLarge past it)."""
    check_length(request.headers.get("content-length"))
    raw = await read_within(request, MAX_BODY_BYTES)
    if raw is None:
        raise BodyTooLarge("body", f"more than {MAX_BODY_BYTES} bytes: screen one message at a time")
    return raw


def read_body(raw: bytes) -> tuple[str, str, str | None]:
    """(text, channel, role or None) from the request body; ValidationError naming the field otherwise."""
    body = parse_json(raw, EXAMPLE)
    if not isinstance(body, dict):
        raise ValidationError("body", f"not a JSON object: send {EXAMPLE}")
    unknown = sorted(set(body) - set(FIELDS))
    if unknown:
        raise ValidationError(unknown[0], f"not a field of this endpoint; the fields are {', '.join(FIELDS)}")
    role = check_role(body["role"]) if "role" in body else None
    return check_text(body.get("text")), check_channel(body.get("channel", "web")), role


def mount_gateway_routes(app: Any, settings: Settings, store: Any, db: Database, embedder: Any) -> None:
    import importlib

    from starlette.concurrency import run_in_threadpool

    from ..serving.auth import REALM, UsableKeys, presented_key, unauthorized

    if settings.ANTHROPIC_API_KEY:  # the client library takes seconds to import: not on the first message
        threading.Thread(
            target=importlib.import_module, args=("anthropic",), name="anthropic-import", daemon=True
        ).start()
    keys = UsableKeys(settings, db, embedder)

    @app.post(
        "/gateway/screen",
        responses={
            400: {"description": "a body that is not JSON, an unknown field, or a bad text, channel or role"},
            401: {"description": "no valid API key, or one whose account is gone or whose pins are broken"},
            403: {"description": "a public key asking to screen an admin message"},
            413: {"description": f"a body of more than {MAX_BODY_BYTES} bytes"},
            415: {"description": "a body that is not sent as application/json"},
        },
        openapi_extra={"requestBody": json_body(BODY_SCHEMA, {"text": "Do you deliver to Leeds?", "channel": "web"})},
    )
    async def gateway_screen(request: Request) -> Any:
        """Screen and classify one inbound message: verdict (CLEAN, SUSPICIOUS, DISCARD), prompt
        injection flag, intent, language, complexity, the retrieval query (public messages), the
        refusal that replaces the agent's answer (public DISCARD) and the metadata block for the
        agent's system prompt. Body: ``{"text": "...", "channel": "web", "role": "public"}``."""
        key, problem = presented_key(request.headers)
        record = await run_in_threadpool(store.resolve, key) if key else None
        if record is None:
            return unauthorized(problem)
        unusable = await run_in_threadpool(keys.problem, record)
        if unusable is not None:
            shown, logged = unusable
            log_line(
                "mcp-http",
                "auth-failed",
                level=logging.WARNING,
                reason="unusable-key",
                keyId=record.key_id,
                error=logged,
            )
            return JSONAnswer(
                {"error": f"API key: {shown}"},
                status_code=401,
                headers={"WWW-Authenticate": f'Bearer realm="{REALM}", error="invalid_token"'},
            )
        try:
            check_media_type(request)
            text, channel, role = read_body(await read_capped(request))
        except ClientGone:
            return gone()
        except BodyRefused as err:
            return refusal(err)
        except BodyTooLarge as err:
            return JSONAnswer({"error": str(err)}, status_code=413)
        except ValidationError as err:
            return JSONAnswer({"error": str(err)}, status_code=400)
        if record.role == "public" and role not in (None, "public"):
            return JSONAnswer(
                {"error": "role: a public API key screens public messages only: send role public, or omit it"},
                status_code=403,
            )
        screening = await run_in_threadpool(screen_message, settings, text, channel=channel, role=role or record.role)
        return JSONAnswer(screening.as_dict())
