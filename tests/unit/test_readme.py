"""The reference pages stay complete: every command of ``maxy`` (plugins' included) has a row in
docs/cli.md's command table, with each of its options, and every row a command; every setting
and every environment variable the code reads is in docs/configuration.md; every page of docs/
is listed in the README, which stays a front door (at most 200 lines); and the conversation
example of docs/cli.md imports."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import typer
from maxy.cli import app
from maxy.config import Settings
from maxy.conversations.importing import parse_message

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
CLI = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
CONFIGURATION = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")


def section(title: str, text: str = README) -> str:
    """The text of the ``## title`` section of ``text`` (the README), up to the next ``## ``."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match, f"no '## {title}' section"
    return match.group(1)


def commands_table() -> str:
    """docs/cli.md up to its conversation format: the command table and what it says of them."""
    return CLI.split("## Conversation JSONL")[0]


def test_the_readme_is_a_front_door() -> None:
    assert len(README.splitlines()) <= 200
    for heading in ("## Two commands", "## Connect an agent", "## Your own documents, searched", "## Documentation"):
        assert heading in README


def command_paths(command: Any, prefix: tuple[str, ...] = ("maxy",)) -> set[str]:
    """Every leaf command of the click tree typer builds, as ``maxy group command``."""
    children = getattr(command, "commands", None)
    if children is None:
        return {" ".join(prefix)}
    found: set[str] = set()
    for name, child in children.items():
        if not getattr(child, "hidden", False):
            found |= command_paths(child, (*prefix, name))
    return found


def test_every_command_has_a_row_and_every_row_a_command() -> None:
    commands = command_paths(typer.main.get_command(app))
    rows = set(re.findall(r"^\| `(maxy [a-z0-9 -]+?)` \|", commands_table(), re.M))
    assert len(commands) > 30  # the tree was walked, plugin commands included
    assert "maxy session context" in commands
    assert sorted(commands - rows) == [], "commands without a row in docs/cli.md"
    assert sorted(rows - commands) == [], "rows in docs/cli.md for commands that do not exist"


def environment_names() -> set[str]:
    """The variables the code and the installer read besides ``Settings``: literal names given to
    ``os.environ``, names held in ``*_ENV`` / ``ENV_VAR`` constants, every ``MAXY_*`` literal, and
    the installer's ``${NAME:-default}``."""
    names: set[str] = set()
    for path in [*(REPO / "platform").rglob("*.py"), *(REPO / "plugins").rglob("*.py")]:
        text = path.read_text(encoding="utf-8")
        names |= set(re.findall(r"environ(?:\.get\(|\[)\"([A-Z][A-Z0-9_]+)\"", text))
        names |= set(re.findall(r"^[A-Z_]*(?:_ENV|ENV_VAR) = \"([A-Z][A-Z0-9_]+)\"", text, re.M))
        names |= set(re.findall(r"\"(MAXY_[A-Z0-9_]*[A-Z0-9])\"", text))
    for path in (REPO / "installer").glob("*.sh"):  # ${NAME:-default}: what the scripts read
        names |= set(re.findall(r"\$\{([A-Z][A-Z0-9_]+):-", path.read_text(encoding="utf-8")))
    return names


def test_every_setting_and_variable_is_in_the_configuration_section() -> None:
    configuration = CONFIGURATION
    documented = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", configuration))
    settings = set(Settings.model_fields)
    assert {"NEO4J_URI", "ACCOUNT_ID", "MAXY_GS_HYDE"} <= settings
    read = environment_names()
    assert {"MAXY_CONFIG_DIR", "MAXY_LOG_LEVEL", "MAXY_CHUNK_MAX_CHARS", "MAXY_SKIP_DEMO"} <= read
    assert sorted(settings - documented) == [], "Settings fields missing from docs/configuration.md"
    assert sorted(read - documented) == [], "environment variables missing from docs/configuration.md"


def test_the_conversation_example_is_a_valid_import() -> None:
    block = re.search(r"```json\n(.*?)```", section("Conversation JSONL", CLI), re.S)
    assert block, "the Conversation JSONL section has no example"
    lines = [line for line in block.group(1).splitlines() if line.strip()]
    messages = [parse_message(json.loads(line), f"docs/cli.md:{n}") for n, line in enumerate(lines, start=1)]
    assert len(messages) >= 2 and all(m.timestamp for m in messages)
    fields = set(re.findall(r"^\| `([a-z_]+)` \|", section("Conversation JSONL", CLI), re.M))
    assert set().union(*(json.loads(line) for line in lines)) <= fields  # each example field is described


def test_every_doc_is_listed() -> None:
    listed = set(re.findall(r"^\| `(docs/[a-z0-9-]+\.md)` \|", section("Documentation"), re.M))
    pages = {f"docs/{p.name}" for p in (REPO / "docs").glob("*.md")}
    assert sorted(pages - listed) == [], "docs/ pages missing from README's Documentation table"
    assert sorted(listed - pages) == [], "README's Documentation table lists pages that do not exist"


def test_every_option_is_in_its_commands_row() -> None:
    rows = {
        m.group(1): m.group(2)
        for m in re.finditer(r"^\| `(maxy [a-z0-9 -]+?)` \|[^|\n]*\| ([^\n]*) \|$", commands_table(), re.M)
    }
    missing: dict[str, list[str]] = {}

    def walk(command: Any, path: str) -> None:
        for name, child in getattr(command, "commands", {}).items():
            walk(child, f"{path} {name}")
        if not hasattr(command, "commands"):
            flags = [o for p in command.params if p.param_type_name == "option" for o in p.opts if o != "--help"]
            row = rows.get(path, "")
            absent = [o for o in flags if o.startswith("--") and not re.search(rf"(?<![\w-]){o}(?![\w-])", row)]
            if absent:
                missing[path] = absent

    walk(typer.main.get_command(app), "maxy")
    assert missing == {}, "options missing from their command's row in docs/cli.md"
