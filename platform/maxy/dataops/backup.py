"""``maxy backup`` and ``maxy restore``: the managed local server's database, with Neo4j's own
offline tools (``neo4j-admin database dump`` / ``database load``, run from the same jars as the
server: ``java -cp <lib>/* org.neo4j.cli.AdminTool``).

Both need the database offline, so the server is stopped cleanly first and started again after
(a restore always starts it, to check what it loaded). A backup writes ``<name>.dump`` and, beside
it, ``<name>.dump.json`` with the node and relationship counts it was taken at; a restore checks
the archive (``load --info``) before it stops anything, and the counts after it started again.
An external server (``NEO4J_URI`` elsewhere, or ``NEO4J_MANAGED=false``) is refused: it has its
own backup tools, and ``maxy export`` copies one account from any server.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import config_dir
from ..errors import MaxyError
from ..logs import log_line

if TYPE_CHECKING:
    from ..config import Settings
    from ..neo4j.runtime import Neo4jRuntime

ADMIN_TIMEOUT_S = 3600
DEFAULT_DATABASE = "neo4j"


def default_backup_dir() -> Path:
    return config_dir() / "backups"


def admin_command(runtime: Neo4jRuntime, lib: Path, *args: str) -> list[str]:
    """``neo4j-admin <args>`` as the JVM command the server's own jars run."""
    from ..neo4j.runtime import ADMIN_TOOL

    java = runtime.java
    return [
        str(java.path),
        *(["--sun-misc-unsafe-memory-access=allow"] if java.major >= 23 else []),
        "--enable-native-access=ALL-UNNAMED",
        "-cp",
        f"{lib}/*",
        ADMIN_TOOL,
        *args,
    ]


def dump_args(database: str, to_dir: Path) -> list[str]:
    return ["database", "dump", f"--to-path={to_dir}", "--overwrite-destination=true", database]


def load_args(database: str, *, info: bool = False) -> list[str]:
    if info:
        return ["database", "load", "--info", "--from-stdin", database]
    return ["database", "load", "--from-stdin", "--overwrite-destination=true", database]


def managed_runtime(settings: Settings, command: str) -> Neo4jRuntime:
    """The local server maxy runs, or a one-line refusal saying what to use instead."""
    from ..neo4j.runtime import Neo4jRuntime

    if not settings.neo4j_is_managed:
        raise MaxyError(
            f"maxy {command} works only on the local server maxy manages, and NEO4J_URI={settings.NEO4J_URI} "
            f"(NEO4J_MANAGED={settings.NEO4J_MANAGED}) is run outside maxy: use that server's own backups (neo4j-admin database dump on its host, or Aura's "
            "snapshots), or `maxy export` for one account"
        )
    runtime = Neo4jRuntime.from_settings(settings)
    if not runtime.initialised:
        raise MaxyError(f"no managed Neo4j has run in {runtime.home} yet: run `maxy neo4j start` first")
    return runtime


def _run_admin(runtime: Neo4jRuntime, args: list[str], stdin: Any = subprocess.DEVNULL) -> str:
    lib = runtime.lib_dir()
    env = dict(os.environ, NEO4J_HOME=str(runtime.home), NEO4J_CONF=str(runtime.conf_dir))
    proc = subprocess.run(
        admin_command(runtime, lib, *args),
        check=False,
        env=env,
        cwd=runtime.home,
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=ADMIN_TIMEOUT_S,
    )
    output = [ln.strip() for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
    if proc.returncode != 0:
        reason = next((ln for ln in output if not ln.startswith("WARNING:")), "no output")
        raise MaxyError(f"neo4j-admin {' '.join(args[:2])} failed (exit {proc.returncode}): {reason}")
    return "\n".join(output)


def _counts(settings: Settings) -> dict[str, int]:
    from ..db import Database

    with Database(settings) as db:
        row = db.read(
            "CALL () { MATCH (n) RETURN count(n) AS nodes } CALL () { MATCH ()-[r]->() RETURN count(r) AS rels } "
            "RETURN nodes, rels"
        )[0]
    return {"nodes": int(row["nodes"]), "relationships": int(row["rels"])}


def _stop(runtime: Neo4jRuntime) -> None:
    result = runtime.stop()
    if result.was_running and not result.clean:
        raise MaxyError(
            "Neo4j did not stop cleanly (it was killed), so its store cannot be copied offline: "
            "run `maxy neo4j start`, then try again"
        )


def backup(settings: Settings, out_dir: Path | None = None) -> dict[str, Any]:
    """Stop the managed server, dump its database to ``out_dir``, start it again."""
    runtime = managed_runtime(settings, "backup")
    database = settings.NEO4J_DATABASE or DEFAULT_DATABASE
    target_dir = Path(out_dir or default_backup_dir()).expanduser().absolute()
    target_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    was_running = runtime.running_pid() is not None
    counts = _counts(settings) if was_running else None
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = target_dir / f"maxy-{database}-{stamp}.dump"
    work = Path(tempfile.mkdtemp(prefix=".maxy-backup-", dir=target_dir))
    try:
        _stop(runtime)
        _run_admin(runtime, dump_args(database, work))
        os.replace(work / f"{database}.dump", target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if was_running:
            runtime.start()
    if not target.is_file() or target.stat().st_size == 0:
        raise MaxyError(f"neo4j-admin wrote no dump at {target}: see `maxy neo4j logs`")
    info = {
        "file": str(target),
        "bytes": target.stat().st_size,
        "database": database,
        "neo4jVersion": runtime.version,
        "createdAt": datetime.now(UTC).isoformat(),
        "counts": counts,
        "restarted": was_running,
        "ms": round((time.perf_counter() - started) * 1000),
    }
    Path(f"{target}.json").write_text(json.dumps(info, indent=2) + "\n")
    log_line("backup", file=target, bytes=info["bytes"], database=database, restarted=was_running, ms=info["ms"])
    return info


def restore(settings: Settings, dump_file: Path) -> dict[str, Any]:
    """Check the archive, stop the managed server, load it over the database, start, count."""
    runtime = managed_runtime(settings, "restore")
    database = settings.NEO4J_DATABASE or DEFAULT_DATABASE
    source = Path(dump_file).expanduser().absolute()
    if not source.is_file() or source.stat().st_size == 0:
        raise MaxyError(f"{dump_file} is not a dump file (missing or empty): give a file written by `maxy backup`")
    with open(source, "rb") as fh:
        _run_admin(runtime, load_args(database, info=True), stdin=fh)
    expected = _recorded_counts(source)
    started = time.perf_counter()
    try:
        _stop(runtime)
        with open(source, "rb") as fh:
            _run_admin(runtime, load_args(database), stdin=fh)
    finally:
        runtime.start()
    found = _counts(settings)
    info = {
        "file": str(source),
        "database": database,
        "counts": found,
        "expected": expected,
        "ms": round((time.perf_counter() - started) * 1000),
    }
    log_line("restore", file=source, database=database, nodes=found["nodes"], ms=info["ms"])
    if expected is not None and expected != found:
        raise MaxyError(f"the restored database holds {found}, the backup recorded {expected}: check {source}")
    return info


def _recorded_counts(dump_file: Path) -> dict[str, int] | None:
    try:
        data = json.loads(Path(f"{dump_file}.json").read_text())
    except (OSError, ValueError):
        return None
    counts = data.get("counts") if isinstance(data, dict) else None
    return counts if isinstance(counts, dict) else None
