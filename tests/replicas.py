"""Several ``maxy serve`` processes as replicas of one deployment: one Neo4j, one DATA_ROOT,
one configuration folder, each process on a free loopback port, as a load balancer would see
them. Used by the replica tests and by ``benchmarks/replicas.py``.

    with Replicas(data_root, tmp_path / "logs") as fleet:   # three by default, /health answered
        spread = RoundRobin(fleet.urls)                     # each new client takes the next one
        fleet.kill(1)                                       # SIGKILL: no shutdown at all
        fleet.problems(0)                                   # tracebacks in replica 0's log

A check that needs the replicas started another way (a setting, a flag such as a stateless
MCP mode) passes ``env`` and ``args``: every replica gets them.
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.plugins_fixture.helpers import child_env

PROBLEM = re.compile(r"Traceback|Exception in ASGI application|\] (error|tool-crash)\b")


def free_ports(count: int) -> list[int]:
    """``count`` distinct free loopback ports (all held open together while they are picked)."""
    held = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            held.append(s)
        return [int(s.getsockname()[1]) for s in held]
    finally:
        for s in held:
            s.close()


@dataclass
class Replica:
    index: int
    port: int
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def mcp(self) -> str:
        return self.url + "/mcp"

    @property
    def alive(self) -> bool:
        return self.process.poll() is None


class Replicas:
    """``count`` ``maxy serve`` processes sharing ``data_root`` and this process's Neo4j settings
    (``MAXY_CONFIG_DIR``, ``NEO4J_URI`` ...); each one's output goes to ``logs/replica-<i>.log``."""

    def __init__(
        self,
        data_root: Path,
        logs: Path,
        count: int = 3,
        *,
        env: Mapping[str, str] | None = None,
        args: Sequence[str] = (),
        timeout_s: float = 180,
    ):
        self.data_root = Path(data_root)
        self.logs = Path(logs)
        self.count = count
        self.env = child_env(self.data_root, **(env or {}))
        self.args = tuple(args)
        self.timeout_s = timeout_s
        self.replicas: list[Replica] = []

    def __enter__(self) -> Replicas:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __getitem__(self, index: int) -> Replica:
        return self.replicas[index]

    @property
    def urls(self) -> list[str]:
        return [r.url for r in self.replicas]

    def start(self) -> None:
        """Start every replica at once, then wait until each answers ``/health`` with 200."""
        self.logs.mkdir(parents=True, exist_ok=True)
        for index, port in enumerate(free_ports(self.count)):
            log = self.logs / f"replica-{index}.log"
            with log.open("wb") as out:
                process = subprocess.Popen(
                    [sys.executable, "-m", "maxy", "serve", "--host", "127.0.0.1", "--port", str(port), *self.args],
                    env=self.env,
                    cwd=str(self.logs),
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # a signal meant for the test run does not reach it
                )
            self.replicas.append(Replica(index, port, process, log))
        deadline = time.monotonic() + self.timeout_s
        for replica in self.replicas:
            self._wait_healthy(replica, deadline)

    def _wait_healthy(self, replica: Replica, deadline: float) -> None:
        while True:
            if not replica.alive:
                tail = replica.log.read_text(errors="replace")[-1500:]
                raise RuntimeError(f"replica {replica.index} exited {replica.process.returncode}:\n{tail}")
            try:
                if httpx2.get(replica.url + "/health", timeout=10).status_code == 200:
                    return
            except httpx2.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"replica {replica.index} did not answer /health within {self.timeout_s:.0f} s")
            time.sleep(0.25)

    def kill(self, index: int) -> None:
        """SIGKILL replica ``index``, as a crashed host or the OOM killer would end it."""
        replica = self.replicas[index]
        replica.process.send_signal(signal.SIGKILL)
        replica.process.wait(timeout=30)

    def stop(self) -> None:
        """Stop every replica still running as its process manager would (SIGTERM, then SIGKILL
        after 30 s)."""
        for replica in self.replicas:
            if replica.alive:
                replica.process.send_signal(signal.SIGTERM)
        for replica in self.replicas:
            try:
                replica.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                replica.process.kill()
                replica.process.wait(timeout=30)

    def problems(self, index: int) -> list[str]:
        """The lines of replica ``index``'s output that show a failure: a traceback, an error line."""
        lines = self.replicas[index].log.read_text(errors="replace").splitlines()
        return [line for line in lines if PROBLEM.search(line)]


class RoundRobin:
    """Spreads work over replicas as a round-robin load balancer does: each ``next()`` is the
    next replica's base URL, passing over the ones marked ``down``."""

    def __init__(self, urls: Sequence[str]):
        self.urls = list(urls)
        self._down: set[str] = set()
        self._turn = 0

    def next(self) -> str:
        for _ in range(len(self.urls)):
            url = self.urls[self._turn % len(self.urls)]
            self._turn += 1
            if url not in self._down:
                return url
        raise RuntimeError("every replica is marked down")

    def down(self, url: str) -> None:
        self._down.add(url)

    def get(self, path: str, **kwargs: Any) -> httpx2.Response:
        """One GET of ``path`` from the next replica."""
        return httpx2.get(self.next() + path, **{"timeout": 30, **kwargs})


@asynccontextmanager
async def mcp_session(url: str, key: str, *, timeout_s: float = 120) -> AsyncIterator[ClientSession]:
    """An initialized MCP session (the SDK's streamable HTTP client, the default stateful mode)
    with the replica at base URL ``url``, authenticated by the API key; no call waits longer
    than ``timeout_s``."""
    async with (
        httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {key}"}, timeout=httpx2.Timeout(60, read=timeout_s)
        ) as http,
        streamable_http_client(url + "/mcp", http_client=http) as (read, write),
        ClientSession(read, write, read_timeout_seconds=timeout_s) as session,
    ):
        await session.initialize()
        yield session


class Alternating(httpx2.AsyncBaseTransport):
    """A load balancer without stickiness: each request goes to the next replica in turn."""

    def __init__(self, bases: list[str]):
        self.ports = [int(base.rsplit(":", 1)[1]) for base in bases]
        self.inner = httpx2.AsyncHTTPTransport()
        self.served: list[tuple[int, str]] = []

    async def handle_async_request(self, request: Any) -> Any:
        port = self.ports[len(self.served) % len(self.ports)]
        request.url = request.url.copy_with(port=port)
        self.served.append((port, request.method))
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()
