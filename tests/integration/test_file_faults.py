"""File-system faults through the real ``maxy`` command line: a read-only or full folder, a
file where a folder belongs, a ``.env`` that is not UTF-8, a truncated account.json. Each is
one line naming the path and the fix, exit 1, and leaves nothing half-written.

Read-only and full folders are real mounts (a read-only bind, a tmpfs filled to the last
byte) made in a private mount namespace of the command's own process (``unshare``), so
nothing outside that one process sees them.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from maxy.accounts import create_account
from maxy.config import config_dir, env_file

from tests.cli_inprocess import maxy as run_maxy

REPO = Path(__file__).resolve().parents[2]
UNSHARE = shutil.which("unshare")

# $0 is the folder, "$@" the command
READ_ONLY = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
FULL = (
    'keep=$(mktemp -d) && cp -a "$0"/. "$keep"/ && mount -t tmpfs -o size=1m tmpfs "$0" && cp -a "$keep"/. "$0"/ '
    '&& { dd if=/dev/zero of="$0/.fill" bs=4k 2>/dev/null; true; } && exec "$@"'
)


def _config(tmp_path: Path) -> Path:
    """A config folder holding the real server's settings (password, URI), without an account."""
    folder = tmp_path / "config"
    folder.mkdir()
    real = env_file()
    lines = real.read_text().splitlines() if real.is_file() else []
    kept = [ln for ln in lines if ln.split("=", 1)[0].strip() not in ("ACCOUNT_ID", "DATA_ROOT")]
    (folder / ".env").write_text("\n".join(kept) + "\n")
    return folder


def maxy(
    *args: str, config: Path, data: Path, fault: tuple[str, Path] | None = None, **extra: str
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("ACCOUNT_ID", "DATA_ROOT", "MAXY_DEBUG")}
    env.update(MAXY_CONFIG_DIR=str(config), DATA_ROOT=str(data), **extra)
    if fault is None and "neo4j" not in args:  # a Neo4j of its own, or a mount fault: a real process
        return run_maxy(args, env)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "platform"), env.get("PYTHONPATH")]))
    cmd = [sys.executable, "-m", "maxy.cli", *args]
    if fault is not None:
        assert UNSHARE, "unshare (util-linux) is needed for the mount faults"
        script = {"ro": READ_ONLY, "full": FULL}[fault[0]]
        cmd = [UNSHARE, "--user", "--map-root-user", "--mount", "sh", "-c", script, str(fault[1]), *cmd]
    return subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def one_error(proc: subprocess.CompletedProcess[str], *needles: str, codes: tuple[int, ...] = (1,)) -> str:
    """The command failed (exit 1) with one ``error:`` line holding every needle."""
    assert proc.returncode in codes, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1, proc.stderr
    for needle in needles:
        assert needle in errors[0], (needle, errors[0])
    return errors[0]


def account_files(data: Path) -> list[Path]:
    return sorted((data / "accounts").glob("*/*")) if (data / "accounts").is_dir() else []


@pytest.fixture()
def config(tmp_path: Path) -> Path:
    return _config(tmp_path)


@pytest.fixture()
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    return folder


# -- read-only ----------------------------------------------------------------------------
def test_read_only_config_folder_refuses_account_create_and_leaves_no_account(config, data):
    proc = maxy("account", "create", "--name", "shop", "--default", config=config, data=data, fault=("ro", config))
    one_error(proc, f"{config / '.env'}", "read-only file system", "MAXY_CONFIG_DIR")
    assert account_files(data) == []  # the account it could not record is not left behind


def test_read_only_data_folder_refuses_account_and_key_create(config, data):
    account = create_account(data, "shop")
    proc = maxy("account", "create", "--name", "other", "--no-default", config=config, data=data, fault=("ro", data))
    one_error(proc, str(data / "accounts"), "read-only file system", "DATA_ROOT")
    proc = maxy(
        "mcp", "key", "create", "--role", "admin", "--account", account.account_id, config=config, data=data,
        fault=("ro", data),
    )  # fmt: skip
    one_error(
        proc, str(account.path.parent / ".api-keys.lock"), "read-only file system", "DATA_ROOT"
    )  # the lock comes first


# -- full ---------------------------------------------------------------------------------
def test_full_data_folder_is_named_and_nothing_half_written(config, data):
    account = create_account(data, "shop")
    before = account_files(data)
    proc = maxy("account", "create", "--name", "other", "--no-default", config=config, data=data, fault=("full", data))
    one_error(proc, "the disk holding it is full: free some space", "DATA_ROOT")
    proc = maxy(
        "mcp", "key", "create", "--role", "admin", "--account", account.account_id, config=config, data=data,
        fault=("full", data),
    )  # fmt: skip
    one_error(proc, str(account.path.parent / "api-keys.json"), "is full")
    assert account_files(data) == before  # (the tmpfs is gone with the process; the real folder never changed)


def test_full_config_folder_refuses_account_create(config, data):
    proc = maxy("account", "create", "--name", "shop", "--default", config=config, data=data, fault=("full", config))
    one_error(proc, str(config / ".env"), "is full")
    assert account_files(data) == []


