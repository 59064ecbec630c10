"""A TCP proxy in front of the real Neo4j, for network faults without touching the server.

    with TcpProxy(7687) as proxy:            # bolt://127.0.0.1:{proxy.port} reaches the real server
        proxy.freeze()                       # a hung server: connections stay open, nothing answers
        proxy.resume()
        proxy.kill()                         # a killed server: every connection reset, the port closed

A frozen proxy still accepts new connections (as a stopped process's listening socket does)
and sends nothing on them; bytes sent meanwhile are held and delivered on ``resume``.
"""

from __future__ import annotations

import selectors
import socket
import struct
import threading
from typing import Any


class TcpProxy:
    def __init__(self, target_port: int, target_host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self.port: int = self._listener.getsockname()[1]
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._running = threading.Event()
        self._running.set()
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._serve, name="tcp-proxy", daemon=True)

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.port}"

    def start(self) -> TcpProxy:
        self._thread.start()
        return self

    def freeze(self) -> None:
        self._running.clear()

    def resume(self) -> None:
        self._running.set()

    def kill(self) -> None:
        """Reset every connection (SO_LINGER 0) and close the port: connecting is refused from now on."""
        self._stopped.set()
        self._running.set()
        self._thread.join(timeout=5)
        with self._lock:
            for pair in self._pairs:
                for sock in pair:
                    _reset(sock)
            self._pairs.clear()
        self._listener.close()

    def __enter__(self) -> TcpProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        if not self._stopped.is_set():
            self.kill()

    def _serve(self) -> None:
        selector = selectors.DefaultSelector()
        selector.register(self._listener, selectors.EVENT_READ, None)
        while not self._stopped.is_set():
            if not self._running.is_set():
                # frozen: accept (the kernel would queue them anyway) but forward nothing
                self._running.wait(0.05)
                continue
            for key, _ in selector.select(timeout=0.05):
                if key.data is None:
                    self._accept(selector)
                elif not self._forward(key.fileobj, key.data):  # type: ignore[arg-type]
                    self._close(selector, key.fileobj, key.data)  # type: ignore[arg-type]
        selector.close()

    def _accept(self, selector: selectors.BaseSelector) -> None:
        client, _ = self._listener.accept()
        try:
            upstream = socket.create_connection(self.target, timeout=5)
        except OSError:
            _reset(client)
            return
        with self._lock:
            self._pairs.append((client, upstream))
        selector.register(client, selectors.EVENT_READ, upstream)
        selector.register(upstream, selectors.EVENT_READ, client)

    def _forward(self, source: socket.socket, sink: Any) -> bool:
        try:
            data = source.recv(65536)
            if not data:
                return False
            sink.sendall(data)
        except OSError:
            return False
        return True

    def _close(self, selector: selectors.BaseSelector, a: socket.socket, b: socket.socket) -> None:
        for sock in (a, b):
            try:
                selector.unregister(sock)
            except (KeyError, ValueError):
                pass
            sock.close()
        with self._lock:
            self._pairs = [p for p in self._pairs if a not in p]


def _reset(sock: socket.socket) -> None:
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    sock.close()
