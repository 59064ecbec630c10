"""The files an ingest reads: named files and the supported, non-hidden files of named folders
(with ``as_text``, every non-hidden file of them that is text).

Folders are walked without following directory symlinks; a file whose real path leaves the
folder being ingested, or lies in Maxy's own configuration or data folder, is skipped and
listed with its reason, so a link planted in a shared folder cannot carry the Neo4j password
or the key files into the graph."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..config import config_dir, get_settings
from ..errors import ValidationError
from .formats.encoding import looks_binary
from .parse import AS_TEXT_HINT, SUPPORTED_EXTENSIONS, unsupported


def _hidden(path: Path, root: Path) -> bool:
    try:
        rel = path.relative_to(root)
    except ValueError:
        rel = path
    return any(part.startswith(".") for part in rel.parts)


@dataclass(frozen=True)
class SkippedFile:
    """A file found but not ingested, and why (``reason`` is a slug, ``note`` a sentence)."""

    path: Path
    reason: str
    note: str


@dataclass
class FileSet:
    files: list[Path]
    skipped: list[SkippedFile]
    relative: dict[Path, str] = field(default_factory=dict)  # a file -> its path inside the folder named
    as_text: bool = False  # files of a type Maxy does not know are read as plain text

    def relative_path(self, f: Path) -> str:
        """Where a file sits inside the folder it was found in (``advanced/timeouts.md``); a file
        named on its own is its name."""
        return self.relative.get(f) or f.name


def protected_folders() -> tuple[Path, ...]:
    """Maxy's configuration folder (.env with the Neo4j password, the local server) and data
    folder (accounts and their API key files): never ingested."""
    folders = {config_dir().expanduser().resolve()}
    try:
        folders.add(get_settings().data_root.expanduser().resolve())
    except Exception:  # noqa: BLE001 - unreadable settings: the config folder is still protected
        pass
    return tuple(sorted(folders))


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _walk(root: Path) -> tuple[list[Path], list[Path]]:
    """Supported and unsupported non-hidden files under ``root``; directory symlinks are not followed."""
    supported: list[Path] = []
    unsupported: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in filenames:
            f = Path(dirpath) / name
            if _hidden(f, root) or not f.is_file():
                continue
            (supported if f.suffix.lower() in SUPPORTED_EXTENSIONS else unsupported).append(f)
    return sorted(supported), sorted(unsupported)


def _unsupported(f: Path) -> SkippedFile:
    return SkippedFile(
        f,
        "unsupported",
        f"{f}: unsupported file type {f.suffix or '(none)'!r} (supported: {', '.join(SUPPORTED_EXTENSIONS)}; "
        f"{AS_TEXT_HINT})",
    )


def _binary(f: Path) -> SkippedFile:
    return SkippedFile(f, "binary", f"{f}: looks like a binary file, not text (--as-text reads text files only)")


def collect_files(
    paths: Iterable[str | Path], *, protected: Sequence[Path] | None = None, as_text: bool = False
) -> FileSet:
    """Files to ingest: named files (which must have a supported extension) and every
    supported, non-hidden file under named folders, sorted, each real file once. With
    ``as_text`` a named file may be of any type, and a folder's files of other types are taken
    when they are text (a binary one is skipped, ``reason=binary``).

    Every file is judged by its real path (symlinks resolved): one that leaves the folder it
    was found in, or lies in a protected folder (default: :func:`protected_folders`), is
    skipped and listed in ``FileSet.skipped``."""
    guarded = tuple(Path(p).resolve() for p in (protected_folders() if protected is None else protected))
    found: list[Path] = []
    skipped: list[SkippedFile] = []
    seen: set[Path] = set()
    relative: dict[Path, str] = {}

    def take(f: Path, folder: Path | None) -> None:
        real = f.resolve()
        if any(_inside(real, g) for g in guarded):
            skipped.append(
                SkippedFile(
                    f, "protected-folder", f"{f} is in Maxy's configuration or data folder ({real}): never ingested"
                )
            )
        elif folder is not None and not _inside(real, folder):
            skipped.append(SkippedFile(f, "outside-folder", f"{f} links to {real}, outside the folder {folder}"))
        elif real not in seen:
            seen.add(real)
            found.append(real)
            if folder is not None:
                relative[real] = f.relative_to(folder).as_posix() if _inside(f, folder) else real.name

    for raw in paths:
        if not str(raw).strip():  # Path("") is ".": an empty argument must not mean this folder
            raise ValidationError("path", f"{str(raw)!r} is empty: name a file or a folder ('.' for this folder)")
        p = Path(raw).expanduser()
        if p.is_dir():
            folder = p.resolve()
            files, others = _walk(folder)
            textual = {f for f in others if not looks_binary(f)} if as_text else set()
            for f in sorted([*files, *textual]):
                take(f, folder)
            skipped.extend(_binary(f) if as_text else _unsupported(f) for f in others if f not in textual)
        elif p.is_file():
            if p.suffix.lower() not in SUPPORTED_EXTENSIONS and not as_text:
                raise unsupported(p)
            take(p, None)
        else:
            raise ValidationError(str(p), "no such file or folder")
    return FileSet(found, skipped, relative, as_text)
