"""What a folder's walk leaves out: the paths ``.gitignore`` and ``.maxyignore`` files exclude,
build, dependency and cache folders, and HTML templates.

The ignore files use git's syntax and meaning. ``pathspec`` (the library black and many
linters use for the job) turns each line into a matcher; the lines that apply in a folder
(those of the enclosing git repository above the folder walked, the folder's own, the nested
ones on the way down) are rebased onto one top folder and kept outermost first, so the last
line matching a path decides, as in git: a deeper file's line wins over an outer one's and,
within a folder, a ``.maxyignore`` line over a ``.gitignore`` one. The walk never enters an
excluded folder, which is how git keeps a path under it out whatever a ``!`` line says.
"""

from __future__ import annotations

import re
from pathlib import Path

from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

#: Folders a walk skips wherever they are: dependencies, build and documentation output,
#: caches and virtual environments (hidden folders, ``.venv``, ``.tox``, ``.git``, are skipped
#: anyway). A ``!name/`` line in a ``.maxyignore`` reads one of them again.
IGNORED_FOLDERS = (
    "node_modules",
    "bower_components",
    "jspm_packages",
    "vendor",
    "site-packages",
    "dist-packages",
    "__pypackages__",
    "__pycache__",
    "venv",
    "build",
    "_build",
    "dist",
    "target",
    "site",
    "_site",
    "htmlcov",
)
IGNORE_FILES = (".gitignore", ".maxyignore")  # in this order: a .maxyignore line wins
DEFAULTS = ""  # the source of the default folders' lines
_FOLDER_MARK = "ps_d"  # the group pathspec's patterns capture the slash after a folder in


def _rebased(line: str, prefix: str) -> str | None:
    """A line of the ignore file in the folder ``prefix`` (``docs/``), as a line of the top
    folder's file: ``draft.md`` -> ``docs/**/draft.md``, ``/a`` and ``a/b`` -> ``docs/a...``."""
    if not line.endswith("\\ "):  # git drops trailing spaces unless escaped
        line = line.rstrip()
    if not line or line.startswith("#"):
        return None
    negated = line.startswith("!")
    body = line[1:] if negated else line
    if prefix:
        body = prefix + (body.lstrip("/") if "/" in body.rstrip("/") else "**/" + body)
    return ("!" if negated else "") + body


class Rules:
    """Every ignore line that applies in one folder, rebased onto ``base``, outermost first."""

    def __init__(
        self,
        base: Path,
        lines: tuple[str, ...] = (),
        sources: tuple[str, ...] = (),
        patterns: tuple[GitIgnoreSpecPattern, ...] | None = None,
    ) -> None:
        self.base = base
        self.lines = lines
        self.sources = sources  # per line: the file it came from (DEFAULTS for the default folders)
        self.patterns = patterns if patterns is not None else tuple(GitIgnoreSpecPattern(line) for line in lines)

    def adding(self, folder: Path, lines: list[str], source: str) -> Rules:
        """These rules and then the lines of an ignore file in ``folder``."""
        rel = folder.relative_to(self.base).as_posix()
        prefix = "" if rel == "." else rel + "/"
        added = tuple(r for r in (_rebased(line, prefix) for line in lines) if r is not None)
        return self.then(Rules(self.base, added, (source,) * len(added)))

    def then(self, later: Rules) -> Rules:
        """These rules followed by ``later`` (same base), whose lines win."""
        return Rules(self.base, self.lines + later.lines, self.sources + later.sources, self.patterns + later.patterns)

    def excluding(self, path: Path, is_dir: bool) -> str | None:
        """Where the line that excludes ``path`` came from, or None when it is not excluded: as
        in git, the last line that matches the path itself decides (``!`` reads it again). A
        walk reaches a path only through folders no line excluded, so a line that matches
        only one of its folders (``!docs/`` for ``docs/b/``) does not count."""
        rel = path.relative_to(self.base).as_posix()
        verdict = None
        for line, pattern, source in zip(self.lines, self.patterns, self.sources, strict=True):
            if pattern.include is None or (not is_dir and line.endswith("/")):
                continue  # a comment, or a folder-only line (``site/``) and a file
            # "docs/**" excludes what is in docs, not docs: "!docs/keep.md" can read a file again
            query = rel + "/" if is_dir and not line.endswith("/**") else rel
            if _matches_itself(pattern, query, len(rel)):
                verdict = source if pattern.include else None
        return verdict


