"""What the command line prints around its results: piped text is never wrapped, the
[component] lines appear with --verbose / LOG_LEVEL and not by default, --quiet leaves only
the error line, --debug / MAXY_DEBUG=1 add the traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from maxy.accounts import create_account

REPO = Path(__file__).resolve().parents[2]
UNKNOWN_ACCOUNT = "33333333-3333-3333-3333-333333333333"


@pytest.fixture()
def env(tmp_path: Path) -> dict[str, str]:
    """A scratch config folder and DATA_ROOT with one account; nothing that reaches Neo4j."""
    config = tmp_path / "config"
    config.mkdir()
    data = tmp_path / "data"
    account = create_account(data, "output")
    drop = {"LOG_LEVEL", "MAXY_LOG_LEVEL", "MAXY_DEBUG", "ACCOUNT_ID", "ALLOWED_SCOPES", "AGENT_SLUG", "COLUMNS"}
    base = {k: v for k, v in os.environ.items() if k not in drop}
    base.update(
        MAXY_CONFIG_DIR=str(config),
        DATA_ROOT=str(data),
        ACCOUNT_ID=account.account_id,
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO / "platform"), os.environ.get("PYTHONPATH")])),
    )
    return base


def maxy(env: dict[str, str], *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "maxy", *args],
        env={**env, **extra},
        cwd=REPO,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def test_piped_output_keeps_each_line_whole(env: dict[str, str]) -> None:
    name = "a name well past eighty columns " * 6
    made = maxy(env, "account", "create", "--name", name.strip(), "--no-default", COLUMNS="80")
    assert made.returncode == 0, made.stderr
    assert len(made.stdout.splitlines()) == 1 and name.strip() in made.stdout
    listed = maxy(env, "account", "list", COLUMNS="80")
    assert [line for line in listed.stdout.splitlines() if name.strip() in line], listed.stdout


def test_log_lines_only_when_asked(env: dict[str, str]) -> None:
    quiet_by_default = maxy(env, "account", "validate")
    assert quiet_by_default.returncode == 0 and quiet_by_default.stderr == ""
    for asked in (maxy(env, "--verbose", "account", "validate"), maxy(env, "account", "validate", LOG_LEVEL="info")):
        assert asked.returncode == 0
        assert "[graph-health] account-id-env present=true" in asked.stderr, asked.stderr
    both = maxy(env, "--quiet", "--verbose", "account", "validate")
    assert both.returncode == 2 and both.stderr.startswith("error: --quiet: cannot be used with --verbose")


def test_a_failure_is_its_one_error_line_and_its_log_line_when_asked(env: dict[str, str]) -> None:
    plain = maxy(env, "account", "validate", ACCOUNT_ID=UNKNOWN_ACCOUNT)
    assert plain.returncode == 1 and len(plain.stderr.splitlines()) == 1
    assert plain.stderr.startswith(f"error: ACCOUNT_ID={UNKNOWN_ACCOUNT} matches no account")
    loud = maxy(env, "--verbose", "account", "validate", ACCOUNT_ID=UNKNOWN_ACCOUNT)
    assert loud.returncode == 1
    assert [line.split()[0] for line in loud.stderr.splitlines()] == ["[graph-health]", "error:"], loud.stderr
    quiet = maxy(env, "--quiet", "account", "validate", ACCOUNT_ID=UNKNOWN_ACCOUNT)
    assert quiet.returncode == 1 and quiet.stderr == plain.stderr


def test_debug_shows_the_traceback_above_the_line(env: dict[str, str]) -> None:
    line = "error: EMBED_DIMENSIONS: 'abc' is not a whole number; set it to the model's vector length, e.g. 384"
    plain = maxy(env, "account", "list", EMBED_DIMENSIONS="abc")
    assert plain.returncode == 2 and plain.stderr.splitlines() == [line]
    for shown in (
        maxy(env, "--debug", "account", "list", EMBED_DIMENSIONS="abc"),
        maxy(env, "account", "list", EMBED_DIMENSIONS="abc", MAXY_DEBUG="1"),
    ):
        assert shown.returncode == 2
        assert shown.stderr.startswith("Traceback (most recent call last):") and "SettingsError" in shown.stderr
        assert shown.stderr.splitlines()[-1] == line


def test_serve_on_a_port_in_use_names_the_flag(env: dict[str, str]) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = maxy(env, "serve", "--port", str(port))
    assert busy.returncode == 1 and busy.stdout == ""
    assert busy.stderr.splitlines() == [
        f"error: --port: cannot listen on 127.0.0.1:{port} (Address already in use); choose another with --port"
    ]
