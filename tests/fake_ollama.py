"""A small real HTTP server speaking Ollama's ``/api/embed`` wire protocol, for tests.

    with FakeOllama(dims=768) as fake:
        OllamaEmbedder("nomic-embed-text", fake.url, 768).embed(["hi"])

Modes (set ``fake.mode`` at any time):

* ``normal``      deterministic unit vectors of ``dims`` per text (same text, same vector)
* ``not_found``   404 ``{"error": "model \\"x\\" not found, try pulling it first"}``
* ``slow``        waits ``delay_s`` before answering (to trip the client's timeout)
* ``wrong_dims``  vectors of ``dims + 1``
* ``wrong_count`` one vector fewer than inputs
* ``error500``    500 ``{"error": "..."}``
* ``hang``        accepts the request and answers nothing while the mode stays ``hang`` (a hung
  server); a request held when the mode changes is then answered in the new mode

Only 127.0.0.1, on a port the OS picks; every request is recorded in ``fake.requests``.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .local_http import LocalServer

MODES = ("normal", "not_found", "slow", "wrong_dims", "wrong_count", "error500", "hang")


def fake_vector(text: str, dims: int) -> list[float]:
    """A deterministic unit vector for ``text``."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")
    rng = random.Random(seed)
    vec = [rng.gauss(0.0, 1.0) for _ in range(dims)]
    norm = math.sqrt(sum(x * x for x in vec)) or 1.0
    return [x / norm for x in vec]


class FakeOllama(LocalServer):
    def __init__(self, dims: int = 768, mode: str = "normal", delay_s: float = 2.0) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        self.dims = dims
        self.mode = mode
        self.delay_s = delay_s
        self.requests: list[dict[str, Any]] = []
        self._stop = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------

    def start(self) -> FakeOllama:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                return

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json; charset=utf-8")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def do_GET(self) -> None:
                if self.path in ("/", ""):
                    data = b"Ollama is running"
                    self.send_response(200)
                    self.send_header("Content-Type", "text/plain; charset=utf-8")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                elif self.path == "/api/version":
                    self._send(200, {"version": "0.0.0-fake"})
                else:
                    self._send(404, {"error": "not found"})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if self.path != "/api/embed":
                    self._send(404, {"error": f"unknown path {self.path}"})
                    return
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._send(400, {"error": "invalid JSON"})
                    return
                reply = fake.embed_reply(body)
                if reply is not None:
                    self._send(*reply)

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def embed_reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        """Status and body for an ``/api/embed`` request in the current mode; None when the
        fake is stopped while a ``slow`` or ``hang`` request waits (no answer at all)."""
        self.requests.append(body)
        model = body.get("model", "")
        inputs = body.get("input", [])
        if isinstance(inputs, str):
            inputs = [inputs]
        while self.mode == "hang":
            if self._stop.wait(0.05):
                return None
        mode = self.mode
        if not model:
            return 400, {"error": "model is required"}
        if mode == "not_found":
            return 404, {"error": f'model "{model}" not found, try pulling it first'}
        if mode == "error500":
            return 500, {"error": "llama runner process has terminated: exit status 2"}
        if mode == "slow" and self._stop.wait(self.delay_s):
            return None
        dims = self.dims + 1 if mode == "wrong_dims" else self.dims
        vectors = [fake_vector(text, dims) for text in inputs]
        if mode == "wrong_count":
            vectors = vectors[:-1]
        return (
            200,
            {
                "model": model,
                "embeddings": vectors,
                "total_duration": 1_000_000,
                "load_duration": 10_000,
                "prompt_eval_count": sum(len(t.split()) for t in inputs),
            },
        )
