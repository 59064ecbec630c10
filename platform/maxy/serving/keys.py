"""API keys for the streamable HTTP server (``maxy serve``, ``maxy mcp key ...``).

A key resolves to an account, a role, an agent slug, scopes and (admin keys) a task role. Keys are stored hashed
(SHA-256) in ``DATA_ROOT/accounts/<id>/api-keys.json`` (mode 0600) and shown once, when
created. A key file that cannot be read is never rewritten: writers refuse it, naming the
file, where it is wrong and the fix; readers count it as no keys (with one warning per change).
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import logging
import re
import secrets
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..accounts import accounts_dir, list_accounts, read_account, validate_account
from ..config import MEMBER_ID_PATTERN, SCOPE_VALUES, TASK_ROLE_VALUES
from ..errors import ConfigError, ValidationError
from ..fsfaults import atomic_write, describe
from ..identifiers import NAME_RE, check_agent_slug
from ..logs import log_line, short
from ..plugins.api import ROLES, Role
from ..textcheck import json_kind

API_KEYS_FILE = "api-keys.json"
KEY_PREFIX = "mxy"
_lock = threading.Lock()


@dataclass(frozen=True)
class ApiKey:
    key_id: str
    account_id: str
    role: Role
    agent_slug: str | None
    scopes: tuple[str, ...] | None  # None: no scope filter (admin keys only)
    created_at: str
    key_hash: str = ""
    task_role: str | None = None  # the task store's role of its calls; None: task tools only read
    member_id: str | None = None  # the community member its calls act for; None: the account's admin
    profiles: tuple[str, ...] | None = None  # the tool profiles it is served; None: the server's default

    @property
    def holds_view(self) -> bool:
        """Whether the key reaches the account's memory at all. A member's key is least-privilege:
        it acts in the community as its member, and reaches memory only through the view (scopes,
        agent) stated when it was made; one made with neither reaches no memory."""
        return self.member_id is None or self.scopes is not None or self.agent_slug is not None

    def sees_agent(self, slug: str, agent_scopes: Sequence[str]) -> bool:
        """Whether agent ``slug``, reading ``agent_scopes``, lies inside this key's view: the key
        holds a view, is pinned to that agent or to none, and its scopes (if pinned) cover the agent's."""
        if not self.holds_view:
            return False
        if self.agent_slug is not None and self.agent_slug != slug:
            return False
        return self.scopes is None or set(agent_scopes) <= set(self.scopes)

    def as_dict(self) -> dict[str, Any]:
        return {
            "keyId": self.key_id,
            "accountId": self.account_id,
            "role": self.role,
            "agentSlug": self.agent_slug,
            "scopes": list(self.scopes) if self.scopes is not None else None,
            "taskRole": self.task_role,
            "memberId": self.member_id,
            "memoryView": self.holds_view,
            "profiles": list(self.profiles) if self.profiles is not None else None,
            "createdAt": self.created_at,
        }


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _keys_path(data_root: Path, account_id: str) -> Path:
    return accounts_dir(data_root) / account_id / API_KEYS_FILE


def _load_keys(path: Path) -> list[dict[str, Any]]:
    """The key records of one account; [] when it has no file. Raises KeyFileError naming the
    file, where it is wrong and the fix, so no writer ever replaces keys it could not read."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as err:
        raise KeyFileError(path, f"cannot be read ({err.strerror or err})") from None
    try:
        value = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise KeyFileError(path, f"is not UTF-8 at line {line} column {column} (byte {data[err.start]:#04x})") from None
    except json.JSONDecodeError as err:
        raise KeyFileError(path, f"is not valid JSON at line {err.lineno} column {err.colno} ({err.msg})") from None
    keys = value.get("keys") if isinstance(value, dict) else None
    if not isinstance(value, dict) or not isinstance(keys, list):
        if not isinstance(value, dict):
            found = f"the file holds {json_kind(value)}"
        else:
            found = f'"keys" is {json_kind(keys)}' if "keys" in value else '"keys" is missing'
        raise KeyFileError(path, f'must be an object {{"keys": [...]}}, but {found}')
    for i, key in enumerate(keys):
        if not isinstance(key, dict):
            raise KeyFileError(path, f"keys[{i}] must be an object, but is {json_kind(key)}")
    return keys


class KeyFileError(ConfigError):
    """An API key file that cannot be read: writers refuse, readers count it as no keys."""

    def __init__(self, path: Path, problem: str):
        self.path = path
        self.problem = problem
        super().__init__(f"API key file {path} {problem}: fix or remove {path}; nothing was changed")


def _read_keys(path: Path) -> list[dict[str, Any]]:
    """For readers: a broken file counts as no keys (each of its keys is refused), with a warning."""
    try:
        return _load_keys(path)
    except KeyFileError as err:
        log_line(
            "mcp-http", "warn", level=logging.WARNING, reason="api-keys-unreadable", path=str(path), problem=err.problem
        )
        return []


@contextmanager
def _changing(path: Path) -> Iterator[None]:
    """This process's lock, then the key file's lock file: two commands changing one account's
    keys, in one process or in several (on a shared DATA_ROOT too, where its file system locks),
    take turns, so neither loses the other's change."""
    lock_path = path.with_name(".api-keys.lock")
    with _lock:
        try:
            lock = open(lock_path, "w")  # noqa: SIM115 - held for the block, closed below
        except OSError as err:
            raise ConfigError(describe(err, lock_path, action="write", setting="DATA_ROOT")) from None
        with lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield


