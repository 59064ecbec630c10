"""Which files a folder's walk reads: .gitignore and .maxyignore rules (git itself is the
oracle), the build and dependency folders skipped by default, HTML templates, what a path
named on the command line overrides, and the summary of what was left out."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from maxy.ingest.files import SUPPORTED_EXTENSIONS, collect_files
from maxy.ingest.ignore import IGNORED_FOLDERS, is_template
from maxy.ingest.skipsummary import nothing_found, summary_lines

from tests.hypothesis_profile import examples


def files_of(root: Path, *paths: str | Path, ignore: bool = True) -> list[str]:
    found = collect_files(paths or [root], protected=[], ignore=ignore)
    return sorted(f.relative_to(root).as_posix() for f in found.files)


def put(root: Path, rel: str, text: str = "# T\n\nText.\n") -> Path:
    f = root / rel
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(text)
    return f


# -- git is the oracle for the ignore files ----------------------------------------------
NAMES = ("a", "b", "c", "docs")
PATTERNS = (
    "*.txt",
    "p.md",
    "/p.md",
    "a/",
    "b",
    "docs/q.md",
    "!q.md",
    "!p.md",
    "**/c/",
    "a/**",
    "*/q.md",
    "c/*",
    "!c/p.md",
    "[pq].md",
    "q*",
    "# a comment",
    "",
    "docs/**/p.md",
    "!docs/",
    "/a/b/",
    "*",
    "!*/",
    "!*.md",
    "!b/",
    "**/p.md",
    "/docs",
)
trees = st.fixed_dictionaries(
    {
        "files": st.lists(
            st.tuples(st.lists(st.sampled_from(NAMES), max_size=3), st.sampled_from(("p.md", "q.md", "r.txt"))),
            min_size=1,
            max_size=14,
        ),
        "ignores": st.lists(
            st.tuples(
                st.lists(st.sampled_from(NAMES), max_size=2),
                st.sampled_from((".gitignore", ".maxyignore")),
                st.lists(st.sampled_from(PATTERNS), min_size=1, max_size=4),
            ),
            max_size=4,
        ),
        "start": st.sampled_from(("", "a", "docs")),
    }
)


def git_untracked(top: Path, start: str) -> list[str]:
    """What ``git ls-files --others --exclude-standard`` lists under ``start``: the files git
    would offer to add (each .maxyignore is read as a .gitignore there)."""
    env = {"PATH": os.environ["PATH"], "HOME": str(top), "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    out = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard", "-z", "--", start or "."],
        cwd=top,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted(p for p in out.split("\0") if p and not Path(p).name.startswith("."))


@settings(max_examples=examples(150), deadline=None)
@given(trees)
def test_the_walk_leaves_out_what_git_ignores(tree: dict) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        top = Path(tmp)
        subprocess.run(["git", "init", "-q", str(top)], check=True, env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull})
        for parts, name in tree["files"]:
            put(top, "/".join([*parts, name]))
        gitignores: dict[Path, list[str]] = {}
        for parts, _name, lines in tree["ignores"]:
            (top / Path(*parts)).mkdir(parents=True, exist_ok=True)
            gitignores.setdefault(top / Path(*parts) / ".gitignore", []).extend(lines)
        for f, lines in gitignores.items():  # the oracle reads .gitignore; the walk reads both names
            half = len(lines) // 2
            f.write_text("\n".join(lines[:half]) + "\n")
            (f.parent / ".maxyignore").write_text("\n".join(lines[half:]) + "\n")
        start = tree["start"]
        root = top / start
        if not root.is_dir():
            return
        got = [f"{start}/{p}" if start else p for p in files_of(root)]
        merge_maxyignore(top)
        if start:  # a folder git ignores as a whole is read when named: not the oracle's question
            ignored = subprocess.run(["git", "check-ignore", "-q", "--no-index", start + "/"], cwd=top)
            if ignored.returncode == 0:
                return
        assert got == git_untracked(top, start), (gitignores, start)


def merge_maxyignore(top: Path) -> None:
    """git reads one ignore file name per folder: append each .maxyignore to its .gitignore,
    as the walk reads them (a .maxyignore line comes last, so it wins)."""
    for maxy in top.rglob(".maxyignore"):
        git = maxy.parent / ".gitignore"
        git.write_text((git.read_text() if git.exists() else "") + maxy.read_text())
        maxy.unlink()


def test_an_enclosing_repositorys_gitignore_applies_to_a_folder_inside_it(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("drafts/\n*.tmp.md\n")
    put(tmp_path, "docs/guide.md")
    put(tmp_path, "docs/drafts/idea.md")
    put(tmp_path, "docs/notes.tmp.md")
    assert files_of(tmp_path / "docs") == ["guide.md"]
    outside = tmp_path / "elsewhere"
    (outside / ".git").mkdir(parents=True)  # another repository: the outer rules stop at its top
    put(outside, "x.tmp.md")
    assert files_of(outside) == ["x.tmp.md"]


def test_a_repositorys_info_exclude_counts_below_its_gitignore_files(tmp_path: Path) -> None:
    subprocess.run(
        ["git", "init", "-q", str(tmp_path)], check=True, env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull}
    )
    (tmp_path / ".git" / "info").mkdir(exist_ok=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("scratch/\nkeep.md\n")
    (tmp_path / ".gitignore").write_text("!keep.md\n")  # a .gitignore line wins over the exclude file
    for rel in ("docs/guide.md", "docs/scratch/todo.md", "docs/keep.md", "scratch/top.md"):
        put(tmp_path, rel)
    git = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard"], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    expected = sorted(line for line in git.stdout.splitlines() if line.endswith(".md"))
    assert expected == ["docs/guide.md", "docs/keep.md"]  # git itself is the oracle
    assert files_of(tmp_path) == expected  # the repository's top named
    assert files_of(tmp_path / "docs") == ["guide.md", "keep.md"]  # a folder inside it


# -- default folders, templates, what a named path overrides ----------------------------
def test_build_and_dependency_folders_are_skipped_unless_named(tmp_path: Path) -> None:
    put(tmp_path, "docs/index.md")
    for name in IGNORED_FOLDERS:
        put(tmp_path, f"{name}/README.md")
        put(tmp_path, f"docs/{name}/deep/page.md")
    found = collect_files([tmp_path], protected=[])
    assert [f.relative_to(tmp_path).as_posix() for f in found.files] == ["docs/index.md"]
    skipped = {(s.path.relative_to(tmp_path).as_posix(), s.reason, s.group) for s in found.skipped}
    assert ("node_modules", "ignored", "node_modules/") in skipped
    assert ("docs/site", "ignored", "site/") in skipped
    assert len(skipped) == 2 * len(IGNORED_FOLDERS), "a skipped folder is one entry: it is not entered"
    # named, a default folder is read; so is everything with --no-ignore
    assert files_of(tmp_path, tmp_path / "site") == ["site/README.md"]
    assert files_of(tmp_path, tmp_path / "docs", tmp_path / "docs" / "site") == [
        "docs/index.md",
        "docs/site/deep/page.md",
    ]
    both = collect_files([tmp_path / "docs", tmp_path / "docs" / "site"], protected=[])
    assert tmp_path / "docs" / "site" not in [s.path for s in both.skipped], "read, so not reported as skipped"
    assert len(files_of(tmp_path, ignore=False)) == 1 + 2 * len(IGNORED_FOLDERS)
    # a .maxyignore line reads one again
    (tmp_path / ".maxyignore").write_text("!build/\n")
    assert "build/README.md" in files_of(tmp_path)


def test_an_ignored_file_named_on_its_own_is_read(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("secret-plan.md\n")
    f = put(tmp_path, "secret-plan.md")
    assert files_of(tmp_path) == []
    assert files_of(tmp_path, f) == ["secret-plan.md"]


PAGE_ABOUT_TEMPLATES = (
    "<html><body><h1>Jinja blocks</h1><p>Write a block:</p>"
    "<pre><code>{% block content %}{{ page.title }}{% endblock %}</code></pre>"
    "<p>Inline: <code>{{ x }}</code>.</p></body></html>"
)


def test_html_templates_are_told_from_pages(tmp_path: Path) -> None:
    cases = {
        "partial-nav.html": '<nav>{% for item in nav %}<a href="{{ item.url }}">{{ item.title }}</a>{% endfor %}</nav>',
        "base.html": "<html><head><title>{{ config.site_name }}</title></head><body>{% block content %}{% endblock %}</body></html>",
        "go.html": "<ul>{{ range .Pages }}<li>{{ .Title }}</li>{{ end }}</ul>",
        "handlebars.htm": "<div>{{#each posts}}<p>{{title}}</p>{{/each}}</div>",
        "page.html": "<html><body><h1>Hello</h1><p>Braces { like } these are text.</p></body></html>",
        "about-templates.html": PAGE_ABOUT_TEMPLATES,
        "script.html": "<html><body><p>Hi.</p><script>const t = `{{ x }}`;</script></body></html>",
    }
    for name, text in cases.items():
        put(tmp_path, f"theme/{name}", text)
    templates = {name for name in cases if is_template(tmp_path / "theme" / name)}
    assert templates == {"partial-nav.html", "base.html", "go.html", "handlebars.htm"}
    found = collect_files([tmp_path], protected=[])
    assert sorted(f.name for f in found.files) == ["about-templates.html", "page.html", "script.html"]
    assert {s.path.name for s in found.skipped if s.reason == "template"} == templates
    assert files_of(tmp_path, tmp_path / "theme" / "base.html") == ["theme/base.html"], "named: read"
    assert len(files_of(tmp_path, ignore=False)) == len(cases)


# -- what the command line says about them ------------------------------------------------
def test_one_summary_line_per_reason(tmp_path: Path) -> None:
    for i in range(9):
        put(tmp_path, f"img/p{i}.png", "x")
    for i in range(3):
        put(tmp_path, f"img/v{i}.jpg", "x")
    put(tmp_path, "node_modules/x/README.md")
    (tmp_path / ".gitignore").write_text("*.log.md\n")
    put(tmp_path, "a.log.md")
    put(tmp_path, "b.log.md")
    put(tmp_path, "theme/nav.html", "<nav>{{ nav }}</nav>")
    found = collect_files([tmp_path], protected=[])
    lines = summary_lines(found.skipped)
    assert lines == [
        "skipped 3 paths excluded by ignore rules (.gitignore 2, node_modules/ 1); maxy --verbose ingest lists them",
        "skipped 12 files of unsupported type (.png 9, .jpg 3); maxy --verbose ingest lists them",
        f"skipped: {tmp_path / 'theme' / 'nav.html'}: an HTML template (template tags outside code), not a page",
    ]
    assert summary_lines(found.skipped, hint=False)[1] == "skipped 12 files of unsupported type (.png 9, .jpg 3)"
    assert summary_lines([]) == []


def test_nothing_found_names_the_folder_what_was_skipped_and_the_types(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert nothing_found([empty], []) == (
        f"no supported file found in {empty} (no file in it); supported: {' '.join(SUPPORTED_EXTENSIONS)}"
    )
    put(tmp_path, "imgs/a.png", "x")
    put(tmp_path, "imgs/node_modules/b.md")
    found = collect_files([tmp_path / "imgs"], protected=[])
    message = nothing_found(found.folders, found.skipped)
    assert message.startswith(f"no supported file found in {tmp_path / 'imgs'} (skipped 2: ")
    assert "unsupported 1" in message and "ignored 1" in message
    assert "--as-text" in message and "--no-ignore" in message
