"""The lifecycle the fake HTTP APIs share: a ThreadingHTTPServer on 127.0.0.1 in a thread."""

from __future__ import annotations

import threading
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
