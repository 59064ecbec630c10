"""The files an ingest reads: named files and the supported, non-hidden files of named folders
(with ``as_text``, every non-hidden file of them that is text).

Folders are walked without following directory symlinks; a file whose real path leaves the
folder being ingested, or lies in Maxy's own configuration or data folder, is skipped and
listed with its reason, so a link planted in a shared folder cannot carry the Neo4j password
or the key files into the graph.

A folder's walk also leaves out what :mod:`.ignore` names: the paths ``.gitignore`` and
``.maxyignore`` files exclude, build, dependency and cache folders, and HTML templates. A file
or folder named on the command line is read whatever those rules say; ``ignore=False`` (the
command line's ``--no-ignore``) turns them off."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..config import config_dir, get_settings
from ..errors import ValidationError
from .formats import AS_TEXT_HINT, SUPPORTED_EXTENSIONS, unsupported
from .formats.encoding import looks_binary
from .ignore import DEFAULTS, TEMPLATE_SUFFIXES, Rules, ignore_files_in, is_template, rules_for


def _hidden(path: Path, root: Path) -> bool:
    try:
        rel = path.relative_to(root)
    except ValueError:
        rel = path
    return any(part.startswith(".") for part in rel.parts)


QUIET_REASONS = frozenset({"unsupported", "binary", "ignored", "template"})  # expected in any folder: INFO, not WARNING


@dataclass(frozen=True)
class SkippedFile:
    """A file (or, for ``ignored``, a folder) found but not ingested, and why (``reason`` is a
    slug, ``note`` a sentence, ``group`` what the summary counts it under: a file type, an
    ignore file, a default folder)."""

    path: Path
    reason: str
    note: str
    group: str = ""

    @property
    def level(self) -> int:
        """The level of its ``[ingest] skip`` line."""
        return logging.INFO if self.reason in QUIET_REASONS else logging.WARNING


@dataclass
class FileSet:
    files: list[Path]
    skipped: list[SkippedFile]
    relative: dict[Path, str] = field(default_factory=dict)  # a file -> its path inside the folder named
    folders: list[Path] = field(default_factory=list)  # the folders named, as named
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


def _walk(root: Path, ignore: bool = True, as_text: bool = False) -> Iterator[tuple[Path, SkippedFile | None]]:
    """Each non-hidden file under ``root`` with why it is skipped (None: to be read), and each
    ignored folder; directory symlinks are not followed, an ignored folder is not entered."""
    rules_at: dict[Path, Rules] = {root: rules_for(root) if ignore else Rules(root)}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        rules = rules_at.pop(here)
        for f, lines in ignore_files_in(here) if ignore else []:
            rules = rules.adding(here, lines, f.relative_to(root).as_posix())
        kept = []
        for d in sorted(d for d in dirnames if not d.startswith(".")):
            sub = here / d
            if (by := rules.excluding(sub, True)) is not None:
                yield sub, _ignored(sub, by, is_dir=True)
            else:
                kept.append(d)
                rules_at[sub] = rules
        dirnames[:] = kept
        for name in sorted(filenames):
            f = here / name
            if _hidden(f, root) or not f.is_file():
                continue
            if (by := rules.excluding(f, False)) is not None:
                yield f, _ignored(f, by, is_dir=False)
            elif f.suffix.lower() not in SUPPORTED_EXTENSIONS:
                if not as_text:
                    yield f, _unsupported(f)
                else:
                    yield f, (_binary(f) if looks_binary(f) else None)
            elif ignore and f.suffix.lower() in TEMPLATE_SUFFIXES and is_template(f):
                yield f, SkippedFile(f, "template", f"{f}: an HTML template (template tags outside code), not a page")
            else:
                yield f, None


def _ignored(path: Path, by: str, *, is_dir: bool) -> SkippedFile:
    if by == DEFAULTS:
        return SkippedFile(
            path, "ignored", f"{path}/: a build, dependency or cache folder, skipped by default", f"{path.name}/"
        )
    return SkippedFile(path, "ignored", f"{path}{'/' if is_dir else ''}: excluded by {by}", Path(by).name)


def _unsupported(f: Path) -> SkippedFile:
    return SkippedFile(
        f,
        "unsupported",
        f"{f}: unsupported file type {f.suffix or '(none)'!r} (supported: {', '.join(SUPPORTED_EXTENSIONS)}; "
        f"{AS_TEXT_HINT})",
        f.suffix.lower() or "(none)",
    )


def _binary(f: Path) -> SkippedFile:
    return SkippedFile(
        f,
        "binary",
        f"{f}: looks like a binary file, not text (--as-text reads text files only)",
        f.suffix.lower() or "(none)",
    )


def _split(walked: Iterable[tuple[Path, SkippedFile | None]]) -> tuple[list[Path], list[SkippedFile]]:
    files: list[Path] = []
    skipped: list[SkippedFile] = []
    for f, skip in walked:
        if skip is None:
            files.append(f)
        else:
            skipped.append(skip)
    return sorted(files), sorted(skipped, key=lambda s: s.path)


def _named_are_read(skipped: list[SkippedFile], folders: list[Path]) -> list[SkippedFile]:
    """A folder named is read even where another named folder's walk ignored it."""
    named = {p.resolve() for p in folders}
    return [s for s in skipped if not (s.reason == "ignored" and s.path in named)]


def collect_files(
    paths: Iterable[str | Path],
    *,
    protected: Sequence[Path] | None = None,
    ignore: bool = True,
    as_text: bool = False,
) -> FileSet:
    """Files to ingest: named files (which must have a supported extension) and every
    supported, non-hidden file under named folders, sorted, each real file once; under a
    folder, what the ignore rules exclude is skipped (``ignore=False``: no rules). With
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
    folders: list[Path] = []

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
            folders.append(p)
            files, skips = _split(_walk(folder, ignore, as_text))
            skipped.extend(skips)
            for f in files:
                take(f, folder)
        elif p.is_file():
            if p.suffix.lower() not in SUPPORTED_EXTENSIONS and not as_text:
                raise unsupported(p)
            take(p, None)
        else:
            raise ValidationError(str(p), "no such file or folder")
    return FileSet(found, _named_are_read(skipped, folders), relative, folders, as_text)
