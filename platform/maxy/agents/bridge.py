"""fetchMemoryContext: a public agent's memory lookup through a short-lived MCP server.

Each call reads the agent's config (``AgentConfig``): without ``liveMemory`` nothing is spawned
and the answer is None. Otherwise it spawns the memory MCP server over stdio with the agent's
pins baked into its environment (ACCOUNT_ID, ALLOWED_SCOPES from the agent's scopes,
AGENT_SLUG, KNOWLEDGE_KEYWORDS from its subscriptions, SESSION_ID), sends ``initialize`` and
``tools/call memory-search {query, account_id}`` as plain JSON-RPC lines, and returns the result
text. After ``timeout`` seconds (8 by default), or on any failure, it returns None: the agent
proceeds without memory context.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from typing import IO, Any

from ..logs import log_line, short
from .store import AgentConfig

DEFAULT_TIMEOUT_S = 8.0
PROTOCOL_VERSION = "2025-06-18"
_PIN_VARS = ("ACCOUNT_ID", "ALLOWED_SCOPES", "AGENT_SLUG", "KNOWLEDGE_KEYWORDS", "SESSION_ID", "SESSION_NODE_ID")


class _Failed(Exception):
    pass


def memory_server_command(plugin: str = "memory") -> list[str]:
    return [sys.executable, "-m", "maxy", "mcp", "serve", plugin, "--role", "public"]


def bridge_env(
    *,
    account_id: str,
    agent_slug: str,
    allowed_scopes: Sequence[str],
    keywords: Sequence[str] = (),
    session_id: str | None = None,
    base_env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The child's environment: ours (config dir, Neo4j ...) with every pin set explicitly."""
    env = dict(os.environ if base_env is None else base_env)
    for var in _PIN_VARS:  # never inherit a pin from the calling process
        env.pop(var, None)
    env["ACCOUNT_ID"] = account_id
    env["ALLOWED_SCOPES"] = ",".join(allowed_scopes)
    env["AGENT_SLUG"] = agent_slug
    if keywords:
        env["KNOWLEDGE_KEYWORDS"] = ",".join(keywords)
    if session_id:
        env["SESSION_ID"] = session_id
    return env


def fetch_memory_context(
    query: str,
    *,
    account_id: str,
    agent: AgentConfig,
    session_id: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    plugin: str = "memory",
    tool: str = "memory-search",
    command: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    stderr: IO[Any] | int | None = None,
) -> str | None:
    """memory-search over a fresh stdio MCP server pinned by ``agent``'s config; the result text,
    or None without live memory, on timeout or on failure."""
    started = time.monotonic()
    deadline = started + timeout
    if not agent.live_memory:
        log_line("memory-bridge", "fetch", outcome="skipped", agent=agent.slug, reason="live-memory-off")
        return None
    if not isinstance(query, str) or not query.strip():
        log_line("memory-bridge", "fetch", outcome="failed", agent=agent.slug, reason="empty-query")
        return None
    cmd = list(command) if command is not None else memory_server_command(plugin)
    child_env = bridge_env(
        account_id=account_id,
        agent_slug=agent.slug,
        allowed_scopes=agent.allowed_scopes,
        keywords=agent.knowledge_keywords,
        session_id=session_id,
        base_env=env,
    )
    proc: subprocess.Popen[bytes] | None = None
    outcome, reason, text = "failed", "", None
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=child_env)
        lines: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=_read_lines, args=(proc.stdout, lines), daemon=True).start()
        _send(
            proc,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "maxy-memory-bridge", "version": "1"},
                },
            },
        )
        _await_response(proc, lines, 1, deadline)
        _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _send(
            proc,
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {
                    "name": tool,
                    "arguments": {"query": query, "account_id": account_id},
                },
            },
        )
        result = _await_response(proc, lines, 2, deadline)
        if result.get("isError"):
            raise _Failed("tool-error: " + _text(result)[:200])
        text, outcome = _text(result), "ok"
    except TimeoutError:
        outcome, reason = "timeout", f"no answer within {timeout:g}s"
    except _Failed as err:
        reason = str(err)
    except OSError as err:
        reason = f"{type(err).__name__}: {err}"
    finally:
        if proc is not None:
            _stop(proc, graceful=outcome == "ok")
    log_line(
        "memory-bridge",
        "fetch",
        outcome=outcome,
        agent=agent.slug,
        accountId=short(account_id),
        tool=tool,
        chars=len(text) if text is not None else 0,
        ms=round((time.monotonic() - started) * 1000),
        **({"reason": reason} if reason else {}),
        level=logging.INFO if outcome == "ok" else logging.WARNING,
    )
    return text


async def fetch_memory_context_async(query: str, **kwargs: Any) -> str | None:
    """The same, for callers already inside an event loop (the subprocess work runs in a thread)."""
    return await asyncio.to_thread(lambda: fetch_memory_context(query, **kwargs))


def _read_lines(stream: IO[bytes] | None, out: queue.Queue[bytes | None]) -> None:
    try:
        if stream is not None:
            for line in iter(stream.readline, b""):
                out.put(line)
    except (OSError, ValueError):
        pass
    finally:
        out.put(None)


def _send(proc: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    if proc.stdin is None:
        raise _Failed("no stdin")
    try:
        proc.stdin.write(json.dumps(message).encode("utf-8") + b"\n")
        proc.stdin.flush()
    except (BrokenPipeError, OSError) as err:
        raise _Failed(f"server closed its input ({err})") from None


def _await_response(
    proc: subprocess.Popen[bytes], lines: queue.Queue[bytes | None], request_id: int, deadline: float
) -> dict[str, Any]:
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        try:
            line = lines.get(timeout=remaining)
        except queue.Empty:
            raise TimeoutError from None
        if line is None:
            raise _Failed(f"server exited (code {proc.poll()}) before answering")
        try:
            msg = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            continue  # not JSON-RPC: ignore
        if not isinstance(msg, dict):
            continue
        if "method" in msg:
            if "id" in msg:  # a server-to-client request this client does not serve
                _send(proc, {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "not supported"}})
            continue
        if msg.get("id") != request_id:
            continue
        if "error" in msg:
            err = msg["error"] if isinstance(msg["error"], dict) else {}
            raise _Failed(f"json-rpc error {err.get('code')}: {str(err.get('message'))[:200]}")
        result = msg.get("result")
        if not isinstance(result, dict):
            raise _Failed("malformed response")
        return result


def _text(result: dict[str, Any]) -> str:
    blocks = result.get("content") or []
    return "\n".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")


def _stop(proc: subprocess.Popen[bytes], *, graceful: bool) -> None:
    """Close its stdin (a stdio MCP server exits on EOF); a hung or failed one is terminated at once."""
    try:
        if proc.stdin is not None:
            proc.stdin.close()
    except OSError:
        pass
    try:
        proc.wait(timeout=1.0 if graceful else 0.05)
    except subprocess.TimeoutExpired:
        proc.terminate()
        try:
            proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()
