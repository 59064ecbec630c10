"""What the managed server's database takes on disk, split the way memory serves it.

The page cache holds the store files and the native indexes (range, token lookup, text, point);
Lucene's vector and full-text indexes are read through the OS file cache instead. Comparing the
two groups with the heap and page cache (memory.py) says whether the data fits in memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from maxy.neo4j.memory import MemoryPlan, format_bytes, parse_size

PAGECACHE_HEADROOM = 1.2  # Neo4j's rule of thumb: the store plus 20% for growth


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    total = 0
    for item in path.rglob("*"):
        try:
            if item.is_file() and not item.is_symlink():
                total += item.stat().st_size
        except OSError:  # a file Neo4j removed while we walked
            continue
    return total


def disk_footprint(home: Path, database: str | None = None) -> dict[str, int] | None:
    """Bytes of ``database`` (default ``neo4j``) under the server's ``home``: the store files,
    the native indexes, the vector indexes, the full-text indexes and the transaction logs; None
    before the database exists."""
    name = database or "neo4j"
    db_dir = home / "data" / "databases" / name
    if not db_dir.is_dir():
        return None
    sizes = {"store": 0, "native_indexes": 0, "vector_indexes": 0, "fulltext_indexes": 0}
    for item in db_dir.iterdir():
        if item.is_file() and item.name.startswith("neostore"):
            sizes["store"] += item.stat().st_size
    index_root = db_dir / "schema" / "index"
    for provider in index_root.iterdir() if index_root.is_dir() else ():
        kind = (
            "vector_indexes"
            if provider.name.startswith("vector")
            else "fulltext_indexes"
            if provider.name.startswith("fulltext")
            else "native_indexes"
        )
        sizes[kind] += _size(provider)
    tx_dir = home / "data" / "transactions" / name
    sizes["transaction_logs"] = _size(tx_dir) if tx_dir.is_dir() else 0
    return sizes


def memory_fit(disk: dict[str, int], plan: MemoryPlan) -> dict[str, Any]:
    """Does the data fit: the page cache against the store and native indexes, and the memory
    left to the OS against the Lucene indexes. ``notes`` holds one line per shortfall."""
    paged = disk["store"] + disk["native_indexes"]
    lucene = disk["vector_indexes"] + disk["fulltext_indexes"]
    pagecache = parse_size(plan.pagecache)
    wanted = int(paged * PAGECACHE_HEADROOM)
    notes = []
    if pagecache < paged:
        notes.append(
            f"the page cache ({plan.pagecache}) is smaller than the store and its native indexes "
            f"({format_bytes(paged)}), so reads go to disk: set NEO4J_PAGECACHE to about "
            f"{max(1, -(-wanted // 2**30))}g (docs/scaling.md), or give the machine more memory"
        )
    if plan.left is not None and plan.left < lucene:
        notes.append(
            f"the vector and full-text indexes ({format_bytes(lucene)}) are larger than the memory "
            f"left to the OS file cache ({format_bytes(plan.left)}), so searches read them from disk: "
            "lower NEO4J_HEAP or NEO4J_PAGECACHE, or give the machine more memory (docs/scaling.md)"
        )
    return {"paged": paged, "lucene": lucene, "pagecache_wanted": wanted, "notes": notes}


def describe_disk(disk: dict[str, int]) -> str:
    """``store 1.2 GiB + native indexes 0.1 GiB (page cache); vector 0.4 GiB + full-text 0.6 GiB
    (OS file cache); transaction logs 0.3 GiB``."""
    return (
        f"store {format_bytes(disk['store'])} + native indexes {format_bytes(disk['native_indexes'])} "
        f"(page cache); vector {format_bytes(disk['vector_indexes'])} + full-text "
        f"{format_bytes(disk['fulltext_indexes'])} (OS file cache); transaction logs "
        f"{format_bytes(disk['transaction_logs'])}"
    )
