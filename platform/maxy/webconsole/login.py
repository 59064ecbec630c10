"""One-time login links: ``maxy console`` mints a token bound to an admin API key, the console
exchanges it once for a session.

Only the token's SHA-256 is stored, in ``DATA_ROOT/console/logins.json`` (mode 0600), beside
the key id and account it opens and when it expires. A token works once, within its time to
live; an expired entry is dropped by the next mint or login. The file is changed under a lock,
so two logins with one token cannot both succeed."""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ..fsfaults import atomic_write
from ..logs import log_line, short

LOGIN_TTL = timedelta(minutes=5)
_TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{32,64}$")


@dataclass(frozen=True)
class Login:
    """What a used login token opens: one API key of one account."""

    account_id: str
    key_id: str


def token_shape(token: str | None) -> bool:
    """Whether a text has the shape of a login token (checked before any file is touched)."""
    return bool(token) and bool(_TOKEN_RE.match(token or ""))


def logins_path(data_root: Path) -> Path:
    return Path(data_root) / "console" / "logins.json"


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("ascii")).hexdigest()


@contextmanager
def _locked(data_root: Path) -> Iterator[list[dict[str, Any]]]:
    """The pending logins (expired ones dropped), written back when the block ends."""
    path = logins_path(data_root)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(path.with_name(".logins.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            pending = json.loads(path.read_text(encoding="utf-8")).get("logins", [])
        except (OSError, ValueError, AttributeError):
            pending = []  # a missing or unreadable file holds no usable login: links are minted again
        now = datetime.now(UTC).isoformat()
        live = [p for p in pending if isinstance(p, dict) and str(p.get("expiresAt", "")) > now]
        before = list(live)
        yield live
        if live != pending or live != before:  # an unknown token changes nothing, so nothing is written
            atomic_write(path, json.dumps({"logins": live}, indent=2) + "\n", mode=0o600, setting="DATA_ROOT")


def mint_login(data_root: Path, account_id: str, key_id: str, *, ttl: timedelta = LOGIN_TTL) -> str:
    """A fresh one-time token opening ``key_id`` for ``ttl``; only its hash is kept."""
    token = secrets.token_urlsafe(32)
    expires = datetime.now(UTC) + ttl
    with _locked(data_root) as pending:
        pending.append(
            {"tokenHash": _digest(token), "accountId": account_id, "keyId": key_id, "expiresAt": expires.isoformat()}
        )
    log_line("console", "login-minted", accountId=short(account_id), keyId=key_id, expiresAt=expires.isoformat())
    return token


def consume_login(data_root: Path, token: str | None) -> Login | None:
    """The login a token opens, used up by this call; None for a token that is malformed,
    unknown, expired or already used (the four look the same)."""
    if token is None or not token_shape(token):
        return None
    digest = _digest(token)
    with _locked(data_root) as pending:
        for i, entry in enumerate(pending):
            if hmac.compare_digest(str(entry.get("tokenHash", "")), digest):
                del pending[i]
                return Login(str(entry.get("accountId", "")), str(entry.get("keyId", "")))
    return None
