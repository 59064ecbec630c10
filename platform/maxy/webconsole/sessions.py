"""Console sessions: held in the serving process's memory, keyed by the hash of the cookie.

A session ends after 30 idle minutes, 12 hours after login, at logout, when its API key is
revoked (checked on every request) and when the server restarts. Each session has its own CSRF
token, which every form posts back."""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from dataclasses import dataclass, field

IDLE_SECONDS = 30 * 60
MAX_AGE_SECONDS = 12 * 60 * 60
COOKIE = "maxy_console"


@dataclass
class ConsoleSession:
    account_id: str
    key_id: str
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    created: float = field(default_factory=time.monotonic)
    seen: float = field(default_factory=time.monotonic)


def _digest(cookie: str) -> str:
    return hashlib.sha256(cookie.encode("utf-8", "replace")).hexdigest()


class ConsoleSessions:
    def __init__(self, *, idle: float = IDLE_SECONDS, max_age: float = MAX_AGE_SECONDS):
        self.idle = idle
        self.max_age = max_age
        self._sessions: dict[str, ConsoleSession] = {}
        self._lock = threading.Lock()

    def open(self, account_id: str, key_id: str) -> tuple[str, ConsoleSession]:
        """A new session; returns the cookie value (shown to nobody else) and the session."""
        cookie = secrets.token_urlsafe(32)
        session = ConsoleSession(account_id, key_id)
        with self._lock:
            self._expire(time.monotonic())
            self._sessions[_digest(cookie)] = session
        return cookie, session

    def get(self, cookie: str | None) -> ConsoleSession | None:
        """The live session behind a cookie (its idle clock restarted), else None."""
        if not cookie:
            return None
        now = time.monotonic()
        with self._lock:
            digest = _digest(cookie)
            session = self._sessions.get(digest)
            if session is None:
                return None
            if self._stale(session, now):
                del self._sessions[digest]
                return None
            session.seen = now
            return session

    def close(self, cookie: str | None) -> None:
        if cookie:
            with self._lock:
                self._sessions.pop(_digest(cookie), None)

    def _stale(self, session: ConsoleSession, now: float) -> bool:
        return now - session.seen > self.idle or now - session.created > self.max_age

    def _expire(self, now: float) -> None:
        stale = [d for d, s in self._sessions.items() if self._stale(s, now)]
        for digest in stale:
            del self._sessions[digest]
