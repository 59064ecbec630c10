"""The managed server's heap and page cache: the rule that sizes them from the available memory,
set values winning, the machine's memory and cgroup limit as read from /proc and /sys, and the
table the docs print of what the rule picks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from maxy.neo4j.memory import (
    GIB,
    MIB,
    MachineMemory,
    cgroup_memory_limit,
    choose_memory,
    conf_memory,
    format_size,
    parse_size,
    plan_memory,
    read_machine_memory,
)
from maxy.neo4j.runtime import Neo4jRuntime

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("available_gib", "heap", "pagecache"),
    [(1, "512m", "256m"), (2, "512m", "512m"), (4, "1g", "1g"), (16, "4g", "4g"), (24, "4g", "6g"), (256, "4g", "8g")],
)
def test_a_quarter_each_between_floor_and_cap(available_gib: int, heap: str, pagecache: str) -> None:
    chosen = choose_memory(available_gib * GIB)
    assert (format_size(chosen[0]), format_size(chosen[1])) == (heap, pagecache)


@given(st.integers(min_value=0, max_value=2 * 1024 * GIB))
def test_chosen_sizes_leave_half_and_stay_in_bounds(available: int) -> None:
    heap, pagecache = choose_memory(available)
    assert 512 * MIB <= heap <= 4 * GIB and 256 * MIB <= pagecache <= 8 * GIB
    assert heap % (64 * MIB) == 0 and pagecache % (64 * MIB) == 0
    if available >= 2 * GIB:  # above the floors, at least half stays with the OS, Lucene and the embedder
        assert heap + pagecache <= available / 2
    bigger = choose_memory(available + GIB)
    assert bigger[0] >= heap and bigger[1] >= pagecache  # more memory never picks less


def test_set_sizes_win_and_an_unset_one_is_chosen() -> None:
    machine = MachineMemory(total=16 * GIB, available=8 * GIB)
    both = plan_memory("3g", "700m", machine)
    assert (both.heap, both.pagecache, both.source) == ("3g", "700m", "set")
    mixed = plan_memory("3g", None, machine)
    assert (mixed.heap, mixed.pagecache, mixed.heap_source, mixed.pagecache_source) == ("3g", "2g", "set", "auto")
    assert mixed.source == "mixed"
    auto = plan_memory(None, None, machine)
    assert (auto.heap, auto.pagecache, auto.source, auto.available) == ("2g", "2g", "auto", 8 * GIB)
    assert auto.left == 4 * GIB and not auto.tight


def test_an_unset_size_keeps_what_the_running_server_started_with() -> None:
    machine = MachineMemory(total=64 * GIB, available=60 * GIB)
    kept = plan_memory(None, None, machine, in_effect=("1g", "512m"))
    assert (kept.heap, kept.pagecache, kept.source) == ("1g", "512m", "auto")
    assert plan_memory("2g", None, machine, in_effect=("1g", "512m")).heap == "2g"  # a set one still wins


def test_unknown_machine_memory_falls_back_to_neo4j_defaults() -> None:
    plan = plan_memory(None, None, None)
    assert (plan.heap, plan.pagecache, plan.available, plan.left) == ("1g", "512m", None, None)
    assert "unknown" not in plan.describe() and plan.describe().startswith("heap 1g, page cache 512m (auto")


def test_set_sizes_above_what_is_free_are_flagged_tight() -> None:
    plan = plan_memory("4g", "4g", MachineMemory(total=16 * GIB, available=8 * GIB + 512 * MIB))
    assert plan.left == 512 * MIB and plan.tight


def test_sizes_round_trip() -> None:
    assert [parse_size(s) for s in ("512m", "4g", "1024k", "1048576", "2G")] == [
        512 * MIB,
        4 * GIB,
        MIB,
        MIB,
        2 * GIB,
    ]
    assert [format_size(n) for n in (4 * GIB, 3776 * MIB, 512 * MIB)] == ["4g", "3776m", "512m"]
    with pytest.raises(ValueError, match="not a memory size"):
        parse_size("lots")


def _meminfo(tmp_path: Path, total_kib: int, available_kib: int) -> Path:
    path = tmp_path / "meminfo"
    path.write_text(f"MemTotal:       {total_kib} kB\nMemFree:  1 kB\nMemAvailable:   {available_kib} kB\n")
    return path


def test_machine_memory_from_meminfo_without_a_limit(tmp_path: Path) -> None:
    (tmp_path / "cg").mkdir()
    (tmp_path / "self").write_text("0::/\n")
    machine = read_machine_memory(
        _meminfo(tmp_path, 16 * 1024 * 1024, 12 * 1024 * 1024), tmp_path / "cg", tmp_path / "self"
    )
    assert machine == MachineMemory(total=16 * GIB, available=12 * GIB, cgroup_limit=None)


def test_cgroup_v2_limit_of_this_process_or_a_parent_caps_both(tmp_path: Path) -> None:
    root = tmp_path / "cg"
    (root / "user.slice" / "app").mkdir(parents=True)
    (root / "memory.max").write_text("max\n")
    (root / "user.slice" / "memory.max").write_text(f"{6 * GIB}\n")
    (root / "user.slice" / "app" / "memory.max").write_text("max\n")
    (tmp_path / "self").write_text("0::/user.slice/app\n")
    assert cgroup_memory_limit(root, tmp_path / "self") == 6 * GIB
    machine = read_machine_memory(_meminfo(tmp_path, 32 * 1024 * 1024, 20 * 1024 * 1024), root, tmp_path / "self")
    assert machine == MachineMemory(total=6 * GIB, available=6 * GIB, cgroup_limit=6 * GIB)
    assert plan_memory(None, None, machine).heap == "1536m"


def test_cgroup_v1_limit_and_its_no_limit_value(tmp_path: Path) -> None:
    root = tmp_path / "cg"
    (root / "memory" / "docker" / "abc").mkdir(parents=True)
    (root / "memory" / "memory.limit_in_bytes").write_text("9223372036854771712\n")  # v1's "no limit"
    (tmp_path / "self").write_text("5:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n")
    assert cgroup_memory_limit(root, tmp_path / "self") is None
    (root / "memory" / "docker" / "abc" / "memory.limit_in_bytes").write_text(f"{3 * GIB}\n")
    assert cgroup_memory_limit(root, tmp_path / "self") == 3 * GIB


def test_no_meminfo_means_unknown(tmp_path: Path) -> None:
    assert read_machine_memory(tmp_path / "absent", tmp_path, tmp_path / "absent-too") is None


def test_this_machine_is_read() -> None:
    machine = read_machine_memory()
    if Path("/proc/meminfo").is_file():
        assert machine is not None and 0 < machine.available <= machine.total


def test_the_conf_holds_the_plan_and_reads_back(tmp_path: Path) -> None:
    runtime = Neo4jRuntime(tmp_path / "home", 7999, "password", heap="768m", pagecache=None)
    text = runtime.render_conf()
    assert "server.memory.heap.initial_size=768m\nserver.memory.heap.max_size=768m\n" in text
    assert conf_memory(text) == ("768m", runtime.pagecache)
    assert runtime.memory().heap_source == "set" and runtime.memory().pagecache_source == "auto"
    assert conf_memory("dbms.usage_report.enabled=false\n") == (None, None)


def _doc_table(page: str) -> list[list[str]]:
    text = (REPO / "docs" / page).read_text(encoding="utf-8")
    match = re.search(r"^\| available at start \|.*?\n\|[-| ]+\|\n((?:\|.*\n)+)", text, re.M)
    assert match, f"docs/{page} has no table of the sizes the rule picks"
    return [
        [cell.strip().strip("`") for cell in row.strip().strip("|").split("|")] for row in match.group(1).splitlines()
    ]


@pytest.mark.parametrize("page", ["neo4j-runtime.md", "scaling.md"])
def test_the_docs_table_is_what_the_rule_picks(page: str) -> None:
    rows = _doc_table(page)
    assert [row[0] for row in rows] == ["2 GiB", "4 GiB", "8 GiB", "16 GiB", "24 GiB", "64 GiB"]
    for row in rows:
        available = int(row[0].split()[0]) * GIB
        heap, pagecache = choose_memory(available)
        left = (available - heap - pagecache) / GIB
        assert row[1:4] == [format_size(heap), format_size(pagecache), f"{left:g} GiB"], row


def test_settings_take_a_size_leave_blank_for_auto_and_refuse_zero() -> None:
    from maxy.config import load_settings
    from maxy.errors import SettingsError

    assert load_settings(NEO4J_HEAP=" 2g ", NEO4J_PAGECACHE="").NEO4J_HEAP == "2g"
    assert load_settings(NEO4J_PAGECACHE="").NEO4J_PAGECACHE is None
    with pytest.raises(SettingsError, match=r"^NEO4J_HEAP: '0g' is zero; set it to a size such as 1g"):
        load_settings(NEO4J_HEAP="0g")


GOLDEN_CONF = """\
# Generated by maxy (maxy/neo4j/runtime.py); edits are overwritten on the next start.
# Put extra settings in {home}/conf/neo4j-extra.conf; they are appended below.
server.default_listen_address=127.0.0.1
server.bolt.enabled=true
server.bolt.listen_address=127.0.0.1:7999
server.http.enabled=false
server.https.enabled=false
dbms.security.auth_enabled=true
server.directories.data={home}/data
server.directories.logs={home}/logs
server.directories.plugins={home}/plugins
server.directories.run={home}/run
server.directories.import={home}/import
server.memory.heap.initial_size=768m
server.memory.heap.max_size=768m
server.memory.pagecache.size=256m
dbms.usage_report.enabled=false
db.tx_log.rotation.retention_policy=2 days 500M
"""


def test_the_generated_conf_is_word_for_word_what_running_servers_were_started_with(tmp_path: Path) -> None:
    # A running server whose conf differs from what Maxy renders is asked to restart: any change
    # here, even to a comment, makes every installed server refuse the next command until then.
    runtime = Neo4jRuntime(tmp_path / "home", 7999, "password", heap="768m", pagecache="256m")
    assert runtime.render_conf() == GOLDEN_CONF.format(home=runtime.home)
