"""``maxy memory write`` and ``maxy memory search`` as subprocesses: the memory-write and
memory-search functions from the command line, with one-line errors."""

from __future__ import annotations

import json
import subprocess

from tests.cli_inprocess import maxy
from tests.plugins_fixture.helpers import child_env


def test_write_resolve_supersede_and_search_from_the_command_line(account, data_root):
    env = child_env(data_root, ACCOUNT_ID=account.account_id, MAXY_LOG_LEVEL="WARNING")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return maxy(["memory", *args], env, check=False)

    first = run(
        "write", "--label", "Organization", "--prop", "name=Globex Corporation", "--prop", "employees=120", "--json"
    )
    assert first.returncode == 0, first.stderr
    org = json.loads(first.stdout)
    again = run("write", "--label", "Organization", "--prop", "name=globex corp")
    assert (
        again.returncode == 0
        and again.stdout.strip() == f"merged into {org['nodeId']}: {org['nodeId']} [Organization] in {account.label()}"
    )
    assert account.label().startswith("account test-"), "the account by its name and short id"
    assert org["account"] == {"id": account.account_id, "name": account.ref()["name"]}
    old = json.loads(
        run(
            "write", "--label", "Fact", "--prop", "text=Globex sells widgets", "--valid-from", "2020-01-01", "--json"
        ).stdout
    )
    new = run(
        "write",
        "--label",
        "Fact",
        "--prop",
        "text=Globex sells gadgets",
        "--supersede",
        old["nodeId"],
        "--edge",
        f"ABOUT:{org['nodeId']}",
    )
    assert new.returncode == 0 and f"superseded: {old['nodeId']}" in new.stdout
    found = json.loads(run("search", "what does Globex sell", "--label", "Fact", "--json").stdout)["results"]
    assert [h["nodeId"] for h in found] != [] and old["nodeId"] not in [h["nodeId"] for h in found]
    then = json.loads(
        run("search", "what does Globex sell", "--label", "Fact", "--as-of", "2021-01-01", "--json").stdout
    )["results"]
    assert [h["nodeId"] for h in then] == [old["nodeId"]]
    pipeline = maxy(["search", "what does Globex sell", "--json"], env, check=False)
    asked = json.loads(run("search", "what does Globex sell", "--json").stdout)
    assert set(asked) == set(json.loads(pipeline.stdout)) >= {"query", "mode", "warnings", "stats", "results"}
    text = run("search", "Globex Corporation", "--limit", "1")
    assert f"(id: {org['nodeId']})" in text.stdout and "employees: 120" in text.stdout

    bad = run("write", "--label", "Note", "--prop", "oops")
    assert (
        bad.returncode != 0 and "--prop" in bad.stderr and "KEY=VALUE" in bad.stderr and "Traceback" not in bad.stderr
    )
    empty = run("write", "--label", "Note", "--prop", "text=")
    assert empty.returncode == 2 and empty.stderr.strip().endswith("(e.g. name, text or description)")
    assert len(empty.stderr.strip().splitlines()) == 1