def _matches_itself(pattern: GitIgnoreSpecPattern, query: str, end: int) -> bool:
    """Whether the pattern matches the path, not merely a folder above it (pathspec marks the
    slash after the folder a match ended on)."""
    regex = pattern.regex
    if regex is None:
        return False
    for m in regex.finditer(query):
        if not m.groupdict().get(_FOLDER_MARK) or m.start(_FOLDER_MARK) >= end:
            return True
    return False


def ignore_files_in(folder: Path) -> list[tuple[Path, list[str]]]:
    """The ignore files of ``folder`` with their lines; an unreadable one counts as absent, as in git."""
    found = []
    for name in IGNORE_FILES:
        f = folder / name
        try:
            if f.is_file():
                found.append((f, f.read_text(encoding="utf-8", errors="replace").splitlines()))
        except OSError:
            continue
    return found


def _info_exclude(top: Path) -> list[tuple[Path, list[str]]]:
    """A repository's own exclude file (``.git/info/exclude``): lines that count like a
    ``.gitignore`` at its top, below every ``.gitignore`` of the repository."""
    f = top / ".git" / "info" / "exclude"
    try:
        return [(f, f.read_text(encoding="utf-8", errors="replace").splitlines())] if f.is_file() else []
    except OSError:
        return []


def rules_for(root: Path) -> Rules:
    """The rules in force at ``root`` before its own ignore files: the default folders, then the
    repository's ``.git/info/exclude`` and the ignore files between the enclosing git
    repository's top folder and ``root``, unless they exclude ``root`` itself (a folder named on
    purpose, such as a built ``site/``, is read)."""
    outer = Rules(root)
    for f, lines in _info_exclude(root):
        outer = outer.adding(root, lines, str(f))
    top = next((d for d in root.parents if (d / ".git").exists()), None)
    if top is not None and not (root / ".git").exists():
        outer = Rules(top)
        for f, lines in _info_exclude(top):
            outer = outer.adding(top, lines, str(f))
        for d in [top, *[p for p in reversed(root.parents) if top in p.parents]]:
            for f, lines in ignore_files_in(d):
                outer = outer.adding(d, lines, str(f))
        if outer.excluding(root, True) is not None:
            outer = Rules(root)
    return Rules(outer.base).adding(root, [f"{name}/" for name in IGNORED_FOLDERS], DEFAULTS).then(outer)


_CODE = re.compile(r"<(pre|code|script|style|textarea)\b.*?</\1\s*>", re.S | re.I)
_TEMPLATE_TAG = re.compile(r"\{%-?\s*\w|\{\{-?\s*[\w.#/@>^&!(]")
TEMPLATE_SUFFIXES = frozenset({".html", ".htm"})
TEMPLATE_READ = 256 * 1024  # bytes read to judge a file; a template's tags come early


def is_template(f: Path) -> bool:
    """An HTML file holding template tags outside code (``{% block %}``, ``{{ page.title }}``:
    Jinja, Liquid, Go, Handlebars...): a theme's or site generator's template, not a page.
    Tags shown inside ``<pre>``/``<code>`` (a page about templates) do not count."""
    try:
        with f.open("rb") as fh:
            text = fh.read(TEMPLATE_READ).decode("utf-8", errors="replace")
    except OSError:
        return False  # the parse reports an unreadable file
    return _TEMPLATE_TAG.search(_CODE.sub(" ", text)) is not None
