"""File-system faults as one line an operator can act on: which path, what is wrong with it
(read-only, full, a file where a folder belongs, no permission, not UTF-8, not valid YAML) and
the fix.

``atomic_write`` is the one way Maxy writes its small files (the config ``.env``, account
records, API key files, client configs): a temporary file beside the target, then a rename,
so a fault leaves the old file whole and no temporary behind.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from .errors import ConfigError


def _blocking_file(path: Path) -> Path | None:
    """The nearest ancestor of ``path`` that exists and is not a folder."""
    for parent in [path, *path.parents]:
        if parent.exists() or parent.is_symlink():
            return None if parent.is_dir() else parent
    return None


def describe(err: OSError, path: Path, *, setting: str | None = None, action: str = "write") -> str:
    """One line naming ``path``, the fault and its fix; ``setting`` names the variable that
    chooses the location (``DATA_ROOT``, ``MAXY_CONFIG_DIR``)."""
    path = Path(path)
    elsewhere = f" (or point {setting} elsewhere)" if setting else ""
    code = err.errno
    if code == errno.EROFS:
        fix = f"it is on a read-only file system: remount it read-write{elsewhere}"
    elif code in (errno.ENOSPC, errno.EDQUOT):
        fix = f"the disk holding it is full: free some space{elsewhere}"
    elif code == errno.ENOTDIR or (code == errno.EEXIST and not path.parent.is_dir()):
        blocker = _blocking_file(path.parent) or path.parent
        fix = f"{blocker} is a file where a folder is expected: move it away{elsewhere}"
    elif code == errno.EISDIR:
        fix = f"{path} is a folder where a file is expected: move it away"
    elif code in (errno.EACCES, errno.EPERM):
        fix = f"permission denied: make {path.parent} {'readable' if action == 'read' else 'writable'} by this user{elsewhere}"
    elif code == errno.ENOENT:
        fix = f"the folder {path.parent} does not exist: create it first{elsewhere}"
    else:
        fix = f"{err.strerror or err}{elsewhere}"
    return f"cannot {action} {path}: {fix}"


def not_utf8(err: UnicodeDecodeError, path: Path) -> str:
    """One line for a text file that is not UTF-8, with where the first bad byte is."""
    return (
        f"{path} is not UTF-8 text (byte 0x{err.object[err.start]:02x} at offset {err.start}): "
        "save it as UTF-8 (or remove the line holding that byte)"
    )


def yaml_error_at(err: Exception, *, lines_above: int = 0) -> str:
    """`` at line N`` for a YAML parse error that knows where it is (1-based, counted in a file
    whose YAML starts ``lines_above`` lines down), else ``""``."""
    mark = getattr(err, "problem_mark", None)
    return f" at line {mark.line + 1 + lines_above}" if mark is not None else ""


def atomic_write(path: Path, text: str, *, mode: int | None = None, setting: str | None = None) -> Path:
    """Write ``text`` to ``path`` (creating its folder) through a temporary file and a rename;
    raises ConfigError naming the path and the fix."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666 if mode is None else mode)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as err:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        raise ConfigError(describe(err, path, setting=setting)) from None
    return path
