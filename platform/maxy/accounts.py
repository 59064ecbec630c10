"""Accounts on disk: ``DATA_ROOT/accounts/<uuid>/account.json``.

Every process that writes to the graph validates ACCOUNT_ID against this set at start. An
account is named by its id or by its name (:func:`resolve_account`, the one place that decides).
The result is a :class:`ValidatedAccount`, the only thing the write primitive accepts.
"""

from __future__ import annotations

import json
import logging
import stat
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from .errors import AccountError, ConfigError, ValidationError
from .fsfaults import atomic_write, not_utf8
from .logs import log_line, short


@dataclass(frozen=True)
class Account:
    account_id: str
    name: str
    created_at: str
    path: Path

    def as_dict(self) -> dict[str, str]:
        return {"accountId": self.account_id, "name": self.name, "createdAt": self.created_at, "path": str(self.path)}


@dataclass(frozen=True)
class ValidatedAccount:
    """An account id checked against the on-disk account set. Build it only via validate_*."""

    account_id: str
    data_root: Path

    def ref(self) -> dict[str, str]:
        """``{"id", "name"}``: the account a command wrote to, for its --json."""
        return account_ref(self.data_root, self.account_id)

    def label(self) -> str:
        """``account docs (3f2a1b2c)``: the account a command wrote to, for its summary line."""
        return ref_label(self.ref())


# where `maxy account delete` moves an account's folder (maxy.dataops.account_files)
DELETED_DIR = ".deleted"


def accounts_dir(data_root: Path) -> Path:
    return Path(data_root) / "accounts"


def _canonical_uuid(value: str) -> str | None:
    try:
        return str(uuid.UUID(value))
    except (ValueError, AttributeError, TypeError):
        return None


_MAX_ACCOUNT_JSON = 64 * 1024


