"""The CLI hook: every installed plugin adds its own ``maxy`` commands through
``register_commands(app)``; the core names no plugin, and a plugin that cannot be imported
costs only its own commands (one warning line on stderr naming it)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import typer
from maxy.plugins.commands import register_plugin_commands
from typer.testing import CliRunner

from tests.cli_inprocess import maxy
from tests.plugins_fixture.helpers import BROKEN, CLI, ECHO, SERVERLESS, child_env


def test_hook_adds_a_plugins_commands_and_a_broken_plugin_costs_only_its_own(capsys) -> None:
    app = typer.Typer(no_args_is_help=True)

    @app.command("core")
    def core() -> None:
        typer.echo("core ok")

    added = register_plugin_commands(app, {"echo": ECHO, "broken": BROKEN, "serverless": SERVERLESS})
    assert added == ["echo"]  # serverless defines no hook, broken cannot be imported
    warning = capsys.readouterr().err.splitlines()
    assert len(warning) == 1, warning
    assert warning[0].startswith(f"warning: plugin 'broken' ({BROKEN})")
    assert "ModuleNotFoundError" in warning[0] and "maxy_test_dependency_that_is_not_installed" in warning[0]
    runner = CliRunner()
    res = runner.invoke(app, ["echo", "hello", "ada"])
    assert res.exit_code == 0 and res.stdout == "hello ada from the echo plugin\n"
    res = runner.invoke(app, ["core"])
    assert res.exit_code == 0 and res.stdout == "core ok\n"


def test_maxy_help_lists_the_session_plugins_command() -> None:
    proc = maxy(["--help"], child_env(Path("/nonexistent")))
    assert proc.returncode == 0, proc.stderr
    assert " session " in proc.stdout and " mcp " in proc.stdout and proc.stderr == ""
    proc = maxy(["session", "--help"], child_env(Path("/nonexistent")))
    assert proc.returncode == 0 and "context" in proc.stdout


def _install_entry_points(root: Path, **plugins: str) -> None:
    """A distribution on ``root`` registering ``plugins`` in the maxy.plugins entry-point group."""
    dist = root / "maxy_test_plugins-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: maxy-test-plugins\nVersion: 0.1\n")
    lines = "".join(f"{name} = {module}\n" for name, module in plugins.items())
    (dist / "entry_points.txt").write_text(f"[maxy.plugins]\n{lines}")


def test_an_installed_plugin_that_cannot_be_imported_leaves_the_cli_working(tmp_path: Path) -> None:
    _install_entry_points(tmp_path / "site", broken=BROKEN, echo=ECHO)
    env = child_env(tmp_path / "data")
    env["PYTHONPATH"] += f":{tmp_path / 'site'}"

    proc = subprocess.run([*CLI, "--help"], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    for command in (" session ", " echo ", " mcp ", " search ", " status "):
        assert command in proc.stdout, command
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"warning: plugin 'broken' ({BROKEN})"), proc.stderr

    proc = subprocess.run([*CLI, "echo", "hello"], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout == "hello world from the echo plugin\n"
    proc = subprocess.run([*CLI, "version"], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("maxy ")
