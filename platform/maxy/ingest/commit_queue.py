"""The commit queue of an ingest: transactions run on one background thread, in order, while
the calling thread chunks, summarises and embeds the next documents.

``submit(work, then)`` first waits for what is already queued (and runs each ``then`` with its
result, in submission order, on the calling thread), then queues ``work``. So at most one
transaction is in flight while the caller embeds, and Neo4j's time hides behind the embedder's.
``work=None`` queues only ``then`` (a skipped document keeps its place in the order).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType
from typing import Any

from ..errors import GraphWriteError, ValidationError

Then = Callable[[Any], None]
OnError = Callable[[Exception], None]


def _done(value: Any = None) -> Future[Any]:
    future: Future[Any] = Future()
    future.set_result(value)
    return future


class CommitQueue:
    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ingest-commit")
        self._waiting: list[tuple[Future[Any], Then, OnError | None]] = []

    def submit(self, work: Callable[[], Any] | None, then: Then, on_error: OnError | None = None) -> None:
        """Queue ``work`` after what is queued; ``then(result)`` runs later on this thread.
        A refusal (``ValidationError``, ``GraphWriteError``) goes to ``on_error`` when given;
        any other error, or a refusal without ``on_error``, is raised by a later call."""
        self.drain()
        self._waiting.append((self._pool.submit(work) if work is not None else _done(), then, on_error))

    def drain(self) -> None:
        """Wait for everything queued and run its ``then`` (or ``on_error``), in order."""
        while self._waiting:
            future, then, on_error = self._waiting.pop(0)
            try:
                value = future.result()
            except (ValidationError, GraphWriteError) as err:
                if on_error is None:
                    raise
                on_error(err)
                continue
            then(value)

    def __enter__(self) -> CommitQueue:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        try:
            if kind is None:
                self.drain()
        finally:
            self._waiting.clear()
            self._pool.shutdown(wait=True)
