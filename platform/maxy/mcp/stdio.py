"""A JSON-RPC error reply for every request the server cannot decode.

The SDK's stdio reader turns a line it cannot decode (bad JSON, a lone surrogate escape,
valid JSON that is no JSON-RPC message) into an exception on the read stream, and the
server drops it with a debug log: the client waits for its own timeout. ``serve_stdio``
answers each such line on stdout instead (-32700 Parse error or -32600 Invalid Request,
with the request's id when it can be recovered) and keeps serving. ``bad_message`` is the
same verdict for a whole HTTP body.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

import anyio
import pydantic_core
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from ..logs import log_line
from ..textcheck import find_bad, json_kind, printable

RequestId = int | str


@dataclass(frozen=True)
class BadMessage:
    """Why a message cannot be served, as the JSON-RPC error that answers it."""

    request_id: RequestId | None
    code: int
    message: str

    @property
    def reason(self) -> str:
        return {PARSE_ERROR: "parse-error", INVALID_PARAMS: "not-text"}.get(self.code, "invalid-request")

    def reply(self) -> JSONRPCError:
        """The error reply; an id or a message holding a lone surrogate (an id that is no text)
        is sent with U+FFFD in its place, so the reply itself always encodes."""
        return JSONRPCError(
            jsonrpc="2.0",
            id=printable(self.request_id),
            error=ErrorData(code=self.code, message=printable(self.message)),
        )


def _id_of(message: Any) -> RequestId | None:
    found = message.get("id") if isinstance(message, dict) else None
    return found if isinstance(found, str) or (isinstance(found, int) and not isinstance(found, bool)) else None


def recover_id(raw: str | bytes) -> RequestId | None:
    """The top-level ``id`` of a message that does not parse, when it can be told for sure."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    try:
        return _id_of(json.loads(text))  # Python's parser takes lone surrogates, which pydantic-core refuses
    except (ValueError, RecursionError):  # RecursionError: nesting deeper than Python's parser goes
        pass
    try:
        partial = pydantic_core.from_json(text, allow_partial=True)  # a truncated message up to its cut
    except ValueError:
        return None
    found = _id_of(partial)
    # a number at the cut may itself be cut short: keep it only if something follows it
    if isinstance(found, int) and not re.search(rf'"id"\s*:\s*{found}\s*[,}}]', text):
        return None
    return found


def _invalid(value: Any) -> BadMessage:
    return BadMessage(
        _id_of(value),
        INVALID_REQUEST,
        'Invalid Request: expected one JSON-RPC 2.0 object ("jsonrpc": "2.0" with a method, result or error), '
        f"got {json_kind(value)}" + (" that is not one" if isinstance(value, dict) else ""),
    )


def not_text(raw: str | bytes) -> BadMessage | None:
    """The Invalid params error naming the field, when ``raw`` is JSON whose only fault is a
    string that is no text (a lone surrogate escape, which the SDK's parser refuses as a whole)."""
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    params = value.get("params")
    arguments = params.get("arguments") if isinstance(params, dict) else None
    bad = find_bad(arguments) if isinstance(arguments, dict) else find_bad(value)
    if bad is None:
        return None
    return BadMessage(_id_of(value), INVALID_PARAMS, f"Invalid params: {bad[0]}: {bad[1]}")


def bad_message(raw: str | bytes) -> BadMessage | None:
    """None when ``raw`` is one JSON-RPC message the SDK decodes, else the error that answers it."""
    try:
        value = pydantic_core.from_json(raw)  # the SDK's own parser: what it refuses is refused here
    except ValueError as err:
        return not_text(raw) or BadMessage(recover_id(raw), PARSE_ERROR, f"Parse error: {err}")
    try:
        jsonrpc_message_adapter.validate_python(value, by_name=False)
    except ValidationError:
        return not_text(raw) or _invalid(value)
    return None


def _message_of(err: ValidationError) -> Any:
    """The whole decoded message behind a validation error (its errors carry only their own input)."""
    for e in err.errors():
        loc = e.get("loc", ())
        if len(loc) <= 1 or (e.get("type") == "missing" and len(loc) == 2):
            return e.get("input")
    return None


def bad_stream_item(exc: Exception) -> BadMessage | None:
    """The error answering an exception the stdio reader put on the stream; None for a blank line."""
    if isinstance(exc, ValidationError):
        first: Mapping[str, Any] = exc.errors()[0] if exc.error_count() else {}
        if first.get("type") == "json_invalid" and isinstance(first.get("input"), str | bytes):
            raw = first["input"].strip()  # without its line end, a line cut inside a string still yields its id
            return (bad_message(raw) or BadMessage(None, PARSE_ERROR, "Parse error")) if raw else None
        return _invalid(_message_of(exc))
    return BadMessage(None, PARSE_ERROR, f"Parse error: {type(exc).__name__}")


class AnsweringReadStream:
    """The read stream the server sees: undecodable items are answered on ``write_stream`` and
    never reach the server; everything else passes through unchanged."""

    def __init__(self, inner: Any, write_stream: Any, *, transport: str):
        self._inner = inner
        self._write = write_stream
        self._transport = transport

    @property
    def last_context(self) -> Any:
        # the SDK restores each message's sender context from its read stream
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            await self._answer(item)

    async def _answer(self, exc: Exception) -> None:
        bad = bad_stream_item(exc)
        if bad is None:
            return
        log_line(
            "mcp",
            "bad-request",
            level=logging.WARNING,
            transport=self._transport,
            reason=bad.reason,
            id=bad.request_id,
            error=bad.message[:160],
        )
        try:
            await self._write.send(SessionMessage(bad.reply()))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass  # the connection is closing: nobody is left to answer

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> AnsweringReadStream:
        return self

    async def __anext__(self) -> SessionMessage:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


async def serve_stdio(server: MCPServer, stdin: Any = None, stdout: Any = None) -> None:
    """``server.run_stdio_async()``, with every undecodable line answered. ``stdin`` and
    ``stdout`` (async text streams) stand in for the process's own, as in the SDK's
    ``stdio_server``."""
    # MCPServer runs on given streams only through its low-level server (no public accessor)
    lowlevel = server._lowlevel_server
    async with stdio_server(stdin, stdout) as (read_stream, write_stream):
        await lowlevel.run(
            AnsweringReadStream(read_stream, write_stream, transport="stdio"),
            write_stream,
            lowlevel.create_initialization_options(),
        )
