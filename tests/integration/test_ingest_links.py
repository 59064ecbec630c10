"""Folders are ingested by real path: a symlink leaving the folder, or into Maxy's own folders,
is skipped and listed with its reason; directory links are not followed; the CLI writes with
the pins of its environment."""

from __future__ import annotations

import json
from pathlib import Path

from maxy.config import config_dir, load_settings
from maxy.ingest.files import collect_files, protected_folders

from tests.cli_inprocess import maxy
from tests.plugins_fixture.helpers import child_env


def _tree(tmp: Path) -> tuple[Path, Path]:
    folder, outside, protected = tmp / "folder", tmp / "outside", tmp / "protected"
    for d in (folder / "sub", outside, protected):
        d.mkdir(parents=True)
    (folder / "a.md").write_text("# A\n\nalpha\n")
    (folder / "sub" / "b.txt").write_text("beta\n")
    (outside / "c.md").write_text("# C\n\ngamma\n")
    (protected / "secret.txt").write_text("NEO4J_PASSWORD=hunter2\n")
    (folder / "same-as-a.md").symlink_to(folder / "a.md")  # inside: kept, once
    (folder / "out.md").symlink_to(outside / "c.md")
    (folder / "sub" / "env.txt").symlink_to(protected / "secret.txt")
    (folder / "linked-dir").symlink_to(outside, target_is_directory=True)  # not followed
    return folder, protected


def test_collect_files_judges_every_file_by_its_real_path(tmp_path: Path) -> None:
    folder, protected = _tree(tmp_path)
    found = collect_files([folder], protected=[protected])
    assert found.files == [folder / "a.md", folder / "sub" / "b.txt"]
    assert {(s.path.name, s.reason) for s in found.skipped} == {
        ("out.md", "outside-folder"),
        ("env.txt", "protected-folder"),
    }
    assert all(str(s.path) in s.note for s in found.skipped)
    # a named file is judged by the protected folders only (it was chosen on purpose)
    named = collect_files([folder / "out.md", protected / "secret.txt"], protected=[protected])
    assert named.files == [tmp_path / "outside" / "c.md"]
    assert [(s.path.name, s.reason) for s in named.skipped] == [("secret.txt", "protected-folder")]
    # by default the configuration folder and the data folder are protected
    assert config_dir().resolve() in protected_folders()


def test_cli_ingest_skips_a_link_to_the_config_env_and_writes_with_its_pins(
    db, account, data_root: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    (folder / "notes.md").write_text("# Notes\n\nThe ferry leaves at noon.\n")
    (folder / "passwords.txt").symlink_to(config_dir().resolve() / ".env")
    env = child_env(data_root, ACCOUNT_ID=account.account_id, ALLOWED_SCOPES="public", AGENT_SLUG="ag1")
    env["MAXY_LOG_LEVEL"] = "WARNING"
    proc = maxy(["ingest", str(folder), "--json"], env)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert [(Path(d["path"]).name, d["skipped"], d["reason"]) for d in out["documents"]] == [
        ("passwords.txt", True, "protected-folder"),
        ("notes.md", False, None),
    ]
    assert "Traceback" not in proc.stderr and "[ingest] skip reason=protected-folder" in proc.stderr
    rows = db.read(
        "MATCH (n:Node) WHERE n.accountId = $acc RETURN n.scope AS scope, n.agents AS agents, properties(n) AS p",
        acc=account.account_id,
    )
    assert rows and {(r["scope"], tuple(r["agents"])) for r in rows} == {("public", ("ag1",))}
    password = load_settings().NEO4J_PASSWORD
    assert password and not any(
        password in json.dumps({k: v for k, v in r["p"].items() if k != "embedding"}) for r in rows
    )
