"""``maxy ingest`` of real folders against the real Neo4j: a folder with nothing to ingest is
an error naming it; what a walk leaves out (unsupported types, ignore rules, build folders,
HTML templates) is one summary line per reason, each file listed under ``maxy --verbose``
and in ``--json``; a path named on the command line is read whatever the rules say."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from maxy.ingest.files import SUPPORTED_EXTENSIONS

from tests.cli_inprocess import maxy as run_maxy

SUPPORTED = "supported: " + " ".join(SUPPORTED_EXTENSIONS)


def maxy(*args: str, account, data_root: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_") and k != "MAXY_DEBUG"}
    env.update(ACCOUNT_ID=account.account_id, DATA_ROOT=str(data_root))
    return run_maxy(args, env)


def put(root: Path, rel: str, text: str) -> Path:
    f = root / rel
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(text)
    return f


def titles(db, account) -> list[str]:
    rows = db.read(
        "MATCH (d:KnowledgeDocument {accountId: $acc}) WHERE d.deletedAt IS NULL RETURN d.title AS t ORDER BY t",
        acc=account.account_id,
    )
    return [r["t"] for r in rows]


def test_a_folder_with_nothing_to_ingest_is_an_error_naming_it(db, account, data_root, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = maxy("ingest", str(empty), account=account, data_root=data_root)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.splitlines() == [f"error: no supported file found in {empty} (no file in it); {SUPPORTED}"]

    images = tmp_path / "images"
    for i in range(12):
        put(images, f"p{i}.{'png' if i < 9 else 'jpg'}", "x")
    proc = maxy("ingest", str(images), account=account, data_root=data_root)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.splitlines() == [
        "skipped 12 files of unsupported type (.png 9, .jpg 3); maxy --verbose ingest lists them",
        f"error: no supported file found in {images} (skipped 12: unsupported 12); {SUPPORTED}; "
        "--as-text reads other files as plain text",
    ]

    data = json.loads(maxy("ingest", str(images), "--json", account=account, data_root=data_root).stdout)
    assert data["ingested"] == 0 and data["skipped"] == 12
    assert data["error"].startswith(f"no supported file found in {images} ")
    assert sorted(Path(d["path"]).name for d in data["documents"] if d["reason"] == "unsupported") == sorted(
        p.name for p in images.iterdir()
    )
    again = maxy("ingest", str(images), "--json", account=account, data_root=data_root)
    assert again.returncode == 1 and "error: no supported file" in again.stderr
    assert titles(db, account) == []


def test_a_docs_project_ingests_its_pages_not_its_theme_build_or_dependencies(db, account, data_root, tmp_path):
    """The layout of an mkdocs project: pages under docs/, theme templates under overrides/, the
    built site/ (in .gitignore), node_modules/ of the tooling."""
    project = tmp_path / "project"
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    put(project, ".gitignore", "site/\n*.draft.md\n")
    put(project, "docs/index.md", "# Ferry times\n\nThe ferry leaves at noon.\n")
    put(project, "docs/setup.md", "# Setting up\n\nInstall the tide tables first.\n")
    put(project, "docs/wip.draft.md", "# Half done\n\nNot yet.\n")
    nav = put(
        project,
        "overrides/partials/nav.html",
        '<nav>{% for item in nav %}<a href="{{ item.url }}">{{ item.title }}</a>{% endfor %}</nav>\n',
    )
    put(project, "overrides/main.html", "{% extends 'base.html' %}{% block content %}{{ super() }}{% endblock %}\n")
    put(project, "site/index.html", "<html><body><h1>Ferry times</h1><p>Built copy.</p></body></html>\n")
    put(project, "node_modules/pkg/README.md", "# pkg\n\nA dependency.\n")
    put(project, "docs/.maxyignore", "setup.md\n")

    proc = maxy("ingest", str(project / "docs"), str(project / "overrides"), account=account, data_root=data_root)
    assert proc.returncode == 0, proc.stderr
    assert titles(db, account) == ["Ferry times"]
    assert proc.stderr.splitlines() == [
        "ingest: 1/1 index.md done",  # stderr is no terminal here: a plain progress line per file
        "skipped 2 paths excluded by ignore rules (.gitignore 1, .maxyignore 1); maxy --verbose ingest lists them",
        "skipped 2 HTML templates (template tags outside code); maxy --verbose ingest lists them",
    ]
    listed = maxy("--verbose", "ingest", str(project), account=account, data_root=data_root)
    assert listed.returncode == 0, listed.stderr
    for path, reason in (
        (project / "site", "ignored"),
        (project / "node_modules", "ignored"),
        (project / "docs" / "wip.draft.md", "ignored"),
        (project / "docs" / "setup.md", "ignored"),
        (nav, "template"),
    ):
        assert f"[ingest] skip reason={reason} path={path} " in listed.stderr, listed.stderr
    assert "lists them" not in listed.stderr, "under --verbose the list is there already"
    data = json.loads(maxy("ingest", str(project), "--json", account=account, data_root=data_root).stdout)
    assert {
        (Path(d["path"]).name, d["reason"]) for d in data["documents"] if d["reason"] in ("ignored", "template")
    } == {
        ("site", "ignored"),
        ("node_modules", "ignored"),
        ("wip.draft.md", "ignored"),
        ("setup.md", "ignored"),
        ("nav.html", "template"),
        ("main.html", "template"),
    }
    assert titles(db, account) == ["Ferry times"]

    # named on the command line, an ignored folder or file is read
    named = maxy(
        "ingest", str(project / "site"), str(project / "docs" / "setup.md"), account=account, data_root=data_root
    )
    assert named.returncode == 0, named.stderr
    assert titles(db, account) == ["Ferry times", "Ferry times", "Setting up"]
    # --no-ignore reads every supported file under the folder
    everything = maxy("ingest", str(project), "--no-ignore", "--json", account=account, data_root=data_root)
    assert everything.returncode == 0, everything.stderr
    read = {
        Path(d["path"]).name
        for d in json.loads(everything.stdout)["documents"]
        if d["reason"] not in ("ignored", "template", "unsupported")  # nav.html is read, and found empty
    }
    assert {"README.md", "wip.draft.md", "nav.html", "main.html", "index.html", "setup.md"} <= read