def _write_keys(path: Path, keys: list[dict[str, Any]]) -> None:
    atomic_write(path, json.dumps({"keys": keys}, indent=2) + "\n", mode=0o600, setting="DATA_ROOT")


def _record(account_id: str, raw: dict[str, Any]) -> ApiKey | None:
    role = raw.get("role")
    if role not in ROLES or not isinstance(raw.get("keyId"), str) or not isinstance(raw.get("hash"), str):
        return None
    scopes = raw.get("scopes")
    if scopes is not None and (not isinstance(scopes, list) or any(s not in SCOPE_VALUES for s in scopes)):
        return None  # a hand-edited record with a scope no key can hold is no key at all
    task_role = raw.get("taskRole") or None
    if task_role is not None and (task_role not in TASK_ROLE_VALUES or role == "public"):
        return None  # nor is one with a task role no key can hold
    member_id = raw.get("memberId") or None
    if member_id is not None and (
        not isinstance(member_id, str) or not re.fullmatch(MEMBER_ID_PATTERN, member_id) or role == "public"
    ):
        return None  # nor is one bound to a member no key can name
    profiles = raw.get("profiles")
    if profiles is not None and (
        not isinstance(profiles, list) or not all(isinstance(p, str) and NAME_RE.fullmatch(p) for p in profiles)
    ):
        return None  # nor is one served a profile no server can name
    return ApiKey(
        key_id=raw["keyId"],
        account_id=account_id,
        role=role,
        agent_slug=raw.get("agentSlug") or None,
        scopes=tuple(scopes) if isinstance(scopes, list) else None,
        created_at=str(raw.get("createdAt", "")),
        key_hash=raw["hash"],
        task_role=task_role,
        member_id=member_id,
        profiles=tuple(profiles) if profiles else None,
    )


def _check_profile_names(profiles: Sequence[str] | None) -> None:
    bad = next((p for p in profiles or () if not NAME_RE.fullmatch(p)), None)
    if bad is not None:
        raise ValidationError("profile", f"{bad!r} is not a profile name (lower-case letters, digits, - or _)")


def create_api_key(
    data_root: Path,
    account_id: str,
    *,
    role: Role,
    agent_slug: str | None = None,
    scopes: Sequence[str] | None = None,
    task_role: str | None = None,
    member_id: str | None = None,
    profiles: Sequence[str] | None = None,
) -> tuple[str, ApiKey]:
    """Create a key; returns (the key, shown only now, its stored record). ``profiles``: the tool
    profiles the key is served (checked against the installed plugins by the caller; None: the
    server's default)."""
    if role not in ROLES:
        raise ValidationError("role", f"must be one of {list(ROLES)}")
    account = validate_account(data_root, account_id)
    if agent_slug is not None:
        agent_slug = check_agent_slug(agent_slug, field="agent")
    if scopes is not None:
        scopes = [s.strip() for s in scopes if s and s.strip()]
        bad = [s for s in scopes if s not in SCOPE_VALUES]
        if bad:
            raise ValidationError("scopes", f"unknown scope(s) {bad}; allowed: {list(SCOPE_VALUES)}")
    if role == "public":
        if not agent_slug:
            raise ValidationError("agent", "a public key needs the public agent's slug (--agent SLUG)")
        scopes = scopes or ["public"]
        if "admin" in scopes:
            raise ValidationError("scopes", "a public key cannot read the admin scope: use public or public,shared")
        if task_role is not None:
            raise ValidationError("taskRole", "a public key cannot carry a task role (public agents never write)")
        if member_id is not None:
            raise ValidationError("memberId", "a public key cannot act for a member (public agents never write)")
    if task_role is not None and task_role not in TASK_ROLE_VALUES:
        raise ValidationError("taskRole", f"unknown task role {task_role!r}; allowed: {', '.join(TASK_ROLE_VALUES)}")
    if member_id is not None and not re.fullmatch(MEMBER_ID_PATTERN, member_id):
        raise ValidationError(
            "memberId",
            f"{member_id!r} is not a member id: a letter or digit, then letters, digits, '.', '_', '@' or '-'",
        )
    _check_profile_names(profiles)
    key_id = secrets.token_hex(6)
    key = f"{KEY_PREFIX}_{key_id}_{secrets.token_urlsafe(32)}"
    record = ApiKey(
        key_id=key_id,
        account_id=account.account_id,
        role=role,
        agent_slug=agent_slug,
        scopes=tuple(scopes) if scopes else None,
        created_at=datetime.now(UTC).isoformat(),
        key_hash=_hash(key),
        task_role=task_role,
        member_id=member_id,
        profiles=tuple(profiles) if profiles else None,
    )
    path = _keys_path(data_root, account.account_id)
    with _changing(path):
        keys = _load_keys(path)
        keys.append(
            {
                "keyId": record.key_id,
                "hash": record.key_hash,
                "role": record.role,
                "agentSlug": record.agent_slug,
                "scopes": list(record.scopes) if record.scopes is not None else None,
                "taskRole": record.task_role,
                "memberId": record.member_id,
                "profiles": list(record.profiles) if record.profiles is not None else None,
                "createdAt": record.created_at,
            }
        )
        _write_keys(path, keys)
    log_line(
        "mcp-http",
        "api-key",
        "created",
        keyId=key_id,
        role=role,
        accountId=short(account.account_id),
        agent=agent_slug,
        taskRole=task_role,
        memberId=member_id,
    )
    return key, record


