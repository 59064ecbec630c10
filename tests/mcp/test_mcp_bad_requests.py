"""Requests the server cannot decode get a JSON-RPC error reply, never silence: raw lines to
``maxy mcp serve`` as a real subprocess, raw bodies to the HTTP app under uvicorn."""

from __future__ import annotations

import json
import logging
import queue
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from maxy.serving.keys import create_api_key

from tests.mcp.test_mcp_http import _serving
from tests.plugins_fixture.helpers import CLI, ECHO, REPO, child_env

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602
INIT_PARAMS = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}


class StdioServer:
    """``maxy mcp serve`` over pipes: raw lines in, replies read by a thread, every wait bounded."""

    def __init__(self, proc: subprocess.Popen[bytes]):
        self.proc = proc
        self.replies: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, name="stdio-replies", daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.replies.put(json.loads(line))

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def reply(self, timeout: float = 20.0) -> dict[str, Any]:
        try:
            return self.replies.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"no reply within {timeout}s (server alive: {self.proc.poll() is None})")

    def request(self, line: bytes) -> dict[str, Any]:
        self.send(line)
        return self.reply()


@pytest.fixture()
def stdio_server(account, data_root: Path, tmp_path: Path) -> Iterator[tuple[StdioServer, Path]]:
    log = tmp_path / "server.log"
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [*CLI, "mcp", "serve", ECHO],
            env=child_env(data_root, ACCOUNT_ID=account.account_id),
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
        )
        try:
            yield StdioServer(proc), log
        finally:
            proc.stdin.close()  # type: ignore[union-attr]
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode()


def _error(reply: dict[str, Any], request_id: Any, code: int) -> str:
    assert reply["jsonrpc"] == "2.0" and "result" not in reply, reply
    assert (reply["id"], reply["error"]["code"]) == (request_id, code), reply
    return reply["error"]["message"]


def test_stdio_answers_every_line_it_cannot_decode(stdio_server) -> None:
    server, log = stdio_server
    # before the handshake too: the garbage line must not decide or break the session
    assert _error(server.request(b"hello?"), None, PARSE_ERROR).startswith("Parse error: ")
    init = server.request(_line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS}))
    assert init["id"] == 1 and init["result"]["serverInfo"]["name"] == "maxy-echo"
    server.send(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    # a lone surrogate escape (the six characters \ud800) is no text: refused naming the argument
    surrogate = (
        rb'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo-search",'
        rb'"arguments":{"query":"\ud800"}}}'
    )
    assert _error(server.request(surrogate), 2, INVALID_PARAMS) == (
        "Invalid params: query: holds a lone surrogate (U+D800 to U+DFFF), which is not text: send UTF-8"
    )
    # a truncated line: the id is read up to the cut
    assert "EOF while parsing" in _error(server.request(b'{"jsonrpc":"2.0","id":3,"method":"tools/li'), 3, PARSE_ERROR)
    # an id cut short is not guessed
    _error(server.request(b'{"jsonrpc":"2.0","id":41'), None, PARSE_ERROR)
    # nesting deeper than any parser here goes
    assert "recursion limit" in _error(server.request(b"[" * 100_000), None, PARSE_ERROR)
    # valid JSON that is no JSON-RPC message
    for line in (b"[1, 2, 3]", b'"tools/list"', b"null", b"42"):
        assert _error(server.request(line), None, INVALID_REQUEST).startswith("Invalid Request: ")
    _error(server.request(b'{"jsonrpc":"2.0","id":5,"method":7}'), 5, INVALID_REQUEST)
    _error(server.request(b'{"jsonrpc":"1.0","id":"six","method":"tools/list"}'), "six", INVALID_REQUEST)
    # bytes that are not UTF-8 inside a string are replaced (U+FFFD), and the request is served
    served = server.request(
        b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo-search",'
        b'"arguments":{"query":"\xff\xfe"}}}'
    )
    assert served["id"] == 7 and "result" in served
    # a blank line is no request: nothing answers it, and the next reply is the next request's
    server.send(b"   ")
    tools = server.request(_line({"jsonrpc": "2.0", "id": 8, "method": "tools/list"}))
    assert tools["id"] == 8 and "echo-search" in {t["name"] for t in tools["result"]["tools"]}
    call = server.request(
        _line({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "echo-whoami", "arguments": {}}})
    )
    assert call["id"] == 9 and call["result"]["isError"] is False
    assert server.proc.poll() is None
    with pytest.raises(queue.Empty):
        server.replies.get(timeout=0.3)  # exactly one reply per request

    server.proc.stdin.close()  # type: ignore[union-attr]
    assert server.proc.wait(timeout=15) == 0
    stderr = log.read_text()
    assert stderr.count("[mcp] bad-request transport=stdio reason=parse-error") == 4
    assert stderr.count("[mcp] bad-request transport=stdio reason=invalid-request") == 6
    assert "[mcp] bad-request transport=stdio reason=not-text id=2 " in stderr
    assert "Traceback" not in stderr


