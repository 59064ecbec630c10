"""What ``maxy ingest`` says about the files it left out: one line per reason, with counts.

A folder of twelve images reads ``skipped 12 files of unsupported type (.png 9, .svg 3)``
rather than twelve lines; ``maxy --verbose ingest`` lists each file (its ``[ingest] skip`` line) and
``--json`` keeps every one. A reason with a single file prints that file's own note.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from ..errors import ValidationError
from .files import SUPPORTED_EXTENSIONS, FileSet, SkippedFile  # the types the walk reads

#: reason -> how its summary line names the files
WHAT = {
    "unsupported": "files of unsupported type",
    "binary": "binary files (--as-text reads text only)",
    "ignored": "paths excluded by ignore rules",
    "template": "HTML templates (template tags outside code)",
    "protected-folder": "files in Maxy's configuration or data folder (never ingested)",
    "outside-folder": "links to files outside their folder",
}
LISTED_BY_DEFAULT = frozenset({"protected-folder", "outside-folder"})  # their [ingest] skip lines are warnings
LIST_HINT = "maxy --verbose ingest lists them"
IGNORE_REASONS = frozenset({"ignored", "template"})


def _counts(items: Sequence[SkippedFile]) -> str:
    groups = Counter(s.group for s in items if s.group)
    return ", ".join(f"{group} {n}" for group, n in sorted(groups.items(), key=lambda kv: (-kv[1], kv[0])))


def summary_lines(skipped: Sequence[SkippedFile], *, hint: bool = True) -> list[str]:
    """One line per reason, in the order the reasons first occur: ``skipped: <its note>`` for
    a single file, else ``skipped <n> <what> (<counts by type, ignore file or folder>)``
    and, with ``hint``, how to list them."""
    by_reason: dict[str, list[SkippedFile]] = {}
    for s in skipped:
        by_reason.setdefault(s.reason, []).append(s)
    lines = []
    for reason, items in by_reason.items():
        if len(items) == 1:
            lines.append(f"skipped: {items[0].note}")
            continue
        counts = _counts(items)
        line = f"skipped {len(items)} {WHAT.get(reason, f'files ({reason})')}" + (f" ({counts})" if counts else "")
        lines.append(f"{line}; {LIST_HINT}" if hint and reason not in LISTED_BY_DEFAULT else line)
    return lines


def by_reason(skipped: Sequence[SkippedFile]) -> str:
    """``unsupported 9, ignored 3``: the reasons and their counts, most first."""
    counts = Counter(s.reason for s in skipped)
    return ", ".join(f"{reason} {n}" for reason, n in counts.most_common())


def nothing_found(folders: Sequence[Path], skipped: Sequence[SkippedFile]) -> str:
    """The error when the folders named hold no file to ingest: where, what was left out, the
    types read, and the option that reads what was left out."""
    where = ", ".join(str(f) for f in folders) or "the paths named"
    left_out = f"skipped {len(skipped)}: {by_reason(skipped)}" if skipped else "no file in it"
    hints = [f"supported: {' '.join(SUPPORTED_EXTENSIONS)}"]
    reasons = {s.reason for s in skipped}
    if "unsupported" in reasons:
        hints.append("--as-text reads other files as plain text")
    if reasons & IGNORE_REASONS:
        hints.append("--no-ignore reads ignored files and templates")
    return f"no supported file found in {where} ({left_out}); " + "; ".join(hints)


def require_files(collected: FileSet, paths: Sequence[str | Path]) -> FileSet:
    """``collected`` when it holds a file to ingest; otherwise the :func:`nothing_found`
    sentence as a :class:`ValidationError` of ``paths`` (the tool and the Python API: an
    ingest that reads nothing says so rather than answering with an empty list)."""
    if not collected.files:
        raise ValidationError("paths", nothing_found(collected.folders or [Path(p) for p in paths], collected.skipped))
    return collected