def list_api_keys(data_root: Path, account_id: str | None = None) -> list[ApiKey]:
    out: list[ApiKey] = []
    for account in list_accounts(data_root):
        if account_id and account.account_id != account_id:
            continue
        for raw in _read_keys(_keys_path(data_root, account.account_id)):
            rec = _record(account.account_id, raw)
            if rec is not None:
                out.append(rec)
    return out


def revoke_api_key(data_root: Path, key_id: str) -> bool:
    """Revoke ``key_id`` wherever it is; a key file that cannot be read is never rewritten, and it
    is an error only when the key was not found in any readable one (it may be in that file)."""
    unreadable: KeyFileError | None = None
    for account in list_accounts(data_root):
        path = _keys_path(data_root, account.account_id)
        with _changing(path):
            try:
                keys = _load_keys(path)
            except KeyFileError as err:
                unreadable = unreadable or err
                continue
            kept = [k for k in keys if k.get("keyId") != key_id]
            if len(kept) != len(keys):
                _write_keys(path, kept)
                log_line("mcp-http", "api-key", "revoked", keyId=key_id, accountId=short(account.account_id))
                return True
    if unreadable is not None:
        raise unreadable
    return False


class ApiKeyStore:
    """Resolves a presented key to its record; re-reads a key file when it changes.

    A key seen once is looked up in its own account only (its account.json and key file), so a
    request costs the same with one account as with thousands; a key not found there (new,
    moved, revoked or unknown) is looked for in every account again."""

    def __init__(self, data_root: Path):
        self.data_root = Path(data_root)
        self._cache: dict[Path, tuple[tuple[int, int, int], list[dict[str, Any]]]] = {}
        self._owners: dict[str, str] = {}  # keyId -> the account whose key file held it
        self._lock = threading.Lock()

    def _keys(self, path: Path) -> list[dict[str, Any]]:
        """The file's keys, read again only when it changes (so a broken one warns once per change)."""
        try:
            st = path.stat()
        except OSError:
            return []
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        with self._lock:
            cached = self._cache.get(path)
            if cached is None or cached[0] != stamp:
                cached = (stamp, _read_keys(path))
                self._cache[path] = cached
            return cached[1]

    def resolve(self, key: str | None) -> ApiKey | None:
        if not key or not isinstance(key, str):
            return None
        parts = key.split("_", 2)
        if len(parts) != 3 or parts[0] != KEY_PREFIX:
            return None
        key_id, digest = parts[1], _hash(key)
        owner = self._owners.get(key_id)
        if owner is not None and read_account(self.data_root, owner) is not None:
            found = self._match(owner, key_id, digest)
            if found is not None:
                return found
        for account in list_accounts(self.data_root):
            found = self._match(account.account_id, key_id, digest)
            if found is not None:
                return found
        return None

    def by_id(self, account_id: str, key_id: str) -> ApiKey | None:
        """The record of a key known by id (not by secret), while it and its account exist: what
        a console session checks on every request, so revoking the key ends its sessions."""
        if read_account(self.data_root, account_id) is None:
            return None
        for raw in self._keys(_keys_path(self.data_root, account_id)):
            if raw.get("keyId") == key_id:
                return _record(account_id, raw)
        return None

    def _match(self, account_id: str, key_id: str, digest: str) -> ApiKey | None:
        """The record of ``key_id`` in this account's key file when ``digest`` is its hash."""
        for raw in self._keys(_keys_path(self.data_root, account_id)):
            if isinstance(raw.get("keyId"), str):
                self._owners[raw["keyId"]] = account_id
            if raw.get("keyId") == key_id and hmac.compare_digest(str(raw.get("hash", "")), digest):
                return _record(account_id, raw)
        return None
