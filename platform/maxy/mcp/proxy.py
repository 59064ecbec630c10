"""``maxy mcp proxy -- CMD...``: relay an upstream stdio MCP server, flagging its tools eager.

Upstream servers such as PyPI's ``mcp-neo4j-cypher`` have no ``_meta`` channel, so the
proxy rewrites every tools/list response on the wire: each tool entry gets
``_meta["anthropic/alwaysLoad"] = true`` (other ``_meta`` keys are kept) and the line
``[graph-mcp] tools/list eager-flagged count=N`` goes to stderr. Everything else is relayed
byte for byte, one newline-delimited JSON-RPC message per line, in both directions.
Responses are matched to tools/list requests by id.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import IO, Any

from ..errors import ConfigError
from ..logs import log_line
from ..plugins.manifest import EAGER_META_KEY


class _PendingIds:
    def __init__(self) -> None:
        self._ids: set[str] = set()
        self._lock = threading.Lock()

    @staticmethod
    def _key(value: Any) -> str:
        return json.dumps(value, sort_keys=True)

    def add(self, value: Any) -> None:
        with self._lock:
            self._ids.add(self._key(value))

    def pop(self, value: Any) -> bool:
        with self._lock:
            key = self._key(value)
            if key in self._ids:
                self._ids.discard(key)
                return True
            return False


def _messages(payload: Any) -> list[Any]:
    return payload if isinstance(payload, list) else [payload]


def note_requests(line: bytes, pending: _PendingIds) -> None:
    """Remember the ids of tools/list requests going upstream."""
    try:
        payload = json.loads(line)
    except (ValueError, UnicodeDecodeError, RecursionError):  # too deep to parse: relay it as it is
        return
    for msg in _messages(payload):
        if isinstance(msg, dict) and msg.get("method") == "tools/list" and "id" in msg:
            pending.add(msg["id"])


def flag_tools(result: Any) -> int:
    """Set the eager ``_meta`` flag on every tool of a tools/list result; returns how many."""
    tools = result.get("tools") if isinstance(result, dict) else None
    if not isinstance(tools, list):
        return 0
    count = 0
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        meta = tool.get("_meta")
        if not isinstance(meta, dict):
            meta = {}
        meta[EAGER_META_KEY] = True
        tool["_meta"] = meta
        count += 1
    return count


def rewrite_response(line: bytes, pending: _PendingIds) -> bytes:
    """The line to send downstream: tools/list responses get the eager flag, others pass as-is."""
    stripped = line.strip()
    if not stripped.startswith((b"{", b"[")):
        return line
    try:
        payload = json.loads(stripped)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return line
    changed = False
    for msg in _messages(payload):
        if not isinstance(msg, dict) or "id" not in msg or "method" in msg or "result" not in msg:
            continue
        if not pending.pop(msg["id"]):
            continue
        count = flag_tools(msg["result"])
        log_line("graph-mcp", "tools/list", "eager-flagged", count=count)
        changed = True
    if not changed:
        return line
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def run_proxy(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    stdin: IO[bytes] | None = None,
    stdout: IO[bytes] | None = None,
) -> int:
    """Run ``command`` and relay its stdio MCP traffic until either side closes; its exit code."""
    if not command:
        raise ConfigError(
            "maxy mcp proxy needs the upstream command after `--`, e.g. `maxy mcp proxy -- mcp-neo4j-cypher`"
        )
    our_in = stdin if stdin is not None else sys.stdin.buffer
    our_out = stdout if stdout is not None else sys.stdout.buffer
    try:
        child = subprocess.Popen(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,  # the upstream's stderr is ours
            env=dict(env) if env is not None else None,
            bufsize=0,
        )
    except OSError as err:
        raise ConfigError(f"cannot start the upstream MCP server {command[0]!r}: {err}") from None
    log_line("graph-mcp", "proxy", "started", command=os.path.basename(command[0]), pid=child.pid)
    pending = _PendingIds()
    assert child.stdin is not None and child.stdout is not None

    def upstream() -> None:  # our stdin -> child stdin
        try:
            for line in iter(our_in.readline, b""):
                note_requests(line, pending)
                child.stdin.write(line)  # type: ignore[union-attr]
                child.stdin.flush()  # type: ignore[union-attr]
        except (BrokenPipeError, ValueError, OSError):
            pass
        finally:
            try:
                child.stdin.close()  # type: ignore[union-attr]
            except OSError:
                pass

    writer = threading.Thread(target=upstream, name="mcp-proxy-up", daemon=True)
    writer.start()
    try:
        for line in iter(child.stdout.readline, b""):
            our_out.write(rewrite_response(line, pending))
            our_out.flush()
    except (BrokenPipeError, OSError):
        child.terminate()
    code = child.wait()
    log_line("graph-mcp", "proxy", "exited", code=code)
    return code
