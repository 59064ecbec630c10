"""Accounts named on the command line: ACCOUNT_ID and --account take a name or an id, ``maxy
account use`` records the default, ``maxy account create`` says how to use the new account, and
a writing command's summary names the account it wrote to. In-process CLI, real Neo4j and files."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
from maxy.accounts import create_account, validate_account
from maxy.serving.keys import list_api_keys
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.cli_inprocess import maxy
from tests.integration.test_tasks_cli import SPEC  # a task spec the store accepts
from tests.local_http import _free_port
from tests.plugins_fixture.helpers import CLI, ECHO, REPO, child_env, count, text


def _doc(tmp_path: Path) -> Path:
    doc = tmp_path / "named.md"
    doc.write_text("# Named accounts\n\nAn operator picks the account by its name.\n")
    return doc


def _error_lines(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in proc.stderr.splitlines() if line.startswith("error:")]


def test_account_id_and_account_take_a_name_and_everything_downstream_keeps_the_id(
    db, account, data_root: Path, tmp_path: Path
) -> None:
    name = account.ref()["name"]
    env = child_env(data_root, ACCOUNT_ID=name, MAXY_LOG_LEVEL="WARNING")
    short = account.account_id[:8]

    ingested = maxy(["ingest", str(_doc(tmp_path))], env)
    assert ingested.returncode == 0, ingested.stderr
    assert ingested.stdout.strip().endswith(f"in account {name} ({short})"), ingested.stdout
    assert count(db, account.account_id, "KnowledgeDocument") == 1  # stamped with the id, not the name
    assert db.read("MATCH (n:Node {accountId: $name}) RETURN count(n) AS c", name=name)[0]["c"] == 0

    again = json.loads(maxy(["ingest", str(_doc(tmp_path)), "--force", "--json"], env).stdout)
    assert again["account"] == {"id": account.account_id, "name": name}

    # --account by name: export, status, an API key, a site's host
    bare = child_env(data_root, MAXY_LOG_LEVEL="WARNING")
    exported = maxy(["export", "--account", name.upper()], bare)
    assert exported.returncode == 0, exported.stderr
    assert json.loads(exported.stdout.splitlines()[0])["accountId"] == account.account_id
    status = json.loads(maxy(["status", "--json", "--account", name], bare).stdout)
    assert status["account"]["id"] == account.account_id and status["account"]["matchesOnDisk"] is True
    key = maxy(["mcp", "key", "create", "--role", "admin", "--account", name, "--json"], bare)
    assert key.returncode == 0, key.stderr
    assert json.loads(key.stdout)["account"] == {"id": account.account_id, "name": name}
    assert [k.account_id for k in list_api_keys(data_root, account.account_id)] == [account.account_id]
    host = maxy(["sites", "host", "add", "docs.example.com", "--account", name], bare)
    assert (
        host.returncode == 0 and host.stderr.strip() == f"docs.example.com serves the sites of account {name} ({short})"
    )

    # the console link (it reads ACCOUNT_ID as every server does) logs in with that account's key
    console = maxy(["console", "--url", f"http://127.0.0.1:{_free_port()}"], env)
    assert console.returncode == 0, console.stderr
    assert f"as key {json.loads(key.stdout)['keyId']} (admin)" in console.stderr, console.stderr
    assert len(list_api_keys(data_root, account.account_id)) == 1


def test_a_shared_name_is_one_error_line_listing_the_ids_and_nothing_is_written(
    db, make_account, data_root: Path, tmp_path: Path
) -> None:
    first, second = make_account("docs"), make_account("docs")
    ids = sorted([first.account_id, second.account_id])
    env = child_env(data_root, ACCOUNT_ID="docs", MAXY_LOG_LEVEL="WARNING")
    refused = maxy(["ingest", str(_doc(tmp_path))], env)
    assert refused.returncode == 1 and refused.stdout == ""
    assert _error_lines(refused) == [
        f"error: ACCOUNT_ID=docs: 2 accounts are named 'docs' ({ids[0]}, {ids[1]}); use one of these ids "
        "(or rename one in its account.json)"
    ]
    assert count(db, first.account_id, "Node") == count(db, second.account_id, "Node") == 0

    option = maxy(["export", "--account", "docs"], child_env(data_root))
    assert option.returncode == 2 and option.stdout == ""
    assert _error_lines(option) == [
        f"error: --account: docs: 2 accounts are named 'docs' ({ids[0]}, {ids[1]}); use one of these ids "
        "(or rename one in its account.json)"
    ]
    unknown = maxy(["ingest", str(_doc(tmp_path))], dict(env, ACCOUNT_ID="dcos"))
    assert _error_lines(unknown) == [
        f"error: ACCOUNT_ID=dcos matches no account under {data_root / 'accounts'} (by id or name): "
        "the accounts are named 'docs'; use one of these names or an id"
    ]
    by_id = maxy(["ingest", str(_doc(tmp_path))], dict(env, ACCOUNT_ID=first.account_id))
    assert by_id.returncode == 0 and f"in account docs ({first.account_id[:8]})" in by_id.stdout


def _config_env(tmp_path: Path, data_root: Path) -> dict[str, str]:
    """A config folder of its own: `account use` and `account create` write its .env."""
    return child_env(data_root, MAXY_CONFIG_DIR=str(tmp_path / "cfg"))


def test_account_use_records_the_id_as_the_default(tmp_path: Path, data_root: Path) -> None:
    docs = create_account(data_root, "docs")
    shop = create_account(data_root, "My Shop")
    env = _config_env(tmp_path, data_root)
    env_file = tmp_path / "cfg" / ".env"

    used = maxy(["account", "use", "docs"], env)
    assert used.returncode == 0, used.stderr
    assert used.stdout == f"default account: docs ({docs.account_id[:8]})\n" and used.stderr == ""
    assert f"ACCOUNT_ID={docs.account_id}\n" in env_file.read_text()
    listed = maxy(["account", "list"], env).stdout.splitlines()
    assert [line for line in listed if line.startswith("*")] == [f"* docs     {docs.account_id}  {docs.created_at}"], (
        listed
    )
    current = [a["accountId"] for a in json.loads(maxy(["account", "list", "--json"], env).stdout) if a["current"]]
    assert current == [docs.account_id]

    switched = json.loads(maxy(["account", "use", "my shop", "--json"], env).stdout)
    assert switched["account"] == {"id": shop.account_id, "name": "My Shop"}
    assert env_file.read_text().count("ACCOUNT_ID=") == 1 and f"ACCOUNT_ID={shop.account_id}" in env_file.read_text()
    validated = maxy(["account", "validate"], env)
    assert validated.stdout == f"ACCOUNT_ID matches account 'My Shop' ({shop.account_id}) on disk\n"

    create_account(data_root, "docs")
    before = env_file.read_text()
    for value, reason in (("docs", "2 accounts are named 'docs'"), ("nope", "nope matches no account")):
        refused = maxy(["account", "use", value], env)
        assert refused.returncode == 2 and refused.stdout == "" and len(refused.stderr.splitlines()) == 1
        assert refused.stderr.startswith(f"error: NAME_OR_ID: {value}") and reason in refused.stderr
    assert env_file.read_text() == before, "a refused choice changes nothing"

    shadowed = maxy(["account", "use", docs.account_id], dict(env, ACCOUNT_ID=shop.account_id))
    assert shadowed.returncode == 0 and f"ACCOUNT_ID={docs.account_id}" in env_file.read_text()
    assert shadowed.stderr.startswith(f"warning: ACCOUNT_ID={shop.account_id} is set in the environment")


def test_account_create_says_how_to_use_the_new_account(tmp_path: Path, data_root: Path) -> None:
    env = _config_env(tmp_path, data_root)
    first = maxy(["account", "create", "--name", "docs"], env)
    assert first.returncode == 0, first.stderr
    made = validate_account(data_root, "docs")
    assert first.stdout.startswith(f"created account docs ({made.account_id[:8]}) at ")
    assert first.stdout.rstrip().endswith("; it is now the default")
    second = maxy(["account", "create", "--name", "my shop"], env)
    assert second.stdout.rstrip().endswith(
        "; use it with --account 'my shop', ACCOUNT_ID='my shop', or make it the default with "
        "`maxy account use 'my shop'`"
    ), second.stdout
    as_json = json.loads(maxy(["account", "create", "--name", "notes", "--json"], env).stdout)
    assert as_json["default"] is False and as_json["name"] == "notes"
    taken = maxy(["account", "create", "--name", "DOCS"], env)
    assert taken.returncode == 2 and "--allow-duplicate-name" in taken.stderr
    dup = maxy(["account", "create", "--name", "docs", "--allow-duplicate-name"], env)
    dup_id = json.loads(maxy(["account", "list", "--json"], env).stdout)
    newest = max(dup_id, key=lambda a: a["createdAt"])["accountId"]
    assert f"use it with --account {newest}," in dup.stdout, "a shared name is no handle: the id is offered"
    positional = maxy(["account", "create", "wiki", "--json"], env)
    assert json.loads(positional.stdout)["name"] == "wiki", "the name may be given without --name"
    clash = maxy(["account", "create", "wiki2", "--name", "other"], env)
    assert clash.returncode == 2 and "give the name once" in clash.stderr
    again = maxy(["account", "create", "wiki"], env)
    assert again.returncode == 2 and "an account named 'wiki' already exists" in again.stderr


def test_an_account_deleted_by_name_is_found_by_no_name(db, data_root: Path, tmp_path: Path) -> None:
    gone = create_account(data_root, "old")
    create_account(data_root, "kept")
    env = child_env(data_root, MAXY_LOG_LEVEL="WARNING")
    deleted = maxy(["account", "delete", "old"], env)
    assert deleted.returncode == 0, deleted.stderr
    assert deleted.stdout.startswith(f"deleted account old ({gone.account_id[:8]}): 0 node(s) hidden")
    again = maxy(["account", "delete", gone.account_id], env)
    assert again.stdout.startswith(f"account old ({gone.account_id[:8]}) was already deleted at")
    for value in ("old", gone.account_id):
        refused = maxy(["account", "validate"], dict(env, ACCOUNT_ID=value))
        assert refused.returncode == 1 and "matches no account" in refused.stderr and "'kept'" in refused.stderr
        assert f"'old' ({gone.account_id}) is a deleted account" in refused.stderr
    by_name = maxy(["account", "delete", "old"], env)
    assert by_name.returncode == 2 and "NAME_OR_ID: old matches no account" in by_name.stderr
    purged = json.loads(maxy(["account", "purge", "--grace-days", "0", "--yes", "--json"], env).stdout)
    assert purged["accounts"] == [{"id": gone.account_id, "name": "old"}]


def test_the_stdio_server_takes_a_name_in_account_id(db, account, data_root: Path, tmp_path: Path) -> None:
    env = child_env(data_root, ACCOUNT_ID=account.ref()["name"])
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", "serve", ECHO], env=env, cwd=str(REPO))

    async def work() -> object:
        with (tmp_path / "server.log").open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                return await session.call_tool("echo-write", {"name": "named note", "scope": "public"})

    before = count(db, account.account_id, "Note")
    wrote = anyio.run(work)
    assert not wrote.is_error, text(wrote)  # type: ignore[attr-defined]
    assert count(db, account.account_id, "Note") == before + 1
    log = (tmp_path / "server.log").read_text()
    assert f"[graph-health] account-id-env present=true id={account.account_id[:8]}" in log


def test_an_import_that_brings_back_a_taken_name_warns(db, data_root: Path, tmp_path: Path) -> None:
    old = create_account(data_root, "docs")
    env = child_env(data_root, MAXY_LOG_LEVEL="WARNING")
    exported = maxy(["export", "--account", "docs"], env)
    assert exported.returncode == 0, exported.stderr
    (tmp_path / "docs.jsonl").write_text(exported.stdout)
    assert maxy(["account", "delete", "docs", "--purge", "--yes"], env).returncode == 0
    new = create_account(data_root, "docs")  # the name is free again
    imported = maxy(["import", str(tmp_path / "docs.jsonl")], env)
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.startswith(f"imported account docs ({old.account_id[:8]}): 0 node(s)")
    assert imported.stderr == (
        f"warning: another account is named 'docs' ({new.account_id}): pick these accounts by id, "
        "or rename one in its account.json\n"
    )


def test_writing_commands_name_the_account_in_their_summary(db, account, data_root: Path, tmp_path: Path) -> None:
    from maxy.graph.guards import Caller
    from maxy.ingest.identity import attachment_id_for_path
    from maxy.taskstore import TaskStore

    name = account.ref()["name"]
    where = f"account {name} ({account.account_id[:8]})"
    env = child_env(data_root, ACCOUNT_ID=name, MAXY_LOG_LEVEL="WARNING")

    def run(*args: str) -> str:
        proc = maxy(list(args), env)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout + proc.stderr

    two = tmp_path / "two"
    two.mkdir()
    for n in (1, 2):
        (two / f"d{n}.md").write_text(f"# Doc {n}\n\nText number {n}.\n")
    assert run("ingest", str(two)).startswith(f"ingested 2 document(s) into {where}: 2 sections, 2 chunks;")
    att = attachment_id_for_path(two / "d1.md")
    assert run("delete", "--attachment", att).startswith(f"soft-deleted {att} in {where}: ")
    assert run("purge").startswith(f"nothing to purge in {where} (grace period 7 days)")
    assert run("reindex").startswith(f"reindexed 0 node(s) in {where}, 0 failed")

    a = json.loads(maxy(["memory", "write", "--label", "Person", "--prop", "name=Ada Lovelace", "--json"], env).stdout)
    b = json.loads(
        maxy(["memory", "write", "--label", "Person", "--prop", "name=Charles Babbage", "--json"], env).stdout
    )
    linked = run("memory", "write", "--label", "Note", "--prop", "text=met", "--edge", f"RELATED_TO:{a['nodeId']}")
    assert linked.startswith("created: ") and linked.rstrip().endswith(f"[Note] in {where}")
    note = linked.split()[1]
    assert run("memory", "unlink", note, "RELATED_TO", a["nodeId"]).startswith(
        f"removed 1 RELATED_TO relation(s) from {note} to {a['nodeId']} in {where}"
    )
    assert run("memory", "forget", b["nodeId"]).startswith(f"forgot {b['nodeId']} (Person) in {where}; ")

    lines = tmp_path / "chat.jsonl"
    row = {
        "conversation": "c-named",
        "session": "s-named",
        "id": "m1",
        "speaker": "Ada",
        "role": "user",
        "content": "hi",
    }
    lines.write_text(json.dumps(row) + "\n")
    assert run("conversation", "import", str(lines)).startswith(
        f"imported 1 message(s) in 1 conversation(s) into {where}"
    )
    assert f"turn 1 of s-named in {where} (" in run("conversation", "append", "s-named", "again")

    tid = TaskStore(db, Caller(account.account_id), account, "orchestrator", actor="test").create(SPEC)["taskId"]
    moved = run(
        "--quiet", "tasks", "transition", tid, "--to", "spec_review", "--expected-phase", "spec_draft",
        "--expected-version", "1",
    )  # fmt: skip
    assert moved.startswith(f"{tid[:8]}: spec_draft -> spec_review (version 2) in {where}"), moved
    entry = run("memory-agent", "add-entry", "-m", "ada", "--summary", "said hi", "--raw-entry", "hi")
    assert entry.startswith(f"added entry 0 of ada in {where} ("), entry
    assert run("memory-agent", "put-context", "-m", "ada", "--content", "Ada, a user.").startswith(
        f"saved context version 1 of ada in {where}"
    )
    assert run("audit", "prune", "--older-than", "1w").startswith(f"deleted 0 ToolCall(s) of {where} older than 1w")
    key = maxy(["mcp", "key", "create", "--role", "admin"], env)
    assert key.returncode == 0 and f", {where} (shown once;" in key.stderr, key.stderr
    run("agent", "create", "concierge")
    assert run("agent", "delete", "concierge", "--yes") == f"deleted agent concierge of {where}\n"


def test_the_python_api_takes_a_name(db, account, data_root: Path, embedder) -> None:
    from maxy import Memory
    from maxy.config import load_settings

    name = account.ref()["name"]
    with Memory(name, settings=load_settings(DATA_ROOT=data_root), embedder=embedder) as memory:
        assert memory.account.account_id == account.account_id
        written = memory.write(["Note"], {"text": "by name"})
    assert db.read("MATCH (n:Note {nodeId: $id}) RETURN n.accountId AS a", id=written["nodeId"])[0]["a"] == (
        account.account_id
    )
    with Memory.from_env(settings=load_settings(DATA_ROOT=data_root, ACCOUNT_ID=name.upper()), embedder=embedder) as m:
        assert m.account.account_id == account.account_id
