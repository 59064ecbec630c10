"""Specialist definition files: Markdown with YAML front matter naming the specialist and the
tools it may use, in the shape Claude Code reads subagents in::

    ---
    name: librarian
    description: Finds and files what the account knows.
    tools: Read, Grep, mcp__plugin_memory_memory__memory-search
    ---
    (the specialist's instructions)

``tools`` is a comma-separated line or a YAML list. The files are the ``*.md`` directly inside
each served plugin's ``agents/`` folder and the account's
``DATA_ROOT/accounts/<id>/specialists/agents/``. A folder or file reached through a symbolic
link is read only when it stays inside its folder: the ``agents/`` folder inside its plugin's
(or account's) folder, a file inside that ``agents/`` folder. One leading elsewhere is named and
never read; a link loop is named too.
"""

from __future__ import annotations

import errno
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..accounts import accounts_dir
from ..fsfaults import yaml_error_at
from ..identifiers import NAME_RE
from ..logs import short
from ..plugins.manifest import ManifestError, split_front_matter
from .names import split_tools

SPECIALISTS_DIR = "specialists"
AGENTS_DIR = "agents"
MAX_FILE_BYTES = 256 * 1024
_LOOP = "is a symbolic link loop (it leads back to itself)"


@dataclass(frozen=True)
class Folder:
    """A folder of definitions, and the folder it and every file read from it must stay inside."""

    path: Path
    root: Path
    origin: str  # "plugin:<name>" or "account:<id8>"


@dataclass(frozen=True)
class Definition:
    name: str  # the front matter's name; the file's stem when it cannot be read
    path: Path
    origin: str
    tools: tuple[str, ...] = ()
    problem: str | None = None  # why the file cannot be used (then it has no tools)
    target: Path | None = None  # where a symbolic link leading outside its folder points (not read)


def plugin_folder(plugin: str, package: Path) -> Folder:
    return Folder(package / AGENTS_DIR, package, f"plugin:{plugin}")


def account_folder(data_root: Path, account_id: str | None) -> Folder | None:
    """The account's specialists folder (None without a well-formed ACCOUNT_ID)."""
    try:
        canonical = str(uuid.UUID(account_id or ""))
    except ValueError:
        return None
    account = accounts_dir(data_root) / canonical
    return Folder(account / SPECIALISTS_DIR / AGENTS_DIR, account, f"account:{short(canonical)}")


def read_folder(folder: Folder) -> list[Definition]:
    """The definitions of one folder, by file name; nothing when the folder does not exist."""
    path = folder.path
    if not os.path.lexists(path):
        return []
    try:
        real_root, real = _real_path(folder.root, "a folder"), _real_path(path, "a folder")
    except ValueError as err:
        return [Definition(path.name, path, folder.origin, problem=str(err))]
    if not real.is_relative_to(real_root):
        return [_outside(path, folder.origin, real, real_root)]
    if not real.is_dir():
        return [
            Definition(path.name, path, folder.origin, problem=f"{path} is not a folder: make it one, or remove it")
        ]
    try:
        entries = sorted(e for e in path.iterdir() if e.suffix == ".md")
    except OSError as err:
        return [Definition(path.name, path, folder.origin, problem=f"{path} cannot be listed ({err.strerror})")]
    return [read_definition(entry, real, folder.origin) for entry in entries]


def _real_path(path: Path, kind: str) -> Path:
    """``path`` with every symbolic link followed; raises ValueError saying why it cannot be (a
    link loop, a fault on the way), ``kind`` being what the link should lead to."""
    try:
        return path.resolve()
    except RuntimeError:  # what Python 3.11's resolve() raises in a link loop
        why = _LOOP
    except OSError as err:
        why = _LOOP if err.errno == errno.ELOOP else f"cannot be followed ({err.strerror})"
    raise ValueError(f"{path} {why}: point it at {kind}, or remove it")


def _outside(path: Path, origin: str, target: Path, inside: Path) -> Definition:
    problem = f"{path} is a symbolic link to {target}, outside {inside}: replace the link with the file itself"
    return Definition(path.stem, path, origin, problem=problem, target=target)


def read_definition(path: Path, folder: Path, origin: str) -> Definition:
    """One file of ``folder`` (its real path)."""
    try:
        real = _real_path(path, "a file in the same folder")
    except ValueError as err:
        return Definition(path.stem, path, origin, problem=str(err))
    if path.is_symlink() and not real.is_relative_to(folder):
        return _outside(path, origin, real, folder)
    if not real.is_file():
        what = "a symbolic link to nothing" if path.is_symlink() else "not a regular file"
        return Definition(path.stem, path, origin, problem=f"{path} is {what}: remove it")
    try:
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError as err:
        return Definition(path.stem, path, origin, problem=f"{path} cannot be read ({err.strerror})")
    if len(data) > MAX_FILE_BYTES:
        return Definition(path.stem, path, origin, problem=f"{path} is larger than {MAX_FILE_BYTES // 1024} KiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        return Definition(path.stem, path, origin, problem=f"{path} is not UTF-8 text (byte {err.start})")
    return parse_definition(text, path, origin)


def parse_definition(text: str, path: Path, origin: str) -> Definition:
    """A definition from a file's text; a front matter that cannot be used is the problem."""
    try:
        data = _front_matter(text, path.name)
    except ValueError as err:
        return Definition(path.stem, path, origin, problem=str(err))
    name = data.get("name")
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        problem = f"{path.name}: key 'name' must be the specialist's name (lower-case letters, digits, '-', '_'), got {name!r}"
        return Definition(path.stem, path, origin, problem=problem)
    if "tools" not in data:
        problem = f"{path.name}: has no 'tools' key; list the tools the specialist may use (tools: Read, Grep, ...)"
        return Definition(name, path, origin, problem=problem)
    try:
        tools = split_tools(data["tools"])
    except ValueError as err:
        return Definition(name, path, origin, problem=f"{path.name}: {err}")
    return Definition(name, path, origin, tuple(tools))


def _front_matter(text: str, where: str) -> dict[Any, Any]:
    try:
        raw = split_front_matter(text, where)
    except ManifestError as err:
        raise ValueError(str(err)) from None
    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as err:
        at = yaml_error_at(err, lines_above=1)  # the opening '---'
        raise ValueError(f"{where}: the front matter is not valid YAML{at}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{where}: the front matter must be a mapping with name, description and tools")
    return data
