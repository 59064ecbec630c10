"""What a database takes on disk, grouped by the memory that serves it (page cache: store and
native indexes; OS file cache: Lucene's vector and full-text indexes), and the notes that say when
the heap and page cache leave too little for either."""

from __future__ import annotations

from pathlib import Path

from maxy.neo4j.footprint import describe_disk, disk_footprint, memory_fit
from maxy.neo4j.memory import GIB, MIB, MachineMemory, plan_memory


def _file(path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        fh.truncate(size)


def _database(home: Path, name: str = "neo4j") -> None:
    db = home / "data" / "databases" / name
    _file(db / "neostore.nodestore.db", 3 * MIB)
    _file(db / "neostore.propertystore.db.strings", 5 * MIB)
    _file(db / "database_lock", 0)
    _file(db / "schema" / "index" / "range-1.0" / "7" / "index-7", 2 * MIB)
    _file(db / "schema" / "index" / "token-lookup-1.0" / "1" / "index-1", MIB)
    _file(db / "schema" / "index" / "vector-2026.08" / "30" / "_0.vec", 4 * MIB)
    _file(db / "schema" / "index" / "vector-2026.08" / "31" / "_0.vex", MIB)
    _file(db / "schema" / "index" / "fulltext-2.0" / "50" / "_0.tim", 6 * MIB)
    _file(home / "data" / "transactions" / name / "neostore.transaction.db.0", 256 * MIB)


def test_sizes_are_grouped_by_the_memory_that_serves_them(tmp_path: Path) -> None:
    assert disk_footprint(tmp_path) is None  # no database yet
    _database(tmp_path)
    disk = disk_footprint(tmp_path)
    assert disk == {
        "store": 8 * MIB,
        "native_indexes": 3 * MIB,
        "vector_indexes": 5 * MIB,
        "fulltext_indexes": 6 * MIB,
        "transaction_logs": 256 * MIB,
    }
    assert describe_disk(disk) == (
        "store 8 MiB + native indexes 3 MiB (page cache); vector 5 MiB + full-text 6 MiB (OS file cache); "
        "transaction logs 256 MiB"
    )
    _database(tmp_path, "other")
    assert disk_footprint(tmp_path, "other") == disk


def test_data_that_fits_has_no_notes() -> None:
    disk = {"store": 2 * GIB, "native_indexes": GIB // 2, "vector_indexes": GIB, "fulltext_indexes": GIB}
    fit = memory_fit(disk, plan_memory(None, None, MachineMemory(total=16 * GIB, available=16 * GIB)))
    assert fit == {"paged": 2 * GIB + GIB // 2, "lucene": 2 * GIB, "pagecache_wanted": 3 * GIB, "notes": []}


def test_a_small_page_cache_and_a_crowded_os_are_each_one_note() -> None:
    disk = {"store": 5 * GIB, "native_indexes": GIB, "vector_indexes": 3 * GIB, "fulltext_indexes": 2 * GIB}
    plan = plan_memory("2g", "2g", MachineMemory(total=8 * GIB, available=8 * GIB))
    notes = memory_fit(disk, plan)["notes"]
    assert notes == [
        "the page cache (2g) is smaller than the store and its native indexes (6.0 GiB), so reads go to disk: "
        "set NEO4J_PAGECACHE to about 8g (docs/scaling.md), or give the machine more memory",
        "the vector and full-text indexes (5.0 GiB) are larger than the memory left to the OS file cache "
        "(4.0 GiB), so searches read them from disk: lower NEO4J_HEAP or NEO4J_PAGECACHE, or give the machine "
        "more memory (docs/scaling.md)",
    ]