def _read_account(entry: Path) -> Account:
    """The account in folder ``entry``; raises AccountError(reason="unreadable") naming the file."""
    meta = entry / "account.json"
    try:
        info = meta.stat()
        # A folder or a pipe would fail or block every listing; a huge file would be read on every request.
        if not stat.S_ISREG(info.st_mode):
            raise AccountError("unreadable", f"{meta} is not a regular file")
        if info.st_size > _MAX_ACCOUNT_JSON:
            raise AccountError("unreadable", f"{meta} is {info.st_size} bytes, not a small account record")
        data = json.loads(meta.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        raise AccountError("unreadable", f"{meta} is missing") from None
    except json.JSONDecodeError as err:
        raise AccountError(
            "unreadable", f"{meta}: not valid JSON (line {err.lineno}, col {err.colno}); fix or remove it"
        ) from None
    except UnicodeDecodeError as err:
        raise AccountError("unreadable", f"{not_utf8(err, meta)}; fix or remove it") from None
    except (OSError, ValueError, RecursionError) as err:
        raise AccountError("unreadable", f"{meta} cannot be read ({type(err).__name__}: {str(err)[:120]})") from None
    if not isinstance(data, dict) or not isinstance(data.get("accountId"), str):
        raise AccountError("unreadable", f"{meta} is not an account record (an object with accountId)")
    if data["accountId"] != entry.name:
        raise AccountError("unreadable", f"{meta} names account {data['accountId']!r}, not its folder's {entry.name}")
    return Account(entry.name, str(data.get("name", "")), str(data.get("createdAt", "")), meta)


def read_account(data_root: Path, account_id: str) -> Account | None:
    """The one account ``account_id`` as :func:`list_accounts` would list it (a canonical id
    whose folder holds a readable account.json), without reading any other; None otherwise."""
    if _canonical_uuid(account_id) != account_id:
        return None
    entry = accounts_dir(data_root) / account_id
    try:
        return _read_account(entry) if entry.is_dir() else None
    except AccountError:
        return None


_warned: set[tuple[str, str]] = set()


def list_accounts(data_root: Path) -> list[Account]:
    """The readable accounts; a broken account.json is skipped (one warning per problem) and
    never hides or breaks another account."""
    return _scan(data_root)[0]


def _scan(data_root: Path) -> tuple[list[Account], list[AccountError]]:
    """The readable accounts, and the problem of each account folder that could not be read."""
    root = accounts_dir(data_root)
    if not root.is_dir():
        if root.exists() or (Path(data_root).exists() and not Path(data_root).is_dir()):
            blocker = root if root.exists() else Path(data_root)
            raise AccountError(
                "unreadable",
                f"{blocker} is a file where a folder is expected: move it away (or point DATA_ROOT elsewhere)",
            )
        return [], []
    try:
        entries = sorted(root.iterdir())
    except OSError as err:
        raise AccountError(
            "unreadable", f"{root} cannot be listed ({err.strerror or err}): make it a folder this user can read"
        ) from None
    found: list[Account] = []
    problems: list[AccountError] = []
    for entry in entries:
        if not entry.is_dir() or _canonical_uuid(entry.name) != entry.name:
            continue
        try:
            found.append(_read_account(entry))
        except AccountError as err:
            problems.append(err)
            if (str(entry), str(err)) not in _warned:
                _warned.add((str(entry), str(err)))
                log_line(
                    "accounts",
                    "skip",
                    level=logging.WARNING,
                    reason="unreadable-account-json",
                    path=entry / "account.json",
                    error=str(err)[:200],
                )
    return found, problems


def _skipped(problems: list[AccountError]) -> str:
    """The unreadable account files, for an error that would otherwise say only "no account"."""
    if not problems:
        return ""
    shown = "; ".join(str(p) for p in problems[:3])
    more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
    return f"; skipped unreadable: {shown}{more}"


def create_account(data_root: Path, name: str = "default", account_id: str | None = None) -> Account:
    if account_id is not None:
        canonical = _canonical_uuid(account_id)
        if canonical is None:
            raise ValidationError("accountId", f"{account_id!r} is not a UUID")
        account_id = canonical
    else:
        account_id = str(uuid.uuid4())
    if not isinstance(name, str) or not name.strip() or len(name) > 200:
        raise ValidationError("name", "a non-empty name of at most 200 characters is required")
    folder = accounts_dir(data_root) / account_id
    meta = folder / "account.json"
    if meta.exists():
        raise ValidationError("accountId", f"account {account_id} already exists at {meta}")
    created = datetime.now(UTC).isoformat()
    record = json.dumps({"accountId": account_id, "name": name.strip(), "createdAt": created}, indent=2) + "\n"
    try:
        atomic_write(meta, record, setting="DATA_ROOT")
    except ConfigError as err:
        _remove_empty(folder)  # a full or read-only disk leaves no half-made account behind
        raise AccountError("unwritable", str(err)) from None
    return Account(account_id, name.strip(), created, meta)


def _remove_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass


def remove_account_record(account: Account) -> None:
    """Undo :func:`create_account` of an account nothing else has used yet (its folder holds
    only account.json), e.g. when recording it as the default failed."""
    account.path.unlink(missing_ok=True)
    _remove_empty(account.path.parent)


def same_name(data_root: Path, name: str) -> list[Account]:
    """Accounts already called ``name`` (compared without case and surrounding spaces)."""
    return named(list_accounts(data_root), name)


def named(accounts: list[Account], name: str) -> list[Account]:
    """The accounts of ``accounts`` called ``name``: the one comparison names are resolved and
    checked for duplicates by (without case and surrounding spaces)."""
    wanted = name.strip().casefold()
    return [a for a in accounts if a.name.strip().casefold() == wanted]


def label(account: Account) -> str:
    """``name (3f2a1b2c)``: how a summary line names an account."""
    return f"{account.name} ({short(account.account_id)})" if account.name else account.account_id


def account_ref(data_root: Path, account_id: str) -> dict[str, str]:
    """``{"id", "name"}`` of an account, for the --json of a command that wrote to it (name ""
    when its account.json cannot be read)."""
    found = read_account(data_root, account_id)
    return {"id": account_id, "name": found.name if found else ""}


def ref_label(ref: dict[str, str]) -> str:
    """``account docs (3f2a1b2c)``: how a writing command's summary line names the account."""
    return f"account {ref['name']} ({short(ref['id'])})" if ref.get("name") else f"account {ref['id']}"


def account_label(data_root: Path, account_id: str) -> str:
    """``account docs (3f2a1b2c)`` for an account on disk (see :func:`ref_label`)."""
    return ref_label(account_ref(data_root, account_id))


_NAMES_SHOWN = 8


def _deleted(data_root: Path, value: str) -> list[Account]:
    """The deleted accounts ``value`` names by id or name (their folders under ``.deleted``)."""
    root = accounts_dir(data_root) / DELETED_DIR
    canonical = _canonical_uuid(value)
    found = []
    try:
        entries = sorted(root.iterdir()) if root.is_dir() else []
    except OSError:
        return []
    for entry in entries:
        try:
            account = _read_account(entry)
        except AccountError:
            continue
        if account.account_id == canonical or named([account], value):
            found.append(account)
    return found


def _unknown(
    data_root: Path, value: str, shown: str, accounts: list[Account], problems: list[AccountError]
) -> AccountError:
    names = sorted({a.name for a in accounts if a.name}, key=str.casefold)
    if 0 < len(names) <= _NAMES_SHOWN:
        choices = f"the accounts are named {', '.join(repr(n) for n in names)}; use one of these names or an id"
    else:
        choices = "use a name or an id from `maxy account list`"
    gone = _deleted(data_root, value)
    deleted = (
        f"{', '.join(f'{a.name!r} ({a.account_id})' for a in gone)} "
        f"{'is a deleted account' if len(gone) == 1 else 'are deleted accounts'}; "
        if gone
        else ""
    )
    return AccountError(
        "mismatch",
        f"{shown} matches no account under {accounts_dir(data_root)} (by id or name): "
        f"{deleted}{choices}{_skipped(problems)}",
    )


def resolve_account(data_root: Path, value: str | None, *, field: str = "ACCOUNT_ID") -> Account:
    """The account ``value`` names: its id (which always wins), else the one account with that
    name. An unknown or shared name is an AccountError naming ``field``, the reason and the fix
    (reason missing|unreadable|no-on-disk-account|mismatch|ambiguous); a deleted account is
    neither listed nor found."""
    if not value or not value.strip():
        raise AccountError(
            "missing",
            f"{field} is not set: run `maxy account create` (it records the id in the config .env), "
            f"`maxy account use NAME`, or set {field} to a name or id listed by `maxy account list`",
        )
    value = value.strip()
    shown = f"{field}={value}"
    canonical = _canonical_uuid(value)
    folder = accounts_dir(data_root) / canonical if canonical else None
    if folder is not None and folder.is_dir():
        try:
            return _read_account(folder)
        except AccountError as err:
            raise AccountError(
                "unreadable",
                f"{shown}: {err}; restore that file from a backup or recreate it as "
                f'{{"accountId": "{canonical}", "name": "..."}} (other accounts are unaffected)',
            ) from None
    accounts, problems = _scan(data_root)
    if not accounts:
        raise AccountError(
            "no-on-disk-account",
            f"{shown}: no readable account under {accounts_dir(data_root)}: run `maxy account create` "
            f"(or point DATA_ROOT at the data folder that holds your accounts){_skipped(problems)}",
        )
    matches = named(accounts, value)
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise AccountError(
            "ambiguous",
            f"{shown}: {len(matches)} accounts are named {matches[0].name!r} "
            f"({', '.join(a.account_id for a in matches)}); use one of these ids "
            "(or rename one in its account.json)",
        )
    raise _unknown(data_root, value, shown, accounts, problems)


def canonical_account_id(data_root: Path, value: str) -> str | None:
    """The id of the account ``value`` names (see :func:`resolve_account`), or None when it names
    none or several; quiet, for settings that keep a bad value for the command to report."""
    try:
        return resolve_account(data_root, value).account_id
    except AccountError:
        return None


def validate_account(data_root: Path, account_id: str | None, *, field: str = "ACCOUNT_ID") -> ValidatedAccount:
    """Check a name or id against the on-disk set (see :func:`resolve_account`): the account's
    canonical id, or AccountError(reason=missing|unreadable|no-on-disk-account|mismatch|ambiguous)."""
    return ValidatedAccount(resolve_account(data_root, account_id, field=field).account_id, Path(data_root))


def account_option(data_root: Path, value: str, flag: str = "--account") -> Account:
    """The account a command-line option names (a name or an id): a bad value is refused as
    that option's error (exit 2), e.g. ``--account: docs: 2 accounts are named 'docs' (...)``."""
    try:
        return resolve_account(data_root, value, field=flag)
    except AccountError as err:
        raise ValidationError(flag, str(err).removeprefix(f"{flag}=")) from None


class _AccountSettings(Protocol):
    ACCOUNT_ID: str | None

    @property
    def data_root(self) -> Path: ...


def validate_account_id_env(settings: _AccountSettings) -> ValidatedAccount:
    """Boot-time check for writing processes, with the ``[graph-health] account-id-env`` line."""
    try:
        validated = validate_account(settings.data_root, settings.ACCOUNT_ID)
    except AccountError as err:
        # INFO: a server's log keeps the line; a command says it once, as its error line
        log_line("graph-health", "account-id-env", "FATAL", reason=err.reason)
        raise
    log_line("graph-health", "account-id-env", present=True, id=short(validated.account_id), matches_on_disk=True)
    return validated
