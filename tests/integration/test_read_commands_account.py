"""Read commands validate ACCOUNT_ID against the accounts on disk, as writers do: once an
account's folder is gone, its nodes are not readable through the CLI any more."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from maxy.accounts import accounts_dir
from maxy.graph.write import Edge, GraphWriter, NodeSpec

from tests.cli_inprocess import maxy
from tests.plugins_fixture.helpers import child_env

READS = [
    ["search", "zanzibar lighthouse", "--expand-hops", "0"],
    ["conversation", "search", "zanzibar lighthouse"],
    ["audit", "tasks", "--kind", "survey"],
    ["audit", "produced", "--conversation", "zanzibar-session"],
]


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return maxy([*args], env, check=False)


@pytest.mark.parametrize("keep_other", [True, False], ids=["another-account-left", "last-account"])
@pytest.mark.parametrize("args", READS, ids=lambda a: " ".join(a[:2]))
def test_read_commands_refuse_an_account_that_is_not_on_disk(
    db, account, make_account, embedder, data_root: Path, args, keep_other
) -> None:
    if keep_other:
        make_account("still-here")
    writer = GraphWriter(db, account, embedder)
    conversation = writer.write(NodeSpec(["Conversation"], {"sessionId": "zanzibar-session", "title": "harbour"}))
    written = writer.write_many(
        [
            NodeSpec(
                ["Note"],
                {"name": "zanzibar lighthouse", "text": "the keeper's log"},
                edges=[Edge("PRODUCED", conversation.node_id, direction="in")],
            ),
            NodeSpec(["Message"], {"content": "zanzibar lighthouse at dusk", "role": "user", "sessionId": "s1"}),
            NodeSpec(["Task"], {"title": "zanzibar lighthouse survey", "kind": "survey", "status": "completed"}),
        ]
    )
    env = child_env(data_root, ACCOUNT_ID=account.account_id, MAXY_LOG_LEVEL="WARNING")
    # search prints the text; audit tasks lists task ids; audit produced lists the produced node
    marker = {"tasks": written[2].node_id, "produced": "zanzibar"}.get(args[1], "zanzibar")
    ok = _run(args, env)
    assert ok.returncode == 0 and marker in ok.stdout, ok.stderr

    shutil.rmtree(accounts_dir(data_root) / account.account_id)  # the account is deleted; its nodes remain
    gone = _run(args, env)
    assert gone.returncode == 1
    assert marker not in gone.stdout + gone.stderr
    errors = [line for line in gone.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "ACCOUNT_ID" in errors[0] and "Traceback" not in gone.stderr
