"""Local HTTP servers for tests: the lifecycle the fake HTTP APIs share (a ThreadingHTTPServer
on 127.0.0.1 in a thread), Maxy's own ASGI app under uvicorn, and a POST written by hand."""

from __future__ import annotations

import select
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from typing import Any


class LocalServer:
    _server: ThreadingHTTPServer | None
    _thread: threading.Thread | None
    _stop: threading.Event

    @property
    def url(self) -> str:
        assert self._server is not None, f"{type(self).__name__} is not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> Any:  # pragma: no cover - each fake starts its own handler
        raise NotImplementedError

    def stop(self) -> None:
        self._stop.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve_app(app: Any) -> Iterator[str]:
    """An ASGI app under uvicorn on a free loopback port, in a thread; yields its base URL."""
    import time

    import uvicorn

    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, name="uvicorn-test", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def _target(url: str) -> tuple[str, int, str]:
    """(host, port, path) of ``http://host:port/path``."""
    host, port = url.split("//", 1)[1].split("/", 1)[0].split(":")
    return host, int(port), "/" + url.split("//", 1)[1].split("/", 1)[1]


def raw_post(url: str, key: str, head: str, chunks: list[bytes]) -> tuple[int, dict[str, str], bytes]:
    """A POST to ``url`` written by hand, with the API key as ``x-api-key``: ``head`` holds the
    body's framing headers; the chunks are sent one by one until the server answers (it may
    answer before the body is over). Returns (status, headers, body)."""
    host, port, path = _target(url)
    with socket.create_connection((host, port), timeout=30) as sock:
        sock.sendall(
            f"POST {path} HTTP/1.1\r\nHost: {host}\r\nx-api-key: {key}\r\n"
            f"content-type: application/json\r\n{head}Connection: close\r\n\r\n".encode()
        )
        for chunk in chunks:
            if select.select([sock], [], [], 0)[0]:
                break  # answered already: the rest is never read
            try:
                sock.sendall(chunk)
            except OSError:
                break
        select.select([sock], [], [], 30)
        data = b""
        while chunk := sock.recv(1 << 16):
            data += chunk
    header_block, _, body = data.partition(b"\r\n\r\n")
    lines = header_block.decode("latin-1").split("\r\n")
    headers = {n.strip().lower(): v.strip() for n, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def hang_up_mid_body(url: str, key: str, declared: int, part: bytes, caplog: Any) -> list[str]:
    """POST to ``url`` with the key as ``x-api-key``, declaring ``declared`` bytes of JSON body,
    send only ``part`` and close; wait (10 s at most) for the server's ``client-disconnected``
    line and return every log line seen by then. Asserts no traceback reached the log."""
    import time

    host, port, path = _target(url)
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(
            f"POST {path} HTTP/1.1\r\nHost: {host}\r\nx-api-key: {key}\r\n"
            f"content-type: application/json\r\nContent-Length: {declared}\r\n\r\n".encode()
            + part
        )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not any("client-disconnected" in r.getMessage() for r in caplog.records):
        time.sleep(0.05)
    lines = [r.getMessage() for r in caplog.records]
    assert not any(r.exc_info or "Exception in ASGI application" in r.getMessage() for r in caplog.records), lines
    return lines


async def mcp_calls(url: str, key: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Each (tool, arguments) called in order, in one real MCP client session over HTTP with the key."""
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(headers={"x-api-key": key}, timeout=httpx2.Timeout(30, read=120)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return [await session.call_tool(name, arguments) for name, arguments in calls]
