"""MCP servers with Neo4j killed or hung: each tool call answers a clear error in bounded time
(the audit write does not double it), and ``/health`` says what is down (503) or degraded.

The faults come from a TCP proxy in front of the real server (tests/tcp_proxy.py): frozen,
it is a hung server; killed, a dead one. The shared server itself is never touched.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from maxy.config import Settings, load_settings
from maxy.db import SERVER_GRACE_S, Database
from maxy.embeddings import clear_embedder_cache, get_embedder
from maxy.embeddings.base import EmbeddingError
from maxy.plugins.discovery import discover_plugins
from maxy.serving.app import create_app
from mcp import ClientSession, StdioServerParameters

from tests.fake_ollama import FakeOllama
from tests.local_http import serve_app
from tests.mcp.inprocess import stdio_inprocess
from tests.plugins_fixture.helpers import CLI, ECHO, REPO, child_env, text, tool_calls
from tests.tcp_proxy import TcpProxy

QUERY_TIMEOUT_S = 2.0


@pytest.fixture()
def proxy(neo4j_ready: Settings) -> Iterator[TcpProxy]:
    host, port = neo4j_ready.neo4j_host_port
    with TcpProxy(port, host) as p:
        yield p


async def _timed_call(s: ClientSession, tool: str, arguments: dict) -> tuple[float, object]:
    started = time.monotonic()
    result = await s.call_tool(tool, arguments)
    return time.monotonic() - started, result


@pytest.mark.alone  # times its calls against bounds
def test_stdio_tool_calls_fail_in_bounded_time_when_neo4j_hangs_or_dies(
    db: Database, account, data_root: Path, tmp_path: Path, proxy: TcpProxy
) -> None:
    env = child_env(
        data_root, ACCOUNT_ID=account.account_id, NEO4J_URI=proxy.uri, NEO4J_QUERY_TIMEOUT_S=str(QUERY_TIMEOUT_S)
    )
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", "serve", ECHO], env=env, cwd=str(REPO))

    async def work(s: ClientSession) -> dict:
        out = {"up": await _timed_call(s, "echo-search", {"query": "x"})}
        proxy.freeze()
        out["hung"] = await _timed_call(s, "echo-search", {"query": "x"})
        proxy.resume()
        out["back"] = await _timed_call(s, "echo-search", {"query": "x"})
        proxy.kill()
        out["killed"] = await _timed_call(s, "echo-write", {"name": "never stored"})
        return out

    log = tmp_path / "server.log"
    with log.open("w") as errlog:

        async def session() -> dict:
            async with stdio_inprocess(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                return await work(s)

        out = anyio.run(session)
    stderr = log.read_text()

    for key in ("up", "back"):
        waited, result = out[key]
        assert not result.is_error and text(result) == "no results"
    waited, result = out["hung"]
    assert result.is_error and "did not answer" in text(result) and "NEO4J_QUERY_TIMEOUT_S=2" in text(result)
    assert waited < QUERY_TIMEOUT_S + SERVER_GRACE_S + 1.5  # once, not again for the audit write
    waited, result = out["killed"]
    assert result.is_error and "not reachable" in text(result) and "Connection refused" in text(result)
    assert waited < 2.0

    # the calls that reached the database are audited; the two that failed are noted, not waited for
    assert [c["toolName"] for c in tool_calls(db, account.account_id)] == ["echo-search", "echo-search"]
    assert stderr.count("tool-call-not-persisted tool=echo-search reason=database-unavailable") == 1
    assert stderr.count("tool-call-not-persisted tool=echo-write reason=database-unavailable") == 1
    assert "Traceback" not in stderr


@contextmanager
def _app(settings: Settings) -> Iterator[str]:
    with serve_app(create_app(discover_plugins([], [ECHO]), settings)) as base:
        yield base


@pytest.mark.alone  # times its calls against bounds
def test_health_reports_the_database_and_answers_503_when_it_is_down(
    neo4j_ready: Settings, data_root: Path, proxy: TcpProxy
) -> None:
    settings = load_settings(DATA_ROOT=data_root, NEO4J_URI=proxy.uri, NEO4J_QUERY_TIMEOUT_S=QUERY_TIMEOUT_S)
    with _app(settings) as base, httpx2.Client(base_url=base, timeout=30) as http:
        up = http.get("/health")
        assert up.status_code == 200
        body = up.json()
        assert body["ok"] is True and body["status"] == "ok"
        assert body["database"]["reachable"] is True and body["database"]["latencyMs"] > 0
        assert body["embedder"]["name"] and body["embedder"]["breaker"] is None  # in-process model: no breaker
        assert "echo-search" in body["tools"]["admin"]

        proxy.freeze()
        started = time.monotonic()
        hung = http.get("/health")
        assert time.monotonic() - started < 1.0 + SERVER_GRACE_S + 1.0
        assert hung.status_code == 503
        assert hung.json()["status"] == "down" and "did not answer" in hung.json()["database"]["error"]
        live = http.get("/health/live")  # liveness needs no database
        assert live.status_code == 200 and live.json() == {"ok": True}

        proxy.resume()
        assert http.get("/health").status_code == 200

        proxy.kill()
        started = time.monotonic()
        dead = http.get("/health")
        assert time.monotonic() - started < 2.0
        assert dead.status_code == 503 and "Connection refused" in dead.json()["database"]["error"]


def test_health_reports_an_open_embedder_breaker_as_degraded(neo4j_ready: Settings, data_root: Path) -> None:
    with FakeOllama(dims=384, mode="hang") as fake:
        settings = load_settings(
            DATA_ROOT=data_root,
            EMBED_MODEL="all-minilm",
            OLLAMA_URL=fake.url,
            EMBED_TIMEOUT_S=0.3,
            EMBED_BREAKER_FAILURES=1,
        )
        clear_embedder_cache()
        try:
            with _app(settings) as base, httpx2.Client(base_url=base, timeout=30) as http:
                assert http.get("/health").json()["embedder"]["breaker"] == "closed"
                with pytest.raises(EmbeddingError):
                    get_embedder(settings).embed(["a question"])  # the app's embedder: one timeout opens it
                degraded = http.get("/health")
                assert degraded.status_code == 200
                body = degraded.json()
                assert body["status"] == "degraded" and body["database"]["reachable"] is True
                assert body["embedder"]["breaker"] == "open" and "EMBED_TIMEOUT_S" in body["embedder"]["lastError"]
                assert 0 < body["embedder"]["retryInS"] <= 60
        finally:
            clear_embedder_cache()
