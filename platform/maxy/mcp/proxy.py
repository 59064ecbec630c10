"""``maxy mcp proxy -- CMD...``: relay an upstream stdio MCP server, flagging its tools eager
and putting Neo4j's warnings in front of its read results.

Upstream servers such as PyPI's ``mcp-neo4j-cypher`` have no ``_meta`` channel, so the
proxy rewrites every tools/list response on the wire: each tool entry gets
``_meta["anthropic/alwaysLoad"] = true`` (other ``_meta`` keys are kept) and the line
``[graph-mcp] tools/list eager-flagged count=N`` goes to stderr. A successful response to a
tools/call of a read tool (``--read-tool``, default ``read_neo4j_cypher``) waits for the
envelope probe (``envelope.py``), which may add a warnings block in front of its content.
Everything else is relayed byte for byte, one newline-delimited JSON-RPC message per line, in
both directions and in order. Responses are matched to their requests by id.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

from ..errors import ConfigError
from ..logs import log_line
from ..plugins.manifest import EAGER_META_KEY
from .envelope import PARAMS_ARG, PROBE_TIMEOUT_S, QUERY_ARG, READ_TOOL, EnvelopeProbe

TOOLS_LIST = "tools/list"


@dataclass(frozen=True)
class ReadCall:
    """A tools/call of a read tool: what the probe plans again when its response comes back."""

    query: str
    params: dict[str, Any]


class Pending:
    """The requests whose responses the proxy rewrites, by JSON-RPC id (``1`` and ``"1"`` differ)."""

    def __init__(self) -> None:
        self._requests: dict[str, str | ReadCall] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _key(value: Any) -> str:
        return json.dumps(value, sort_keys=True)

    def add(self, value: Any, request: str | ReadCall) -> None:
        with self._lock:
            self._requests[self._key(value)] = request

    def pop(self, value: Any) -> str | ReadCall | None:
        with self._lock:
            return self._requests.pop(self._key(value), None)


def _messages(payload: Any) -> list[Any]:
    return payload if isinstance(payload, list) else [payload]


def read_call(msg: dict[str, Any], read_tools: Collection[str]) -> ReadCall | None:
    """The query and parameters of a tools/call of a read tool; None for any other message."""
    if msg.get("method") != "tools/call" or not isinstance(msg.get("params"), dict):
        return None
    name, arguments = msg["params"].get("name"), msg["params"].get("arguments")
    if name not in read_tools or not isinstance(arguments, dict):
        return None
    query, params = arguments.get(QUERY_ARG), arguments.get(PARAMS_ARG)
    if not isinstance(query, str) or not isinstance(params, dict | None):
        return None  # the upstream refuses it: nothing to probe
    return ReadCall(query, params or {})


def note_requests(line: bytes, pending: Pending, read_tools: Collection[str] = (READ_TOOL,)) -> None:
    """Remember the ids of tools/list requests and read tool calls going upstream."""
    try:
        payload = json.loads(line)
    except (ValueError, UnicodeDecodeError, RecursionError):  # too deep to parse: relay it as it is
        return
    for msg in _messages(payload):
        if not isinstance(msg, dict) or "id" not in msg:
            continue
        if msg.get("method") == TOOLS_LIST:
            pending.add(msg["id"], TOOLS_LIST)
        elif (call := read_call(msg, read_tools)) is not None:
            pending.add(msg["id"], call)


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


def rewrite_response(line: bytes, pending: Pending, probe: EnvelopeProbe | None = None) -> bytes:
    """The line to send downstream: tools/list responses get the eager flag, read results the
    probe's warnings (when it finds any); the rest pass as they are."""
    stripped = line.strip()
    if not stripped.startswith((b"{", b"[")):
        return line
    try:
        payload = json.loads(stripped)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return line
    changed = False
    for msg in _messages(payload):
        if not isinstance(msg, dict) or "id" not in msg or "method" in msg:
            continue
        request = pending.pop(msg["id"])  # an error response settles its request too
        if "result" not in msg:
            continue
        if request == TOOLS_LIST:
            count = flag_tools(msg["result"])
            log_line("graph-mcp", "tools/list", "eager-flagged", count=count)
            changed = True
        elif isinstance(request, ReadCall) and probe is not None:
            changed = probe.annotate(msg["result"], request.query, request.params) or changed
    if not changed:
        return line
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def run_proxy(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    stdin: IO[bytes] | None = None,
    stdout: IO[bytes] | None = None,
    read_tools: Collection[str] = (READ_TOOL,),
    probe_timeout: float = PROBE_TIMEOUT_S,
) -> int:
    """Run ``command`` and relay its stdio MCP traffic until either side closes; its exit code.
    The probe reaches the Neo4j named in ``env`` (default: ours), as the upstream does."""
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
    probe = EnvelopeProbe(env, timeout=probe_timeout)
    pending = Pending()
    assert child.stdin is not None and child.stdout is not None

    def upstream() -> None:  # our stdin -> child stdin
        try:
            for line in iter(our_in.readline, b""):
                note_requests(line, pending, read_tools)
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
            our_out.write(rewrite_response(line, pending, probe))  # a read's response waits for its probe
            our_out.flush()
    except (BrokenPipeError, OSError):
        child.terminate()
    finally:
        probe.close()
    code = child.wait()
    log_line("graph-mcp", "proxy", "exited", code=code)
    return code
