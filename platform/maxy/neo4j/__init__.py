"""A real local Neo4j Community server managed from Python (see docs/neo4j-runtime.md).

Public API::

    find_java(min_major=21) -> JavaInfo
    ensure_neo4j_jars(version) -> Path
    Neo4jRuntime(home, port, password, version, heap, pagecache, java=None)
        .from_settings(settings) / .install() / .start(timeout) / .stop(timeout)
        .status() / .logs(lines, follow)
    ensure_password(settings) -> str
    ensure_running(settings) -> dict

All errors derive from Neo4jRuntimeError and carry an operator-facing message.
"""

from maxy.neo4j.fetch import (
    Neo4jFetchError,
    ensure_neo4j_jars,
    jars_ready,
    neo4j_lib_dir,
    render_pom,
)
from maxy.neo4j.java import (
    JavaInfo,
    JavaNotFoundError,
    MavenNotFoundError,
    Neo4jRuntimeError,
    find_java,
    find_maven,
)
from maxy.neo4j.runtime import (
    DEFAULT_VERSION,
    ExternallyManagedError,
    InstallResult,
    Neo4jAuthError,
    Neo4jRuntime,
    Neo4jStartError,
    PortInUseError,
    ProbeResult,
    StartResult,
    StopResult,
    ensure_password,
    ensure_running,
    probe_bolt,
)

__all__ = [
    "DEFAULT_VERSION",
    "ExternallyManagedError",
    "InstallResult",
    "JavaInfo",
    "JavaNotFoundError",
    "MavenNotFoundError",
    "Neo4jAuthError",
    "Neo4jFetchError",
    "Neo4jRuntime",
    "Neo4jRuntimeError",
    "Neo4jStartError",
    "PortInUseError",
    "ProbeResult",
    "StartResult",
    "StopResult",
    "ensure_neo4j_jars",
    "ensure_password",
    "ensure_running",
    "find_java",
    "find_maven",
    "jars_ready",
    "neo4j_lib_dir",
    "probe_bolt",
    "render_pom",
]
