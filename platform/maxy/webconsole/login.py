"""One-time login links: ``maxy console`` mints a token bound to an admin API key, the console
exchanges it once for a session.

A link is a ``:ConsoleLogin`` node in Neo4j, so any ``maxy serve`` replica sharing the database
can take it: the token's SHA-256 (never the token), the key id and account it opens, and
``created`` / ``expires`` as epoch milliseconds by the database's clock. It is consumed by one
statement that first locks the node, then marks it used only if nobody has: of two replicas
posting the same token at once, exactly one opens a session. Used and expired links are deleted
a bounded batch at a time whenever a link is minted."""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from ..db import Database
from ..logs import log_line, short

LOGIN_TTL = timedelta(minutes=5)
SWEEP_BATCH = 100  # used or expired links deleted per link minted
SWEEP_GRACE_MS = 60_000  # kept this long past use or expiry, so no consumer waits on a deleted node
_TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{32,64}$")

MINT = """
CREATE (l:ConsoleLogin {digest: $digest, accountId: $accountId, keyId: $keyId})
WITH l, timestamp() AS now
SET l.created = now, l.expires = now + $ttl
RETURN l.expires AS expires
"""
# The first SET takes the node's write lock; what follows reads the node as the lock holder, so
# a second consumer waits, then finds usedAt set (a filter before the lock would let both pass).
CONSUME = """
MATCH (l:ConsoleLogin {digest: $digest})
SET l.attempts = coalesce(l.attempts, 0) + 1
WITH l, timestamp() AS now
WHERE l.usedAt IS NULL AND l.expires > now
SET l.usedAt = now
RETURN l.accountId AS accountId, l.keyId AS keyId
"""
SWEEP = """
MATCH (l:ConsoleLogin) WHERE l.expires < timestamp() - $grace
WITH l LIMIT $batch
DELETE l
RETURN count(*) AS removed
"""


@dataclass(frozen=True)
class Login:
    """What a used login token opens: one API key of one account."""

    account_id: str
    key_id: str


def token_shape(token: str | None) -> bool:
    """Whether a text has the shape of a login token (checked before the database is asked)."""
    return bool(token) and bool(_TOKEN_RE.match(token or ""))


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def mint_login(db: Database, account_id: str, key_id: str, *, ttl: timedelta = LOGIN_TTL) -> str:
    """A fresh one-time token opening ``key_id`` for ``ttl``; only its hash is kept."""
    db.write(SWEEP, grace=SWEEP_GRACE_MS, batch=SWEEP_BATCH)
    token = secrets.token_urlsafe(32)
    rows = db.write(
        MINT, digest=_digest(token), accountId=account_id, keyId=key_id, ttl=int(ttl.total_seconds() * 1000)
    )
    expires = datetime.fromtimestamp(int(rows[0]["expires"]) / 1000, UTC).isoformat()
    log_line("console", "login-minted", accountId=short(account_id), keyId=key_id, expiresAt=expires)
    return token


def consume_login(db: Database, token: str | None) -> Login | None:
    """The login a token opens, used up by this call; None for a token that is malformed,
    unknown, expired or already used (the four look the same)."""
    if token is None or not token_shape(token):
        return None
    rows = db.write(CONSUME, digest=_digest(token))
    if not rows:
        return None
    return Login(str(rows[0]["accountId"]), str(rows[0]["keyId"]))
