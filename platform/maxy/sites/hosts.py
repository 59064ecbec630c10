"""Which account's sites a host name serves: ``DATA_ROOT/sites/hosts.json``.

    {"hosts": {"brochures.example.com": "<account id>", "localhost": "<account id>"}}

A host names at most one account (an account may have several hosts). The file is changed by
``maxy sites host add|remove`` under a lock, and read by the server on every request through
:class:`HostMap`, which parses it again only when it changed. A host the file does not name
serves no account at all: there is no default account.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..accounts import read_account, validate_account
from ..errors import ConfigError, ValidationError
from ..fsfaults import atomic_write
from ..logs import log_line, short
from .hostname import normalise_hostname

HOSTS_FILE = Path("sites") / "hosts.json"
MAX_HOSTS_BYTES = 1024 * 1024


def hosts_path(data_root: Path) -> Path:
    return Path(data_root) / HOSTS_FILE


def _parse(path: Path, raw: bytes) -> dict[str, str]:
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ConfigError(f"{path} is not valid UTF-8 JSON: fix it, or remove it and add the hosts again") from None
    hosts = data.get("hosts") if isinstance(data, dict) else None
    if not isinstance(hosts, dict):
        raise ConfigError(f'{path} must be an object {{"hosts": {{"<host>": "<account id>"}}}}: fix it')
    table: dict[str, str] = {}
    for host, account_id in hosts.items():
        name = normalise_hostname(host)
        if name is None or not isinstance(account_id, str):
            raise ConfigError(f"{path}: entry {host!r} is not a host name with an account id: fix or remove it")
        table[name] = account_id
    return table


def read_hosts(data_root: Path) -> dict[str, str]:
    """Host -> account id; {} when there is no file. ConfigError naming the file when it is broken."""
    path = hosts_path(data_root)
    try:
        if path.stat().st_size > MAX_HOSTS_BYTES:
            raise ConfigError(f"{path} is larger than {MAX_HOSTS_BYTES} bytes: fix it")
        return _parse(path, path.read_bytes())
    except FileNotFoundError:
        return {}
    except OSError as err:
        raise ConfigError(f"{path} cannot be read ({err.strerror or err}): make it readable") from None


class HostMap:
    """The server's view of the file: parsed again only when its size, time or inode change."""

    def __init__(self, data_root: Path):
        self.data_root = Path(data_root)
        self._lock = threading.Lock()
        self._seen: tuple[int, int, int] | None = None
        self._table: dict[str, str] = {}

    def account_for(self, host: str) -> str | None:
        """The account id the host serves, or None. ConfigError when the file is broken."""
        path = hosts_path(self.data_root)
        try:
            info = os.stat(path)
            signature: tuple[int, int, int] | None = (info.st_mtime_ns, info.st_size, info.st_ino)
        except FileNotFoundError:
            signature = None
        with self._lock:
            if signature != self._seen:
                self._table = read_hosts(self.data_root) if signature is not None else {}
                self._seen = signature
            return self._table.get(host)


def check_host(value: str, field: str = "HOST") -> str:
    name = normalise_hostname(value)
    if name is None:
        raise ValidationError(
            field, f"{value!r} is not a host name: give a name like brochures.example.com (no scheme, port or path)"
        )
    return name


@contextmanager
def _locked(data_root: Path) -> Iterator[dict[str, str]]:
    """The table, written back when the block ends without an error."""
    path = hosts_path(data_root)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ConfigError(f"{path.parent} cannot be made ({err.strerror or err}): fix DATA_ROOT") from None
    with open(path.with_name(".hosts.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        table = read_hosts(data_root)
        yield table
        atomic_write(path, json.dumps({"hosts": dict(sorted(table.items()))}, indent=2) + "\n", setting="DATA_ROOT")


def add_host(data_root: Path, host: str, account_id: str) -> str:
    """Map ``host`` to the account; the host name as stored. Refused when another account has it."""
    name = check_host(host)
    account = validate_account(data_root, account_id)
    with _locked(data_root) as table:
        owner = table.get(name)
        if owner is not None and owner != account.account_id:
            raise ValidationError(
                "HOST", f"{name} already serves account {owner}: `maxy sites host remove {name}` first"
            )
        table[name] = account.account_id
    log_line("sites", "host-add", host=name, accountId=short(account.account_id))
    return name


def remove_host(data_root: Path, host: str) -> str:
    name = check_host(host)
    with _locked(data_root) as table:
        if table.pop(name, None) is None:
            raise ValidationError("HOST", f"{name} serves no account: `maxy sites host list` shows the hosts")
    log_line("sites", "host-remove", host=name)
    return name


def list_hosts(data_root: Path) -> list[dict[str, object]]:
    """Every host with its account id and whether that account is still on disk."""
    return [
        {"host": host, "accountId": account_id, "accountExists": read_account(data_root, account_id) is not None}
        for host, account_id in sorted(read_hosts(data_root).items())
    ]
