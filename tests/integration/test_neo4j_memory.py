"""The managed server's heap and page cache on a real server: the start logs the sizes, the JVM
and neo4j.conf get them, a running server keeps the sizes it started with, and a stop and start
sizes an unset one again from the memory available then; the status commands show them."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from maxy.neo4j import Neo4jRuntime, Neo4jStartError
from maxy.neo4j.memory import choose_memory, conf_memory, format_bytes, format_size

from tests.cli_inprocess import maxy
from tests.integration.test_neo4j_runtime import PASSWORD, _run, free_port
from tests.plugins_fixture.helpers import child_env

pytestmark = pytest.mark.slow  # each test starts a Neo4j server of its own (a JVM)


def _memory_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("[neo4j] memory ")]


def _jvm_heap(pid: int) -> str:
    args = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    return next(a.removeprefix("-Xmx") for a in args if a.startswith("-Xmx"))


def test_sizes_are_kept_while_running_and_chosen_again_at_the_next_start(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="maxy")
    home, port = tmp_path / "home", free_port()
    first = Neo4jRuntime(home, port, PASSWORD, heap="512m", pagecache="64m")
    try:
        started = first.start(timeout=180)
        assert _memory_lines(caplog)[-1].startswith("[neo4j] memory heap=512m pagecache=64m available=")
        assert _memory_lines(caplog)[-1].endswith("source=set")
        assert _jvm_heap(started.pid) == "512m"
        status = first.status()["memory"]
        assert (status["heap"], status["pagecache"], status["source"], status["in_effect"]) == (
            "512m",
            "64m",
            "set",
            True,
        )

        # Unset sizes on a running server are the ones it started with: no "older conf" error,
        # whatever the available memory is now.
        unset = Neo4jRuntime(home, port, PASSWORD, heap=None, pagecache=None)
        again = unset.start(timeout=60)
        assert again.already_running and again.pid == started.pid
        kept = unset.status()["memory"]
        assert (kept["heap"], kept["pagecache"], kept["source"]) == ("512m", "64m", "auto")

        # A newly set size does need a restart, and says so.
        with pytest.raises(Neo4jStartError, match="older .*neo4j.conf; stop it and start again"):
            Neo4jRuntime(home, port, PASSWORD, heap="640m", pagecache="64m").start(timeout=60)
        first.stop(timeout=60)

        # The next start sizes the unset heap from the memory available at that start.
        resized = Neo4jRuntime(home, port, PASSWORD, heap=None, pagecache="64m")
        second = resized.start(timeout=180)
        plan = resized.memory()
        assert plan.available is not None and plan.heap == format_size(choose_memory(plan.available)[0])
        assert conf_memory(resized.conf_file.read_text()) == (plan.heap, "64m")
        assert _jvm_heap(second.pid) == plan.heap
        line = _memory_lines(caplog)[-1]
        assert f"heap={plan.heap} pagecache=64m" in line and line.endswith("source=mixed")
        assert _run(resized, "RETURN 1 AS ok") == [{"ok": 1}]
        assert resized.status()["memory"]["in_effect"] is True
    finally:
        Neo4jRuntime(home, port, PASSWORD).stop(timeout=60)


def test_status_commands_show_the_sizes_the_running_server_uses_and_its_files(
    neo4j_ready, account, data_root: Path
) -> None:
    runtime = Neo4jRuntime.from_settings(neo4j_ready)
    heap, pagecache = conf_memory(runtime.conf_file.read_text())
    env = child_env(data_root, ACCOUNT_ID=account.account_id)
    shown = maxy(["neo4j", "status", "--json"], env)
    memory = json.loads(shown.stdout)["memory"]
    assert (memory["heap"], memory["pagecache"], memory["in_effect"]) == (heap, pagecache, True)
    assert memory["source"] in ("auto", "set", "mixed") and memory["available"] > 0
    text = maxy(["neo4j", "status"], env).stdout
    assert f"\nmemory           heap {heap}, page cache {pagecache} ({memory['source']}, " in text
    disk = json.loads(shown.stdout)["disk"]  # the database's files, by the memory that serves them
    assert disk["store"] > 0 and disk["vector_indexes"] > 0 and disk["fulltext_indexes"] > 0
    assert memory["fit"]["paged"] == disk["store"] + disk["native_indexes"]
    assert f"\ndisk             store {format_bytes(disk['store'])} + native indexes " in text
    status = maxy(["status"], env).stdout
    assert f"\nmemory    heap {heap}, page cache {pagecache} (" in status
    assert "\ndisk      store " in status and "(OS file cache); transaction logs " in status
