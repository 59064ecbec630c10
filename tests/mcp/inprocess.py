"""``maxy mcp serve`` over stdio, served inside the test process.

A stdio server started as a process costs seconds of imports and a model load before the first
answer; most tests that talk to one are about the tools, the pins and the protocol, not about
the process. :func:`stdio_inprocess` takes the same ``StdioServerParameters`` the SDK's
``stdio_client`` takes and yields the same pair of streams, but the server is the one
``maxy mcp serve`` runs (its arguments parsed by the same command, its settings loaded from
``params.env``, the same ``serve_stdio`` loop), and every message still crosses as one line of
JSON each way. What only a process shows keeps real processes: the stdio transport itself
(``test_mcp_stdio.py``, ``test_mcp_bad_requests.py``, ``test_mcp_acceptance.py``), one process
per generated config (``test_one_server_config.py``), settings read again at each call
(``test_public_hostname.py``) and the proxy's upstream.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TextIO

import anyio
import mcp_types as types
import typer
from maxy.cli import app
from maxy.config import load_settings
from maxy.mcp.active_session import with_active_session
from maxy.mcp.cli import served_plugins
from maxy.mcp.server import stdio_server_for
from maxy.mcp.stdio import serve_stdio
from mcp import StdioServerParameters
from mcp.shared.message import SessionMessage

from tests.cli_inprocess import environment


class _Lines:
    """One direction of a stdio pipe: text written on one side, read line by line on the other."""

    def __init__(self) -> None:
        self._send, self._receive = anyio.create_memory_object_stream[str](64)

    async def write(self, text: str) -> None:
        await self._send.send(text)

    async def flush(self) -> None:
        pass

    def close(self) -> None:
        self._send.close()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        buffer = ""
        async for chunk in self._receive:
            lines = (buffer + chunk).split("\n")
            buffer = lines.pop()
            for line in lines:
                yield line + "\n"


def _parse(line: str) -> SessionMessage | Exception:
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except Exception as exc:  # noqa: BLE001 - handed to the session, as the SDK's client does
        return exc


class _ToFile(logging.Handler):
    def __init__(self, file: TextIO) -> None:
        super().__init__()
        self.file = file
        self.setFormatter(logging.Formatter("%(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.file.write(self.format(record) + "\n")


def _served(params: StdioServerParameters) -> tuple[Any, str, Any, list[str]]:
    """The plugins, role, settings and profiles ``params`` would start ``maxy mcp serve`` with."""
    args = list(params.args)
    at = args.index("serve")
    assert args[at - 1] == "mcp", args
    command = typer.main.get_command(app).commands["mcp"].commands["serve"]  # type: ignore[attr-defined]
    env = dict(os.environ if params.env is None else params.env)
    with environment(env):
        parsed = command.make_context("serve", args[at + 1 :]).params
        role = parsed["role"]
        loaded, profiles = served_plugins(parsed["plugins"], parsed["module"], parsed["profile"])
        settings = with_active_session(load_settings(), role, env)
    return loaded, role, settings, profiles


@asynccontextmanager
async def stdio_inprocess(
    params: StdioServerParameters, errlog: TextIO | None = None
) -> AsyncIterator[tuple[Any, Any]]:
    """``stdio_client(params, errlog)``, the server run in this process: yields (read, write)."""
    to_server, to_client = _Lines(), _Lines()
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def client_reads() -> None:
        async with read_writer:
            async for line in to_client:
                await read_writer.send(_parse(line))

    async def client_writes() -> None:
        async with write_reader:
            async for message in write_reader:
                await to_server.write(message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n")
        to_server.close()

    logger = logging.getLogger("maxy")
    level = logger.level
    env = os.environ if params.env is None else params.env
    logger.setLevel((env.get("LOG_LEVEL") or env.get("MAXY_LOG_LEVEL") or "INFO").upper())  # as a new process's
    handler = _ToFile(errlog) if errlog is not None else None
    if handler:
        logger.addHandler(handler)
    try:
        loaded, role, settings, profiles = _served(params)
        with stdio_server_for(loaded, role, settings, profiles) as server:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(serve_stdio, server, to_server, to_client)
                tasks.start_soon(client_reads)
                tasks.start_soon(client_writes)
                try:
                    yield read_stream, write_stream
                finally:
                    write_stream.close()  # the server reads the end of its input and stops
                    to_client.close()
                    tasks.cancel_scope.deadline = anyio.current_time() + 10
    finally:
        logger.setLevel(level)
        if handler:
            logger.removeHandler(handler)
