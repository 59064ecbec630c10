"""From a request path to what ``/sites/...`` answers, on the account's sites folder.

:func:`resolve` checks the path (:mod:`maxy.sites.paths`), then walks the folder one segment
at a time, resolving links with ``realpath`` at every level: a level whose real path leaves
the sites folder is refused (403) whether or not the target exists, so the answer tells nothing
about what lies outside. A link whose target stays inside the sites folder is followed. The
sites folder itself must be a real folder, not a link. A folder asked for without its final
slash is redirected to it (301); with it, its ``index.html`` is served, or 404; a missing path
is 404. :func:`open_file` opens the file found without following a link in its last step and
checks what was opened: a regular file, whose real path (read back from the open descriptor
where the system offers it) is still inside the sites folder.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from .paths import Refused, SitePath, parse_site_path

SITES_DIR = "sites"
INDEX = "index.html"

SERVE = "serve"
REDIRECT = "redirect-trailing-slash"
NOT_FOUND = "not-found"
TRAVERSAL = "path-traversal-rejected"
ESCAPE = "symlink-escape-rejected"


@dataclass(frozen=True)
class Outcome:
    """What to answer: ``event`` is the log line's word, ``file`` the real path to serve."""

    status: int
    event: str
    reason: str = ""
    file: str | None = None
    root: str = ""


@dataclass(frozen=True)
class Opened:
    fd: int
    info: os.stat_result
    file: str


def sites_root(account_folder: Path) -> Path:
    return Path(account_folder) / SITES_DIR


def inside(root_real: str, path: str) -> bool:
    return path == root_real or path.startswith(root_real.rstrip(os.sep) + os.sep)


def resolve(root: Path, raw: str) -> Outcome:
    """The answer for ``raw`` (the request path after ``/sites``, as sent) in the folder ``root``."""
    parsed = parse_site_path(raw)
    if isinstance(parsed, Refused):
        return Outcome(403, TRAVERSAL, parsed.reason)
    return locate(root, parsed)


def locate(root: Path, site: SitePath) -> Outcome:
    if os.path.islink(root):
        return Outcome(403, ESCAPE, "sites-folder-is-a-link")
    root_real = os.path.realpath(root)
    if not os.path.isdir(root_real):
        return Outcome(404, NOT_FOUND, "no-sites-folder", root=root_real)
    current = root_real
    for segment in site.segments:
        current = os.path.realpath(os.path.join(current, segment))
        if not inside(root_real, current):
            return Outcome(403, ESCAPE, "link-leaves-sites", root=root_real)
    try:
        info = os.stat(current)
    except OSError:
        return Outcome(404, NOT_FOUND, "missing", root=root_real)
    if stat.S_ISDIR(info.st_mode):
        if not site.trailing_slash:
            return Outcome(301, REDIRECT, root=root_real)
        index = os.path.realpath(os.path.join(current, INDEX))
        if not inside(root_real, index):
            return Outcome(403, ESCAPE, "link-leaves-sites", root=root_real)
        return _regular(index, root_real, "no-index")
    if site.trailing_slash:
        return Outcome(404, NOT_FOUND, "not-a-folder", root=root_real)
    return _regular(current, root_real, "missing")


def _regular(path: str, root_real: str, missing: str) -> Outcome:
    try:
        info = os.stat(path)
    except OSError:
        return Outcome(404, NOT_FOUND, missing, root=root_real)
    if not stat.S_ISREG(info.st_mode):  # a folder named index.html, a pipe, a device
        return Outcome(404, NOT_FOUND, "not-a-file", root=root_real)
    return Outcome(200, SERVE, file=path, root=root_real)


def _opened_path(fd: int) -> str | None:
    """The real path of an open descriptor, where the system tells it (Linux's /proc)."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


def open_file(found: Outcome) -> Opened | Outcome:
    """Open the file ``found`` names, or the outcome that replaces it when the file changed since."""
    assert found.file is not None
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(found.file, flags)
    except OSError:
        return Outcome(404, NOT_FOUND, "gone", root=found.root)
    try:
        info = os.fstat(fd)
        real = _opened_path(fd)
        if real is not None and not inside(found.root, real):
            os.close(fd)
            return Outcome(403, ESCAPE, "link-leaves-sites", root=found.root)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            return Outcome(404, NOT_FOUND, "not-a-file", root=found.root)
    except OSError:
        os.close(fd)
        return Outcome(404, NOT_FOUND, "gone", root=found.root)
    return Opened(fd, info, found.file)
