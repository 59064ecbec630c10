"""A circuit breaker for a remote embedder: stop calling a server that keeps failing.

After ``failures`` failed calls in a row (an error, a timeout) the breaker opens: for
``cooldown_s`` every ``embed`` raises :class:`EmbeddingError` at once instead of waiting on
the server, so searches answer from BM25 alone and writes store nodes without a vector, as
they do on any embedding failure. After the cool-down one call at a time tries the server
again: a success closes the breaker, a failure opens it for another cool-down. Opening and
closing each log one line (``[embed] breaker-open ...`` / ``[embed] breaker-closed ...``).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from maxy.embeddings.base import EmbeddingError
from maxy.logs import log_line


class CircuitBreaker:
    def __init__(self, name: str, failures: int = 3, cooldown_s: float = 60.0) -> None:
        if failures < 1:
            raise ValueError(f"failures must be >= 1, got {failures}")
        self.name = name
        self.failures = failures
        self.cooldown_s = float(cooldown_s)
        self.last_error: str | None = None
        self._lock = threading.Lock()
        self._in_row = 0
        self._opened_at: float | None = None  # None: closed
        self._trial = False  # a call is testing the server after the cool-down

    def check(self) -> None:
        """Let a call through, or raise EmbeddingError at once while the breaker is open."""
        with self._lock:
            if self._opened_at is None:
                return
            left = self._opened_at + self.cooldown_s - time.monotonic()
            if left <= 0 and not self._trial:
                self._trial = True  # this call tries the server; the others still skip it
                return
            error = self.last_error
        raise EmbeddingError(
            f"{self.name} is paused after {self.failures} failed calls in a row (last: {error}); "
            f"it is tried again in {max(left, 0):.0f}s (EMBED_BREAKER_COOLDOWN_S), meanwhile searches "
            "are BM25-only and writes store without a vector; fix the embedder, then `maxy reindex`"
        )

    def succeeded(self) -> None:
        with self._lock:
            opened_at, self._opened_at = self._opened_at, None
            self._in_row, self._trial, self.last_error = 0, False, None
        if opened_at is not None:
            log_line("embed", "breaker-closed", model=self.name, open_s=round(time.monotonic() - opened_at, 1))

    def failed(self, err: Exception) -> None:
        with self._lock:
            self._in_row += 1
            self.last_error = " ".join(str(err).split())[:200]
            retrial = self._trial
            self._trial = False
            opens = retrial or (self._opened_at is None and self._in_row >= self.failures)
            if opens:
                self._opened_at = time.monotonic()
            in_row = self._in_row
        if opens:
            log_line(
                "embed",
                "breaker-open",
                level=logging.WARNING,
                model=self.name,
                failures=in_row,
                cooldown_s=self.cooldown_s,
                fallback="bm25-only",
                error=self.last_error[:160],
            )

    def state(self) -> dict[str, Any]:
        """``{"breaker": "closed" | "open" | "half-open", "failuresInRow", "lastError", "retryInS"}``."""
        with self._lock:
            if self._opened_at is None:
                status, retry_in = "closed", None
            else:
                left = self._opened_at + self.cooldown_s - time.monotonic()
                status, retry_in = ("open", round(left, 1)) if left > 0 else ("half-open", 0.0)
            return {
                "breaker": status,
                "failuresInRow": self._in_row,
                "lastError": self.last_error,
                "retryInS": retry_in,
            }