# ---------------------------------------------------------------------------------------
BAD_BODIES = {
    "not UTF-8": (b'{"jsonrpc":"2.0","id":1,"method":"ping\xff\xfe"}', PARSE_ERROR, 1),
    "lone surrogate": (rb'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"\ud800"}}', INVALID_PARAMS, 2),
    "truncated": (b'{"jsonrpc":"2.0","id":3,"meth', PARSE_ERROR, 3),
    "empty": (b"", PARSE_ERROR, None),
    "too deep": (
        b'{"jsonrpc":"2.0","id":6,"method":"ping","params":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        PARSE_ERROR,
        None,
    ),
    "array of garbage": (b'[1, "x", null, {"a": []}]', INVALID_REQUEST, None),
    "batch": (json.dumps([{"jsonrpc": "2.0", "id": 4, "method": "ping"}]).encode(), INVALID_REQUEST, None),
    "null": (b"null", INVALID_REQUEST, None),
    "object without method": (b'{"jsonrpc":"2.0","id":5}', INVALID_REQUEST, 5),
}
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def _sse_result(response: Any) -> dict[str, Any]:
    data = [line[5:] for line in response.text.splitlines() if line.startswith("data:") and line[5:].strip()]
    return json.loads(data[-1])


def test_http_answers_every_body_it_cannot_decode(account, data_root: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO")
    key, record = create_api_key(data_root, account.account_id, role="admin")
    with _serving(data_root) as url, httpx2.Client(timeout=30, headers=ACCEPT | {"x-api-key": key}) as http:
        # no session yet (the body would open one), then on a live session, then in the sessionless era
        opened = http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS})
        session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
        assert http.post(
            url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session
        ).is_success
        modern = {"mcp-protocol-version": "2026-07-28"}
        for headers in ({}, session, modern):
            for name, (body, code, request_id) in BAD_BODIES.items():
                response = http.post(url, content=body, headers=headers)
                assert response.status_code == 400, (name, headers, response.text)
                reply = response.json()
                assert reply["jsonrpc"] == "2.0", name
                assert (reply["id"], reply["error"]["code"]) == (request_id, code), (name, headers, reply)
        call = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "echo-whoami", "arguments": {}}}
        served = http.post(url, json=call, headers=session)
        assert served.status_code == 200 and _sse_result(served)["result"]["isError"] is False
    bad = [r.getMessage() for r in caplog.records if "[mcp-http] bad-request" in r.getMessage()]
    assert len(bad) == 3 * len(BAD_BODIES)
    assert all(f"keyId={record.key_id}" in line for line in bad)


def test_an_id_that_is_no_text_still_gets_a_reply(account, data_root: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A message whose id is a lone surrogate (found by the every-route property test): the error
    reply carries U+FFFD in its place instead of failing to encode (a 500 and a traceback)."""
    key, _ = create_api_key(data_root, account.account_id, role="admin")
    body = rb'{"jsonrpc":"2.0","id":"\ud800","method":"tools/call","params":{"name":"x","arguments":{"q":"\udfff"}}}'
    with _serving(data_root) as url, httpx2.Client(timeout=30, headers=ACCEPT | {"x-api-key": key}) as http:
        response = http.post(url, content=body)
    assert response.status_code == 400
    reply = response.json()
    assert (reply["id"], reply["error"]["code"]) == ("\ufffd", INVALID_PARAMS)
    assert reply["error"]["message"].startswith("Invalid params: q: holds a lone surrogate")
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
