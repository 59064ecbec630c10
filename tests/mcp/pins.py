"""Shared by the pin tests (task role, member): the CLI in a subprocess with exactly some pins,
its one error line, and the echo plugin's whoami over stdio and over HTTP, with probes that try
to name another value by argument."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import httpx2
from mcp import ClientSession, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.cli_inprocess import maxy
from tests.mcp.inprocess import stdio_inprocess
from tests.plugins_fixture.helpers import CLI, ECHO, REPO, child_env, text

Probes = dict[str, dict[str, Any]]  # a name -> the arguments of one echo-whoami call


def run_cli(data_root: Path, *args: str, **pins: str) -> subprocess.CompletedProcess[str]:
    return maxy(["--quiet", *args], child_env(data_root, **pins))


def one_error(proc: subprocess.CompletedProcess[str], code: int) -> str:
    """The one `error: ...` line a refused command printed, with no traceback and exit ``code``."""
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "Traceback" not in proc.stderr, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert proc.returncode == code, proc.stderr
    return lines[0]


async def _probe(s: ClientSession, probes: Probes) -> dict[str, Any]:
    await s.initialize()
    found: dict[str, Any] = {"who": json.loads(text(await s.call_tool("echo-whoami", {})))}
    for name, arguments in probes.items():
        found[name] = await s.call_tool("echo-whoami", arguments)
    return found


async def stdio_whoami(env: dict[str, str], errlog: Path, probes: Probes) -> dict[str, Any]:
    """``who`` (what a stdio server in ``env`` says it acts as) and each probe's result."""
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", "serve", ECHO], env=env, cwd=str(REPO))
    with errlog.open("w") as err:
        async with stdio_inprocess(params, errlog=err) as (read, write), ClientSession(read, write) as s:
            return await _probe(s, probes)


async def http_whoami(url: str, key: str, probes: Probes) -> dict[str, Any]:
    """The same over streamable HTTP with an API key."""
    async with (
        httpx2.AsyncClient(headers={"x-api-key": key}, timeout=httpx2.Timeout(30, read=60)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as s,
    ):
        return await _probe(s, probes)
