"""The specialist tool-drift gate at real server starts (``maxy mcp serve`` over stdio with the
SDK's client, ``maxy serve`` over HTTP) and in ``maxy specialists check|tools``, as subprocesses
against the real Neo4j: refusal with exit 1 and one exact line per defect, a start that passes
with its strip and self-test lines, EXCLUDED_PLUGINS leaving a plugin out of what is served."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.request
from pathlib import Path

import anyio
from maxy.accounts import create_account
from mcp import ClientSession, StdioServerParameters

from tests.cli_inprocess import maxy
from tests.local_http import _free_port
from tests.mcp.inprocess import stdio_inprocess
from tests.plugins_fixture.helpers import CLI, ECHO, REPO, child_env

LIBRARIAN = REPO / "plugins" / "maxy_plugins" / "memory" / "agents" / "librarian.md"


def _bundled(*excluded: str) -> int:
    """How many specialists the first-party plugins ship (those not excluded)."""
    return sum(1 for f in (REPO / "plugins" / "maxy_plugins").glob("*/agents/*.md") if f.parts[-3] not in excluded)


SCOUT = (
    "---\nname: scout\ndescription: Looks around.\n"
    "tools: Read, mcp__plugin_memory_memory__memory-serch, Grepp, mcp__plugin_memory_memory__memory-search\n---\n"
)
PLANNER = (
    "---\nname: planner\ndescription: Plans work.\ntools:\n  - Read\n  - mcp__plugin_work_work__work-create\n"
    "  - mcp__maxy__work-update\n  - mcp__memory__memory-search\n  - mcp__plugin_playwright_playwright__browser_click\n---\n"
)


def _account(data_root: Path, **files: str) -> tuple[str, Path]:
    """An account on disk whose specialists folder holds ``files`` (name -> text)."""
    account = create_account(data_root, "specialists")
    folder = data_root / "accounts" / account.account_id / "specialists" / "agents"
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    return account.account_id, folder


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return maxy([*args], env)


def _drift_lines(folder: Path) -> list[str]:
    scout = folder / "scout.md"
    return [
        f"[mcp] boot-failed reason=specialist-tool-drift specialist=scout tool=mcp__plugin_memory_memory__memory-serch "
        f"drift=unknown-tool-in-plugin path={scout}",
        f"[mcp] boot-failed reason=specialist-tool-drift specialist=scout tool=Grepp drift=malformed path={scout}",
    ]


def _boot_failed(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "boot-failed" in line]


# --- stdio ---------------------------------------------------------------------------------
def test_stdio_server_refuses_drift_and_exits_1(neo4j_ready, data_root: Path) -> None:
    account_id, folder = _account(data_root, **{"scout.md": SCOUT})
    proc = _run(["mcp", "serve"], child_env(data_root, ACCOUNT_ID=account_id))
    assert proc.returncode == 1
    assert _boot_failed(proc.stderr) == _drift_lines(folder)
    assert proc.stderr.splitlines()[-1] == (
        f"error: specialist 'scout' cannot start: 'mcp__plugin_memory_memory__memory-serch': plugin 'memory' serves no "
        f"tool 'memory-serch'; correct it in the tools: line of {folder / 'scout.md'} (`maxy mcp plugins` lists the "
        "tools each plugin serves) (2 defects in all; `maxy specialists check` lists them)"
    )
    assert "startup-self-test" not in proc.stderr
    assert "account-id-env" not in proc.stderr  # refused before the account is opened
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""


def _session(params: StdioServerParameters, errlog: Path) -> set[str]:
    async def run() -> set[str]:
        with errlog.open("w") as err:
            async with stdio_inprocess(params, errlog=err) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                return {t.name for t in (await session.list_tools()).tools}

    return anyio.run(run)


def test_stdio_server_strips_an_excluded_plugin_and_starts(neo4j_ready, data_root: Path, tmp_path: Path) -> None:
    account_id, _ = _account(data_root, **{"planner.md": PLANNER})
    env = child_env(data_root, ACCOUNT_ID=account_id, EXCLUDED_PLUGINS="work")
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", "serve", "all"], env=env, cwd=str(REPO))
    log = tmp_path / "server.log"
    tools = _session(params, log)
    stderr = log.read_text()
    assert "memory-search" in tools and "session-compact" in tools
    assert not {t for t in tools if t.startswith("work-")}  # the excluded plugin is not served
    (loaded,) = [line for line in stderr.splitlines() if line.startswith("[plugins] loaded ")]
    assert loaded.endswith(" excluded=work") and "work" not in loaded.split()[2]
    assert (
        "[mcp] specialist-tool-strip specialist=planner plugin=work "
        "tools=mcp__plugin_work_work__work-create,mcp__maxy__work-update reason=excluded"
    ) in stderr
    self_test = (
        f"[mcp] startup-self-test specialist-tool-drift=ok inspected={_bundled('work') + 1} stripped-specialists=1"
    )
    assert self_test in stderr
    assert "boot-failed" not in stderr and "Traceback" not in stderr


def test_a_public_stdio_server_starts_without_the_gate(neo4j_ready, data_root: Path, tmp_path: Path) -> None:
    """Public servers start one per visitor conversation and never start specialists."""
    account_id, _ = _account(data_root, **{"scout.md": SCOUT})
    env = child_env(data_root, ACCOUNT_ID=account_id, ALLOWED_SCOPES="public", AGENT_SLUG="bot")
    params = StdioServerParameters(
        command=CLI[0], args=[*CLI[1:], "mcp", "serve", "memory", "--role", "public"], env=env, cwd=str(REPO)
    )
    log = tmp_path / "public.log"
    assert "memory-search" in _session(params, log)
    assert "specialist" not in log.read_text()


def test_a_plugin_named_while_excluded_is_refused(data_root: Path) -> None:
    proc = _run(["mcp", "serve", "work"], child_env(data_root, EXCLUDED_PLUGINS="work"))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        "error: PLUGINS: plugin 'work' is excluded by EXCLUDED_PLUGINS: remove it from that setting to load it"
    )


# --- HTTP ----------------------------------------------------------------------------------
def test_http_server_refuses_drift_and_exits_1(neo4j_ready, data_root: Path) -> None:
    account_id, folder = _account(data_root, **{"scout.md": SCOUT})
    proc = _run(["serve", "--port", str(_free_port())], child_env(data_root, ACCOUNT_ID=account_id))
    assert proc.returncode == 1
    assert _boot_failed(proc.stderr) == _drift_lines(folder)
    assert proc.stderr.splitlines()[-1].startswith("error: specialist 'scout' cannot start:")
    assert "Traceback" not in proc.stderr and "mcp-http] serve" not in proc.stderr


def test_http_server_starts_with_its_self_test_line(neo4j_ready, data_root: Path, tmp_path: Path) -> None:
    account_id, _ = _account(data_root, **{"planner.md": PLANNER})
    port = _free_port()
    log = tmp_path / "http.log"
    env = child_env(data_root, ACCOUNT_ID=account_id, EXCLUDED_PLUGINS="work")
    with log.open("w") as err:
        proc = subprocess.Popen(
            [*CLI, "serve", "--port", str(port)], env=env, cwd=REPO, stdin=subprocess.DEVNULL, stderr=err
        )
        try:
            deadline = time.monotonic() + 60
            while True:
                assert proc.poll() is None, log.read_text()
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health/live", timeout=2) as answer:
                        assert json.loads(answer.read()) == {"ok": True}
                        break
                except OSError:
                    assert time.monotonic() < deadline, log.read_text()
                    time.sleep(0.2)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    stderr = log.read_text()
    self_test = (
        f"[mcp] startup-self-test specialist-tool-drift=ok inspected={_bundled('work') + 1} stripped-specialists=1"
    )
    assert self_test in stderr
    assert "[mcp] specialist-tool-strip specialist=planner plugin=work" in stderr
    assert stderr.index("startup-self-test") < stderr.index("[mcp-http] serve")


# --- the command line ------------------------------------------------------------------------
def test_check_lists_every_specialist_and_passes(data_root: Path) -> None:
    echo_user = "---\nname: echoer\ntools: mcp__echo__echo-search, mcp__plugin_echo_echo__echo-write\n---\n"
    account_id, folder = _account(data_root, **{"planner.md": PLANNER, "echoer.md": echo_user})
    env = child_env(data_root, ACCOUNT_ID=account_id, EXCLUDED_PLUGINS="work")
    proc = _run(["specialists", "check", "--module", ECHO], env)
    assert proc.returncode == 0, proc.stderr
    lines = [" ".join(line.split()) for line in proc.stdout.splitlines()]
    assert f"librarian plugin:memory {LIBRARIAN}" in lines
    assert f"planner account:{account_id[:8]} {folder / 'planner.md'}" in lines
    assert "mcp__maxy__memory-search served (memory)" in lines
    assert "mcp__echo__echo-search served (echo)" in lines
    assert "mcp__plugin_work_work__work-create excluded-plugin (work)" in lines
    assert "mcp__plugin_playwright_playwright__browser_click bridge" in lines
    assert "stripped (work is excluded): mcp__plugin_work_work__work-create, mcp__maxy__work-update" in lines
    assert lines[-1] == f"{_bundled('work') + 2} specialist(s) inspected, 1 with stripped tools, 0 defect(s)"
    # the strip line is a warning: shown even at a command's default log level
    assert "[mcp] specialist-tool-strip specialist=planner plugin=work" in proc.stderr

    data = json.loads(_run(["specialists", "check", "--json", "--module", ECHO], env).stdout)
    assert (data["ok"], data["inspected"], data["strippedSpecialists"]) == (True, _bundled("work") + 2, 1)
    assert data["defects"] == []
    (planner,) = [s for s in data["specialists"] if s["name"] == "planner"]
    assert planner["allowedTools"] == [
        "Read",
        "mcp__memory__memory-search",
        "mcp__plugin_playwright_playwright__browser_click",
    ]
    assert [t["class"] for t in planner["tools"]] == [
        "native",
        "excluded-plugin",
        "excluded-plugin",
        "served",
        "bridge",
    ]


def test_check_exits_1_on_drift_and_lists_the_defects(data_root: Path) -> None:
    account_id, folder = _account(data_root, **{"scout.md": SCOUT})
    env = child_env(data_root, ACCOUNT_ID=account_id)
    proc = _run(["specialists", "check"], env)
    assert proc.returncode == 1
    assert _boot_failed(proc.stderr) == _drift_lines(folder)
    assert proc.stderr.splitlines()[-1].startswith("error: specialist 'scout' cannot start:")
    lines = [" ".join(line.split()) for line in proc.stdout.splitlines()]
    assert "Grepp malformed" in lines and "mcp__plugin_memory_memory__memory-search served (memory)" in lines
    assert lines[-1] == f"{_bundled() + 1} specialist(s) inspected, 0 with stripped tools, 2 defect(s)"

    proc = _run(["specialists", "check", "--json"], env)
    data = json.loads(proc.stdout)
    assert proc.returncode == 1 and data["ok"] is False
    assert [(d["tool"], d["drift"]) for d in data["defects"]] == [
        ("mcp__plugin_memory_memory__memory-serch", "unknown-tool-in-plugin"),
        ("Grepp", "malformed"),
    ]


def test_a_link_loop_is_a_defect_not_a_traceback(data_root: Path) -> None:
    account_id, folder = _account(data_root)
    (folder / "loop.md").symlink_to(folder / "loop.md")
    proc = _run(["specialists", "check"], child_env(data_root, ACCOUNT_ID=account_id))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    detail = f"{folder / 'loop.md'} is a symbolic link loop (it leads back to itself): point it at a file in the same folder, or remove it"
    assert _boot_failed(proc.stderr) == [
        f"[mcp] boot-failed reason=specialist-tool-drift specialist=loop tool=none drift=malformed "
        f'path={folder / "loop.md"} detail="{detail}"'
    ]
    assert proc.stderr.splitlines()[-1] == f"error: specialist 'loop' cannot start: {detail}"


def test_tools_gives_a_spawn_its_allowed_tools(data_root: Path) -> None:
    account_id, _ = _account(data_root, **{"planner.md": PLANNER, "scout.md": SCOUT})
    env = child_env(data_root, ACCOUNT_ID=account_id, EXCLUDED_PLUGINS="work")
    proc = _run(["specialists", "tools", "planner"], env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Read,mcp__memory__memory-search,mcp__plugin_playwright_playwright__browser_click\n"
    data = json.loads(_run(["specialists", "tools", "planner", "--json"], env).stdout)
    assert data["stripped"] == {"work": ["mcp__plugin_work_work__work-create", "mcp__maxy__work-update"]}

    unknown = _run(["specialists", "tools", "nobody"], env)
    assert unknown.returncode == 2
    assert unknown.stderr.strip().startswith("error: NAME: no specialist is named 'nobody' (specialists: librarian, ")
    assert "planner, scout" in unknown.stderr
    drifting = _run(["specialists", "tools", "scout"], env)
    assert drifting.returncode == 1 and drifting.stderr.strip().startswith("error: specialist 'scout' cannot start:")
