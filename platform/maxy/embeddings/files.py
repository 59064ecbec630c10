"""File helpers shared by the model fetchers: checksums and atomic writes."""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_atomic(dest: Path, data: bytes) -> None:
    """Write ``data`` to ``dest`` so that readers see the old file or the whole new one."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=dest.name + ".", suffix=".tmp", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def pin_problem(directory: Path, members: Mapping[str, tuple[str, str]]) -> str | None:
    """What is wrong with pinned files in ``directory`` (``members``' values are (file name,
    sha256)): the first missing or changed one, or None when every one matches its pin."""
    for name, digest in members.values():
        path = directory / name
        if not path.is_file():
            return f"{path} is missing"
        got = sha256_file(path)
        if got != digest:
            return f"{path} has sha256 {got}, expected {digest}"
    return None
