"""JSON over HTTP on ``maxy serve``: how every JSON route reads its body and writes its answer.

- :func:`read_json_body` is the one way a route reads a JSON body: the media type must be JSON
  (``application/json`` or ``application/*+json``; anything else, or none, is a 415), the body
  is read no further than the route's cap (a larger Content-Length, or a stream that runs past
  it, is a 413 before the rest is read), a client that hangs up mid-body is one ``[http]
  client-disconnected`` line (no traceback), and the JSON is parsed and checked once for NUL
  characters and lone surrogates (``maxy.textcheck``), naming the field, before any route sees it.
- :class:`JSONAnswer` is the JSON response of every route: a string stored with a lone
  surrogate is sent as U+FFFD instead of breaking the answer.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse

from .errors import ValidationError
from .logs import log_line
from .textcheck import check_clean, printable


class BodyRefused(ValidationError):
    """A body that cannot be taken: ``status`` is the HTTP answer (400, 413 or 415)."""

    def __init__(self, status: int, field: str, reason: str):
        self.status = status
        super().__init__(field, reason)


class ClientGone(Exception):
    """The client hung up before its body was over: there is nobody to answer."""


class JSONAnswer(JSONResponse):
    """A JSON response whose strings are always encodable (lone surrogates become U+FFFD)."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except UnicodeEncodeError:
            return super().render(printable(content))


def is_json_media_type(content_type: str | None) -> bool:
    """True for ``application/json`` and ``application/<something>+json``, with any parameters."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    kind, _, sub = media.partition("/")
    return kind == "application" and (sub == "json" or sub.endswith("+json"))


def check_media_type(request: Request) -> None:
    """A 415 (BodyRefused) unless the request says its body is JSON."""
    given = request.headers.get("content-type")
    if not is_json_media_type(given):
        shown = given.split(";", 1)[0].strip()[:80] if given else "none"
        raise BodyRefused(415, "Content-Type", f"{shown} is not JSON: send Content-Type: application/json")


async def read_within(request: Request, limit: int) -> bytes | None:
    """The request's body, read no further than ``limit`` bytes: None when its declared length
    or the stream itself runs past it (the caller answers 413 in its own words). A client that
    hangs up mid-body raises ClientGone, after one ``[http] client-disconnected`` line."""
    declared = (request.headers.get("content-length") or "").strip()
    if declared.isdigit() and int(declared) > limit:
        return None
    chunks, size = [], 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                return None
            chunks.append(chunk)
    except ClientDisconnect:
        raise hung_up(request, read=size, declared=declared) from None
    return b"".join(chunks)


def hung_up(request: Request, **fields: object) -> ClientGone:
    """The one ``[http] client-disconnected`` line for a client that hung up mid-body, and the
    ClientGone to raise (every reader of a body, JSON or form, says it the same way)."""
    log_line("http", "client-disconnected", level=logging.WARNING, path=request.url.path, **fields)
    return ClientGone()


def parse_json(raw: bytes, example: str) -> Any:
    """The body as JSON, checked once for NUL characters and lone surrogates; BodyRefused (400)
    naming the field otherwise. ``example`` shows the body the route takes."""
    try:
        body = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise BodyRefused(400, "body", f"not JSON ({err}): send {example}") from None
    except RecursionError:
        raise BodyRefused(400, "body", f"nested too deeply to be read: send {example}") from None
    try:
        check_clean(body)
    except ValidationError as err:
        field = "body" if err.field == "value" else err.field
        raise BodyRefused(400, field, err.reason) from None
    return body


def json_body(schema: dict[str, Any], example: dict[str, Any]) -> dict[str, Any]:
    """The OpenAPI ``requestBody`` of a route that reads its JSON body itself."""
    return {"required": True, "content": {"application/json": {"schema": schema, "example": example}}}


def gone() -> JSONAnswer:
    """What a route returns when its client hung up: nobody reads it."""
    return JSONAnswer({"error": "body: the client hung up before the body was over"}, status_code=400)


def refusal(err: BodyRefused) -> JSONAnswer:
    return JSONAnswer({"error": str(err)}, status_code=err.status)
