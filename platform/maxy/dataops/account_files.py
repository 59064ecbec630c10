"""An account's folder under ``DATA_ROOT/accounts`` while it is deleted or being imported.

A deleted account's folder moves to ``DATA_ROOT/accounts/.deleted/<id>/`` with a
``deleted.json`` (when, so the purge knows the grace period). Nothing there is an account any
more: ``list_accounts`` skips the folder, ``validate_account`` refuses the id, and so every
process that acts for an account (CLI, MCP servers, API keys) refuses it at once.

An import writes ``import-pending.json`` into the live folder first and removes it last, so an
interrupted import is recognised and may simply be run again.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..accounts import DELETED_DIR, accounts_dir
from ..errors import AccountError, ValidationError

DELETED_MARKER = "deleted.json"
IMPORT_MARKER = "import-pending.json"
ACCOUNT_FILE = "account.json"


def canonical_id(value: str, field: str = "accountId") -> str:
    """The account id as a canonical UUID; a one-line refusal that echoes nothing else."""
    try:
        canonical = str(uuid.UUID(value))
    except (ValueError, AttributeError, TypeError):
        raise ValidationError(field, "not an account id (a UUID shown by `maxy account list`)") from None
    return canonical


def live_folder(data_root: Path, account_id: str) -> Path:
    return accounts_dir(data_root) / account_id


def deleted_folder(data_root: Path, account_id: str) -> Path:
    return accounts_dir(data_root) / DELETED_DIR / account_id


def deleted_at(data_root: Path, account_id: str) -> str | None:
    """When the account was deleted, or None when it is not a deleted account."""
    marker = deleted_folder(data_root, account_id) / DELETED_MARKER
    try:
        data = json.loads(marker.read_text())
    except (OSError, ValueError):
        return None
    value = data.get("deletedAt") if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


def deleted_name(data_root: Path, account_id: str) -> str:
    """The name a deleted account had ("" when its account.json cannot be read)."""
    try:
        data = json.loads((deleted_folder(data_root, account_id) / ACCOUNT_FILE).read_text())
    except (OSError, ValueError):
        return ""
    name = data.get("name") if isinstance(data, dict) else None
    return name if isinstance(name, str) else ""


def deleted_accounts(data_root: Path) -> dict[str, str]:
    """Every deleted account with its deletedAt."""
    root = accounts_dir(data_root) / DELETED_DIR
    if not root.is_dir():
        return {}
    found: dict[str, str] = {}
    for entry in sorted(root.iterdir()):
        stamp = deleted_at(data_root, entry.name)
        if stamp is not None:
            found[entry.name] = stamp
    return found


def mark_deleted(data_root: Path, account_id: str, stamp: str) -> Path:
    """Move the live folder aside with its deleted.json; returns the new folder."""
    source, target = live_folder(data_root, account_id), deleted_folder(data_root, account_id)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():  # an older deletion of the same id, already replaced by an import
            shutil.rmtree(target)
        os.replace(source, target)
        _write_json(target / DELETED_MARKER, {"accountId": account_id, "deletedAt": stamp})
    except OSError as err:
        raise AccountError(
            "unwritable",
            f"cannot move {source} to {target} ({err.strerror or err}): make {accounts_dir(data_root)} writable",
        ) from None
    return target


def remove_deleted(data_root: Path, account_id: str) -> bool:
    """Remove a deleted account's folder for good; True when there was one."""
    folder = deleted_folder(data_root, account_id)
    if not folder.is_dir():
        return False
    shutil.rmtree(folder)
    return True


def read_account_record(data_root: Path, account_id: str) -> dict[str, Any]:
    """``account.json`` of a live account as stored."""
    data = json.loads((live_folder(data_root, account_id) / ACCOUNT_FILE).read_text())
    return data if isinstance(data, dict) else {}


def write_account_record(data_root: Path, record: dict[str, Any]) -> Path:
    """Create or replace a live account's account.json (written whole, then renamed)."""
    folder = live_folder(data_root, str(record["accountId"]))
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _write_json(folder / ACCOUNT_FILE, record)
    except OSError as err:
        raise AccountError(
            "unwritable", f"cannot write {folder / ACCOUNT_FILE} ({err.strerror or err}): make it writable"
        ) from None
    return folder / ACCOUNT_FILE


def import_pending(data_root: Path, account_id: str) -> bool:
    return (live_folder(data_root, account_id) / IMPORT_MARKER).is_file()


def set_import_pending(data_root: Path, account_id: str, header: dict[str, Any]) -> None:
    folder = live_folder(data_root, account_id)
    folder.mkdir(parents=True, exist_ok=True)
    _write_json(folder / IMPORT_MARKER, {"startedAt": datetime.now(UTC).isoformat(), "header": header})


def clear_import_pending(data_root: Path, account_id: str) -> None:
    (live_folder(data_root, account_id) / IMPORT_MARKER).unlink(missing_ok=True)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, path)
