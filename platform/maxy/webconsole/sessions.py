"""Console sessions: ``:ConsoleSession`` nodes in Neo4j, found by the SHA-256 of the cookie, so
every ``maxy serve`` replica sharing the database knows every session.

A node holds the cookie's digest (never the cookie), the account, the key id, the session's CSRF
token and, as epoch milliseconds by the database's clock (one clock for every replica),
``created``, ``seen`` and ``expires`` (the earlier of ``seen`` + 30 minutes and ``created`` +
12 hours). A session ends when it expires, at logout on any replica, when its API key is revoked
(checked on every request) or its account deleted; a restart ends none.

``seen`` is written only when it moved by more than a minute (:data:`TOUCH_MS`), so a request
costs one read (sent to a cluster's leader, like the writes) and the idle clock may run out up to a minute early. Expired sessions are deleted
a bounded batch at a time whenever a session is opened (the ``expires`` index finds them), and
one at a time when presented; no request scans for them."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from ..db import Database
from ..logs import log_line

IDLE_SECONDS = 30 * 60
MAX_AGE_SECONDS = 12 * 60 * 60
COOKIE = "maxy_console"
TOUCH_MS = 60_000  # seen is written again only when it moved by more than this
SWEEP_BATCH = 100  # expired sessions deleted per session opened

OPEN = """
CREATE (s:ConsoleSession {digest: $digest, accountId: $accountId, keyId: $keyId, csrf: $csrf})
WITH s, timestamp() AS now
SET s.created = now, s.seen = now, s.expires = now + $firstLife
RETURN s.created AS created
"""
GET = """
MATCH (s:ConsoleSession {digest: $digest})
RETURN s.accountId AS accountId, s.keyId AS keyId, s.csrf AS csrf, s.created AS created,
       s.seen AS seen, s.expires AS expires, timestamp() AS now
"""
# Written only when stale by more than TOUCH_MS, checked again under the node's lock: two
# replicas touching at once write once, and a session deleted meanwhile stays deleted.
TOUCH = """
MATCH (s:ConsoleSession {digest: $digest})
WITH s, timestamp() AS now
WHERE now - s.seen > $touchMs AND s.expires > now
SET s.seen = now,
    s.expires = CASE WHEN now + $idle < s.created + $maxAge THEN now + $idle ELSE s.created + $maxAge END
RETURN s.seen AS seen
"""
CLOSE = "MATCH (s:ConsoleSession {digest: $digest}) DELETE s RETURN count(*) AS closed"
SWEEP = """
MATCH (s:ConsoleSession) WHERE s.expires < timestamp()
WITH s LIMIT $batch
DELETE s
RETURN count(*) AS removed
"""


@dataclass(frozen=True)
class ConsoleSession:
    account_id: str
    key_id: str
    csrf: str
    created: int  # epoch ms, the database's clock
    seen: int


def _digest(cookie: str) -> str:
    return hashlib.sha256(cookie.encode("utf-8", "replace")).hexdigest()


class ConsoleSessions:
    """The sessions every replica shares; ``idle`` and ``max_age`` in seconds."""

    def __init__(self, db: Database, *, idle: float = IDLE_SECONDS, max_age: float = MAX_AGE_SECONDS):
        self.db = db
        self.idle_ms = int(idle * 1000)
        self.max_age_ms = int(max_age * 1000)

    def open(self, account_id: str, key_id: str) -> tuple[str, ConsoleSession]:
        """A new session; returns the cookie value (shown to nobody else) and the session. Up to
        :data:`SWEEP_BATCH` expired sessions are deleted first."""
        removed = self.db.write(SWEEP, batch=SWEEP_BATCH)[0]["removed"]
        if removed:
            log_line("console", "sessions-expired", removed=removed)
        cookie = secrets.token_urlsafe(32)
        csrf = secrets.token_urlsafe(32)
        rows = self.db.write(
            OPEN,
            digest=_digest(cookie),
            accountId=account_id,
            keyId=key_id,
            csrf=csrf,
            firstLife=min(self.idle_ms, self.max_age_ms),
        )
        created = int(rows[0]["created"])
        return cookie, ConsoleSession(account_id, key_id, csrf, created, created)

    def get(self, cookie: str | None) -> ConsoleSession | None:
        """The live session behind a cookie, else None (an expired one is deleted). Its idle
        clock restarts when ``seen`` is more than a minute old."""
        if not cookie:
            return None
        digest = _digest(cookie)
        # on the leader (routed as a write): a session another replica opened or closed a moment
        # ago is seen at once, where a cluster's follower may lag behind
        rows = self.db.write(GET, digest=digest)
        if not rows:
            return None
        row = rows[0]
        now = int(row["now"])
        if now - int(row["seen"]) > self.idle_ms or now - int(row["created"]) > self.max_age_ms:
            self.db.write(CLOSE, digest=digest)
            return None
        seen = int(row["seen"])
        if now - seen > TOUCH_MS:
            touched = self.db.write(TOUCH, digest=digest, touchMs=TOUCH_MS, idle=self.idle_ms, maxAge=self.max_age_ms)
            seen = int(touched[0]["seen"]) if touched else seen
        return ConsoleSession(str(row["accountId"]), str(row["keyId"]), str(row["csrf"]), int(row["created"]), seen)

    def close(self, cookie: str | None) -> None:
        """End the session behind a cookie, on every replica."""
        if cookie:
            self.db.write(CLOSE, digest=_digest(cookie))
