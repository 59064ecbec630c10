"""The managed server's heap and page cache: set by NEO4J_HEAP / NEO4J_PAGECACHE, else chosen from
the memory this machine has available.

Neo4j's memory is heap + page cache + what the operating system keeps. Vector and full-text
indexes are Lucene files that live in the OS file cache, not in the page cache (which holds the
store files), and Maxy's embedder runs in its own processes: so the rule takes a quarter of the
available memory for each and leaves at least half to the OS, Lucene and everything else. Caps keep a
large or shared machine from handing one server most of its memory (several local servers, the
test suite's, may run side by side).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

MIB = 1024**2
GIB = 1024**3

HEAP_MIN = 512 * MIB
HEAP_MAX = 4 * GIB
PAGECACHE_MIN = 256 * MIB
PAGECACHE_MAX = 8 * GIB
SHARE = 0.25  # of the available memory, for the heap and again for the page cache
STEP = 64 * MIB  # chosen sizes are whole multiples of this
# Neo4j's guidance for the OS of a dedicated server; leaving less is logged as a warning.
OS_MIN = 1 * GIB

_SIZE = re.compile(r"^([0-9]+)([kmgt]?)$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1024, "m": MIB, "g": GIB, "t": 1024 * GIB}
_NO_LIMIT = 1 << 60  # cgroup v1 writes "no limit" as a number near 2^63


@dataclass(frozen=True)
class MachineMemory:
    """What the machine (or the cgroup this process runs in) offers, in bytes."""

    total: int
    available: int
    cgroup_limit: int | None = None


@dataclass(frozen=True)
class MemoryPlan:
    """The heap and page cache a server starts with, and where each came from."""

    heap: str
    pagecache: str
    heap_source: str  # "set" (NEO4J_HEAP) or "auto"
    pagecache_source: str
    available: int | None  # bytes; None when the machine's memory could not be read

    @property
    def source(self) -> str:
        """``auto``, ``set``, or ``mixed`` when one size is set and the other chosen."""
        return self.heap_source if self.heap_source == self.pagecache_source else "mixed"

    @property
    def left(self) -> int | None:
        """Bytes of the available memory the heap and page cache leave to everything else."""
        if self.available is None:
            return None
        return self.available - parse_size(self.heap) - parse_size(self.pagecache)

    @property
    def tight(self) -> bool:
        """True when that is less than the 1 GiB Neo4j advises for the OS."""
        return self.left is not None and self.left < OS_MIN

    def as_dict(self) -> dict[str, Any]:
        return dict(asdict(self), source=self.source, left=self.left)

    def describe(self) -> str:
        """``heap 4g, page cache 5g (auto, 21.7 GiB available)``."""
        where = f", {format_bytes(self.available)} available now" if self.available is not None else ""
        return f"heap {self.heap}, page cache {self.pagecache} ({self.source}{where})"


def parse_size(text: str) -> int:
    """Bytes of a size as the JVM and neo4j.conf write it (``512m``, ``4g``, ``1048576``)."""
    match = _SIZE.match(text.strip())
    if not match:
        raise ValueError(f"{text!r} is not a memory size")
    return int(match.group(1)) * _UNITS[match.group(2).lower()]


def format_size(size: int) -> str:
    """A size for -Xmx and neo4j.conf: whole gibibytes as ``4g``, else mebibytes as ``768m``."""
    return f"{size // GIB}g" if size % GIB == 0 else f"{size // MIB}m"


def format_bytes(size: int | None) -> str:
    """A size for people: ``21.7 GiB``, or ``380 MiB`` below 1 GiB; ``unknown`` for None."""
    if size is None:
        return "unknown"
    return f"{size / GIB:.1f} GiB" if abs(size) >= GIB else f"{size / MIB:.0f} MiB"


def _share(available: int, low: int, high: int) -> int:
    return max(low, min(high, int(available * SHARE) // STEP * STEP))


def choose_memory(available: int) -> tuple[int, int]:
    """(heap, page cache) in bytes for a server started with ``available`` bytes free.

    Each is a quarter of the available memory, rounded down to 64 MiB, the heap between 512 MiB
    and 4 GiB, the page cache between 256 MiB and 8 GiB; the rest stays with the OS's file cache
    (Lucene's vector and full-text indexes), the embedder and the other processes."""
    return _share(available, HEAP_MIN, HEAP_MAX), _share(available, PAGECACHE_MIN, PAGECACHE_MAX)


def plan_memory(
    heap: str | None,
    pagecache: str | None,
    machine: MachineMemory | None,
    in_effect: tuple[str | None, str | None] = (None, None),
) -> MemoryPlan:
    """The sizes a server uses: a set size wins; an unset one is the size ``in_effect`` (the conf
    of the server already running), else the one :func:`choose_memory` picks for ``machine``
    (Neo4j's own defaults, 1g and 512m, when the machine's memory could not be read)."""
    available = machine.available if machine is not None else None
    chosen_heap, chosen_cache = choose_memory(available) if available is not None else (GIB, 512 * MIB)
    return MemoryPlan(
        heap=heap or in_effect[0] or format_size(chosen_heap),
        pagecache=pagecache or in_effect[1] or format_size(chosen_cache),
        heap_source="set" if heap else "auto",
        pagecache_source="set" if pagecache else "auto",
        available=available,
    )


def read_machine_memory(
    meminfo: Path = Path("/proc/meminfo"),
    cgroup_root: Path = Path("/sys/fs/cgroup"),
    self_cgroup: Path = Path("/proc/self/cgroup"),
) -> MachineMemory | None:
    """MemTotal and MemAvailable, each capped by the cgroup memory limit when one is set; None
    where there is no ``/proc/meminfo`` (macOS)."""
    try:
        fields = dict(line.split(":", 1) for line in meminfo.read_text().splitlines() if ":" in line)
        total = int(fields["MemTotal"].split()[0]) * 1024
        available = int(fields.get("MemAvailable", fields["MemTotal"]).split()[0]) * 1024
    except (OSError, KeyError, ValueError, IndexError):
        return None
    limit = cgroup_memory_limit(cgroup_root, self_cgroup)
    if limit is not None:
        total, available = min(total, limit), min(available, limit)
    return MachineMemory(total=total, available=available, cgroup_limit=limit)


def cgroup_memory_limit(
    cgroup_root: Path = Path("/sys/fs/cgroup"), self_cgroup: Path = Path("/proc/self/cgroup")
) -> int | None:
    """The lowest memory limit of this process's cgroup and its parents (v2 ``memory.max``, v1
    ``memory.limit_in_bytes``), or None when there is none."""
    candidates: list[Path] = []
    try:
        lines = self_cgroup.read_text().splitlines()
    except OSError:
        lines = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        controllers, path = parts[1].split(","), parts[2].strip().lstrip("/")
        if parts[1] == "":  # v2: one unified hierarchy
            candidates += [d / "memory.max" for d in _with_parents(cgroup_root, path)]
        elif "memory" in controllers:  # v1
            candidates += [d / "memory.limit_in_bytes" for d in _with_parents(cgroup_root / "memory", path)]
    candidates += [cgroup_root / "memory.max", cgroup_root / "memory" / "memory.limit_in_bytes"]
    limits = [value for value in map(_read_limit, dict.fromkeys(candidates)) if value is not None]
    return min(limits) if limits else None


def _with_parents(root: Path, path: str) -> list[Path]:
    parts = [p for p in path.split("/") if p and p != ".."]
    return [root.joinpath(*parts[:n]) for n in range(len(parts), 0, -1)]


def _read_limit(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    if not text.isdigit():  # "max": no limit
        return None
    value = int(text)
    return value if 0 < value < _NO_LIMIT else None


def conf_memory(conf_text: str) -> tuple[str | None, str | None]:
    """(heap, page cache) written in a neo4j.conf, None for either one it does not set."""
    values: dict[str, str] = {}
    for line in conf_text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key.strip()] = value.strip()
    return values.get("server.memory.heap.max_size"), values.get("server.memory.pagecache.size")