# -- a file where a folder belongs --------------------------------------------------------
def test_data_root_that_is_a_file(config, tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    # a DATA_ROOT that names a file may be refused as a bad setting (exit 2) before any command runs
    for command in (
        ("account", "create", "--name", "shop"),
        ("mcp", "key", "create", "--role", "admin", "--account", str(uuid.uuid4())),
    ):
        line = one_error(maxy(*command, config=config, data=blocker), str(blocker), "DATA_ROOT", codes=(1, 2))
        assert "is a file" in line
    assert blocker.read_text() == "x"


# -- a .env that is not UTF-8 -------------------------------------------------------------
@pytest.mark.parametrize(
    "command",
    [
        ("account", "create", "--name", "shop"),
        ("mcp", "key", "create", "--role", "admin"),
        ("setup", "--skip-neo4j"),
        ("neo4j", "start"),  # even with the server running: the settings are read first
    ],
    ids=lambda c: " ".join(c[:2]),
)
def test_env_file_that_is_not_utf8(config, data, command):
    env = config / ".env"
    env.write_bytes(env.read_bytes() + b"NOTE=caf\xe9\n")  # Latin-1, as an old editor saves it
    one_error(maxy(*command, config=config, data=data), f"{env} is not UTF-8 text", "save it as UTF-8")
    assert account_files(data) == []


# -- account.json -------------------------------------------------------------------------
def test_truncated_account_json_is_named(config, data):
    healthy = create_account(data, "healthy")
    broken = create_account(data, "broken")
    text = broken.path.read_text()
    broken.path.write_text(text[: len(text) // 2])
    rel = f"accounts/{broken.account_id}/account.json: not valid JSON (line"
    # its own id: the file is named
    one_error(
        maxy("account", "validate", config=config, data=data, ACCOUNT_ID=broken.account_id), rel, "fix or remove it"
    )
    # another id that matches nothing: the unreadable file is named beside "no such account"
    one_error(maxy("account", "validate", config=config, data=data, ACCOUNT_ID=str(uuid.uuid4())), rel)
    healthy.path.unlink()
    healthy.path.parent.rmdir()
    line = one_error(maxy("account", "validate", config=config, data=data, ACCOUNT_ID=str(uuid.uuid4())), rel)
    assert "no readable account" in line


# -- other folders ------------------------------------------------------------------------
def test_mcp_config_out_into_a_missing_folder_is_refused(config, data, tmp_path):
    account = create_account(data, "shop")
    target = tmp_path / "nowhere" / "deeper" / "x.json"
    proc = maxy("mcp", "config", "--out", str(target), config=config, data=data, ACCOUNT_ID=account.account_id)
    one_error(proc, f"the folder {target.parent} does not exist", "--out")
    assert not (tmp_path / "nowhere").exists()


def test_neo4j_logs_without_a_log_says_where_it_looked(config, data):
    proc = maxy("neo4j", "logs", config=config, data=data)
    one_error(proc, str(config / "neo4j" / "logs" / "console.log"), "maxy neo4j start")


def test_neo4j_start_on_a_read_only_config_folder_reports_the_running_server(neo4j_ready, tmp_path):
    """The shared server's own config folder, read-only for this one command: start finds the
    server running, writes nothing and installs nothing."""
    if not neo4j_ready.neo4j_is_managed:
        pytest.fail("this test needs the managed local server the set-up starts")
    home = config_dir()
    proc = maxy("--verbose", "neo4j", "start", config=home, data=neo4j_ready.data_root, fault=("ro", home))
    assert proc.returncode == 0, proc.stderr
    assert "already running" in proc.stdout and "Traceback" not in proc.stderr
    assert "[neo4j] start" in proc.stderr and "already-running=true" in proc.stderr  # the lines are on
    assert "[neo4j] install" not in proc.stderr


@pytest.mark.slow
def test_neo4j_start_installs_once_when_it_launches(tmp_path, data):
    """A second server of its own (own folder, own port): the first start installs once, the
    second finds it running and installs nothing."""
    config = tmp_path / "own-server"
    config.mkdir()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    own = {
        "NEO4J_URI": f"bolt://127.0.0.1:{port}",
        "NEO4J_PASSWORD": uuid.uuid4().hex,
        "NEO4J_HEAP": "256m",
        "NEO4J_PAGECACHE": "64m",
    }
    (config / ".env").write_text("".join(f"{k}={v}\n" for k, v in own.items()))
    # The same values in the environment too: a test run pointed at its server by NEO4J_URI
    # would otherwise hand that address to this one (the environment wins over .env).
    try:
        first = maxy("--verbose", "neo4j", "start", config=config, data=data, **own)
        assert first.returncode == 0, first.stderr
        assert first.stderr.count("[neo4j] install") == 1, first.stderr
        second = maxy("--verbose", "neo4j", "start", config=config, data=data, **own)
        assert second.returncode == 0 and "already running" in second.stdout, second.stderr
        assert "[neo4j] install" not in second.stderr
    finally:
        stopped = maxy("neo4j", "stop", config=config, data=data, **own)
        assert stopped.returncode == 0, stopped.stderr


def test_neo4j_start_on_a_read_only_folder_without_a_server_is_one_line(config, data):
    proc = maxy(
        "neo4j", "start", config=config, data=data, fault=("ro", config), NEO4J_URI="bolt://127.0.0.1:7499",
        NEO4J_MANAGED="true",
    )  # fmt: skip
    one_error(proc, f"cannot write {config / 'neo4j'}", "read-only file system")


def test_account_create_with_a_taken_name_is_refused_unless_allowed_then_warns(config, data):
    first = create_account(data, "shop")
    refused = maxy("account", "create", "--name", "Shop", "--no-default", "--json", config=config, data=data)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.startswith(f"error: --name: an account named 'shop' already exists ({first.account_id})")
    assert "--allow-duplicate-name" in refused.stderr and len(refused.stderr.splitlines()) == 1
    assert [p.name for p in (data / "accounts").iterdir()] == [first.account_id], "nothing was created"
    proc = maxy(
        "account", "create", "--name", "Shop", "--no-default", "--allow-duplicate-name", "--json", config=config,
        data=data,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    made = json.loads(proc.stdout)
    assert made["accountId"] != first.account_id
    warning = [ln for ln in proc.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warning) == 1 and first.account_id in warning[0] and "'Shop'" in warning[0]
