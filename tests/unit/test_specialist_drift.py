"""The specialist tool-drift gate without a database: tool-name shapes, the classification of
every class against a catalogue built by hand (and by hypothesis), definition files (front
matter, symbolic links, unreadable files) and the gate's report and log lines."""

from __future__ import annotations

import logging
import os
import string
import sys
import uuid
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from maxy.accounts import create_account
from maxy.config import load_settings
from maxy.errors import SettingsError
from maxy.plugins.discovery import discover_plugins
from maxy.plugins.manifest import ManifestError, parse_manifest_text
from maxy.specialists.catalogue import Catalogue, PluginEntry, build_catalogue, module_folder
from maxy.specialists.classify import (
    BRIDGE,
    EXCLUDED,
    MALFORMED,
    NATIVE,
    SERVED,
    UNKNOWN_NAMESPACE,
    UNKNOWN_TOOL,
    classify,
)
from maxy.specialists.definitions import (
    MAX_FILE_BYTES,
    Folder,
    account_folder,
    parse_definition,
    read_folder,
)
from maxy.specialists.gate import SpecialistDriftError, check_specialists, inspect_specialists, spawn_tools
from maxy.specialists.names import NATIVE_TOOLS, is_native, parse_mcp_name, split_tools

REPO = Path(__file__).resolve().parents[2]
LIBRARIAN = REPO / "plugins" / "maxy_plugins" / "memory" / "agents" / "librarian.md"
BUNDLED = sorted((REPO / "plugins" / "maxy_plugins").glob("*/agents/*.md"))  # every first-party specialist


# --- names -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "names"),
    [
        ("Read, Grep", ["Read", "Grep"]),
        ("Read,Grep,", ["Read", "Grep"]),
        ("Read, Read, Bash", ["Read", "Bash"]),
        ("Agent(researcher, writer), Read", ["Agent(researcher, writer)", "Read"]),
        (["Read", " mcp__maxy__memory-search "], ["Read", "mcp__maxy__memory-search"]),
    ],
)
def test_split_tools_takes_a_line_or_a_list(value: object, names: list[str]) -> None:
    assert split_tools(value) == names


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (None, "tools must be a comma-separated line or a list of tool names, got None"),
        (3, "tools must be a comma-separated line or a list of tool names, got 3"),
        ({"Read": True}, "tools must be a comma-separated line or a list"),
        ("", "tools lists no tool"),
        (" , ", "tools lists no tool"),
        ([], "tools lists no tool"),
        (["Read", 7], "tools[1] must be a tool name, got 7"),
        (["Read", ""], "tools[1] must be a tool name, got ''"),
        ("Agent(a, Read", "tools has a '(' that is not closed"),
        ("Read), Grep", "tools has a ')' without its '('"),
        (["Re\tad"], "which has a control character"),
    ],
)
def test_split_tools_refuses_what_names_no_tool(value: object, reason: str) -> None:
    with pytest.raises(ValueError, match=None) as err:
        split_tools(value)
    assert reason in str(err.value)


def test_mcp_names_split_at_the_first_separator() -> None:
    name = parse_mcp_name("mcp__plugin_memory_memory__memory-search")
    assert name is not None and (name.namespace, name.tool) == ("plugin_memory_memory", "memory-search")
    assert parse_mcp_name("mcp__maxy__a__b") is not None
    for bad in (
        "mcp__maxy",
        "mcp__maxy__",
        "mcp____x",
        "mcp___maxy__x",
        "mcp__maxy___x",
        "Mcp__maxy__x",
        "mcp__ma xy__x",
    ):
        assert parse_mcp_name(bad) is None, bad


# --- classification ----------------------------------------------------------------------
def _entry(name: str, tools: set[str], *, server: str | None = "", source: str = "installed", excluded: bool = False):
    return PluginEntry(name, name if server == "" else server, frozenset(tools), None, source, excluded)


CATALOGUE = Catalogue(
    {
        "memory": _entry("memory", {"memory-search", "memory-write"}),
        "work": _entry("work", {"work-create"}),
        "weather": _entry("weather", {"weather-note"}, server="wx"),
        "serverless": _entry("serverless", set(), server=None),
        "archive": _entry("archive", set(), server=None, source="bundled"),
        "telegram": _entry("telegram", set(), server=None, source="bundled", excluded=True),
        "calendar": _entry("calendar", {"calendar-add"}, excluded=True),
        "my_tools": _entry("my_tools", {"tool-a"}),
    },
)

TABLE = [
    ("Read", NATIVE, None),
    ("Agent(researcher)", NATIVE, None),
    ("Bash(git:*)", NATIVE, None),
    ("mcp__plugin_memory_memory__memory-search", SERVED, "memory"),
    ("mcp__memory__memory-write", SERVED, "memory"),
    ("mcp__maxy__work-create", SERVED, "work"),
    ("mcp__plugin_weather_wx__weather-note", SERVED, "weather"),
    ("mcp__wx__weather-note", SERVED, "weather"),
    ("mcp__plugin_my_tools_my_tools__tool-a", SERVED, "my_tools"),
    ("mcp__plugin_playwright_playwright__browser_click", BRIDGE, None),
    ("mcp__github__create_issue", BRIDGE, None),
    ("mcp__plugin_memoryx_memoryx__memory-search", BRIDGE, None),
    ("mcp__telegram__send", EXCLUDED, "telegram"),
    ("mcp__plugin_telegram_telegram__send", EXCLUDED, "telegram"),
    ("mcp__plugin_calendar_calendar__calendar-add", EXCLUDED, "calendar"),
    ("mcp__maxy__calendar-add", EXCLUDED, "calendar"),
    ("mcp__plugin_memory_memory__memory-serch", UNKNOWN_TOOL, "memory"),
    ("mcp__memory__work-create", UNKNOWN_TOOL, "memory"),
    ("mcp__maxy__memory-serch", UNKNOWN_TOOL, None),
    ("mcp__plugin_memory_mem__memory-search", UNKNOWN_NAMESPACE, "memory"),
    ("mcp__plugin_weather_weather__weather-note", UNKNOWN_NAMESPACE, "weather"),
    ("mcp__weather__weather-note", UNKNOWN_NAMESPACE, "weather"),
    ("mcp__plugin_serverless_serverless__serverless-ping", UNKNOWN_NAMESPACE, "serverless"),
    ("mcp__plugin_archive_archive__archive-find", UNKNOWN_NAMESPACE, "archive"),
    ("mcp__archive__archive-find", UNKNOWN_NAMESPACE, "archive"),
    ("read", MALFORMED, None),
    ("Reed", MALFORMED, None),
    ("memory-search", MALFORMED, None),
    ("mcp__memory", MALFORMED, None),
    ("mcp:memory:memory-search", MALFORMED, None),
    ("Agent(a", MALFORMED, None),
]


@pytest.mark.parametrize(("tool", "drift", "plugin"), TABLE)
def test_every_class(tool: str, drift: str, plugin: str | None) -> None:
    verdict = classify(tool, CATALOGUE)
    assert (verdict.drift, verdict.plugin) == (drift, plugin)
    assert verdict.refuses == (drift in {UNKNOWN_TOOL, UNKNOWN_NAMESPACE, MALFORMED})
    assert verdict.stripped == (drift == EXCLUDED)


SERVED_TOOLS = {t: p.name for p in CATALOGUE.plugins.values() if p.active for t in p.tools}
tool_names = st.from_regex(r"[a-z][a-z0-9-]{0,20}", fullmatch=True)


@given(st.sampled_from(sorted(NATIVE_TOOLS)), st.none() | st.from_regex(r"[a-z:*, -]{0,12}", fullmatch=True))
def test_any_native_name_passes(name: str, argument: str | None) -> None:
    tool = name if argument is None else f"{name}({argument})"
    assert is_native(tool)
    assert classify(tool, CATALOGUE).drift == NATIVE


@given(st.sampled_from(["memory", "work", "my_tools"]), tool_names)
def test_any_name_a_served_plugin_does_not_serve_is_unknown_tool(plugin: str, tool: str) -> None:
    for form in (f"mcp__plugin_{plugin}_{plugin}__{tool}", f"mcp__{plugin}__{tool}"):
        verdict = classify(form, CATALOGUE)
        expected = SERVED if tool in CATALOGUE.plugins[plugin].tools else UNKNOWN_TOOL
        assert (verdict.drift, verdict.plugin) == (expected, plugin)


@given(st.sampled_from(sorted(SERVED_TOOLS)))
def test_every_served_tool_passes_in_each_form(tool: str) -> None:
    entry = CATALOGUE.plugins[SERVED_TOOLS[tool]]
    forms = [f"mcp__plugin_{entry.name}_{entry.server}__{tool}", f"mcp__{entry.server}__{tool}", f"mcp__maxy__{tool}"]
    assert {classify(form, CATALOGUE).drift for form in forms} == {SERVED}


@given(st.from_regex(r"[a-z][a-z0-9-]{0,12}", fullmatch=True), tool_names)
def test_a_namespace_no_maxy_plugin_owns_is_a_bridge(namespace: str, tool: str) -> None:
    known = set(CATALOGUE.plugins) | {"wx", "maxy"}
    for ns in (namespace, f"plugin_{namespace}_{namespace}"):
        if namespace not in known and not any(ns.startswith(f"plugin_{p}_") for p in known):
            assert classify(f"mcp__{ns}__{tool}", CATALOGUE).drift == BRIDGE


@given(st.text(max_size=30))
def test_anything_else_is_malformed(text: str) -> None:
    if not is_native(text) and parse_mcp_name(text) is None:
        assert classify(text, CATALOGUE).drift == MALFORMED


def test_the_real_install_serves_what_its_manifests_allow_list() -> None:
    catalogue = build_catalogue(discover_plugins([], ["tests.plugins_fixture.serverless_plugin"]), ["telegram"])
    assert catalogue.plugins["memory"].source == "installed"  # read from PLUGIN.md, code not loaded here
    assert "memory-search" in catalogue.plugins["memory"].tools
    assert classify("mcp__plugin_work_work__work-create", catalogue).drift == SERVED
    assert classify("mcp__plugin_serverless_serverless__serverless-ping", catalogue).drift == UNKNOWN_NAMESPACE
    assert classify("mcp__telegram__send", catalogue).drift == EXCLUDED


# --- definition files --------------------------------------------------------------------
def _definition(text: str, name: str = "helper.md"):
    return parse_definition(text, Path("/agents") / name, "test")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("name: x\ntools: Read\n", "helper.md: must start with a '---' line opening the YAML front matter"),
        ("---\nname: x\ntools: Read\n", "helper.md: the YAML front matter is not closed by a '---' line"),
        ("---\nname: x\ntools: [Read\n---\n", "helper.md: the front matter is not valid YAML at line"),
        ("---\nname: x\ntools: a: b\n---\n", "helper.md: the front matter is not valid YAML at line 3"),
        ("---\n- Read\n---\n", "helper.md: the front matter must be a mapping with name, description and tools"),
        ("---\ntools: Read\n---\n", "helper.md: key 'name' must be the specialist's name"),
        ("---\nname: Big Helper\ntools: Read\n---\n", "got 'Big Helper'"),
        ('---\nname: "helper\\n"\ntools: Read\n---\n', "got 'helper\\n'"),  # a trailing newline is no name
        ("---\nname: helper\ndescription: d\n---\n", "helper.md: has no 'tools' key"),
        ("---\nname: helper\ntools:\n---\n", "helper.md: tools must be a comma-separated line or a list"),
        ("---\nname: helper\ntools: [Read, 3]\n---\n", "helper.md: tools[1] must be a tool name, got 3"),
    ],
)
def test_a_front_matter_that_cannot_be_used_is_named(text: str, problem: str) -> None:
    definition = _definition(text)
    assert definition.problem is not None and problem in definition.problem
    assert definition.tools == ()


def test_both_tools_forms_read_alike() -> None:
    line = _definition("---\nname: helper\ntools: Read, mcp__maxy__memory-search\n---\nbody\n")
    listed = _definition("---\nname: helper\ntools:\n  - Read\n  - mcp__maxy__memory-search\n---\n")
    assert line.tools == listed.tools == ("Read", "mcp__maxy__memory-search")
    assert line.problem is None and line.name == "helper"


def test_links_stay_inside_their_folder(tmp_path: Path) -> None:
    root = tmp_path / "plugin"
    agents = root / "agents"
    agents.mkdir(parents=True)
    (agents / "a.md").write_text("---\nname: a\ntools: Read\n---\n")
    (agents / "b.md").symlink_to(agents / "a.md")  # inside: read
    secret = tmp_path / "secret.md"
    secret.write_text("---\nname: secret\ntools: Read\n---\n")
    (agents / "c.md").symlink_to(secret)  # outside: named, never read
    (agents / "d.md").symlink_to(agents / "gone.md")  # to nothing
    (agents / "e.md").write_bytes(b"---\nname: e\ntools: R\xe9ad\n---\n")
    (agents / "f.md").write_text("---\nname: f\ntools: Read\n---\n" + "x" * MAX_FILE_BYTES)
    (agents / "notes.txt").write_text("not a definition")
    found = {d.path.name: d for d in read_folder(Folder(agents, root, "plugin:test"))}
    assert sorted(found) == ["a.md", "b.md", "c.md", "d.md", "e.md", "f.md"]
    assert found["b.md"].problem is None and found["b.md"].name == "a"
    assert found["c.md"].target == secret.resolve() and found["c.md"].name == "c"
    assert f"is a symbolic link to {secret.resolve()}, outside {agents.resolve()}" in (found["c.md"].problem or "")
    assert "is a symbolic link to nothing" in (found["d.md"].problem or "")
    assert "is not UTF-8 text (byte 20)" in (found["e.md"].problem or "")
    assert "is larger than 256 KiB" in (found["f.md"].problem or "")


def test_an_agents_folder_linked_outside_its_root_is_not_read(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.md").write_text("---\nname: x\ntools: Read\n---\n")
    root = tmp_path / "account"
    (root / "specialists").mkdir(parents=True)
    (root / "specialists" / "agents").symlink_to(elsewhere)
    (only,) = read_folder(Folder(root / "specialists" / "agents", root, "account:test"))
    assert only.target == elsewhere.resolve() and only.tools == ()
    assert read_folder(Folder(tmp_path / "none" / "agents", tmp_path, "plugin:none")) == []


def test_link_loops_are_named_not_raised(tmp_path: Path) -> None:
    root = tmp_path / "plugin"
    agents = root / "agents"
    agents.mkdir(parents=True)
    (agents / "a.md").write_text("---\nname: a\ntools: Read\n---\n")
    (agents / "self.md").symlink_to(agents / "self.md")
    (agents / "ping.md").symlink_to(agents / "pong.md")
    (agents / "pong.md").symlink_to(agents / "ping.md")
    found = {d.path.name: d for d in read_folder(Folder(agents, root, "plugin:test"))}
    assert found["a.md"].problem is None
    for name in ("self.md", "ping.md", "pong.md"):
        assert found[name].problem == (
            f"{agents / name} is a symbolic link loop (it leads back to itself): "
            "point it at a file in the same folder, or remove it"
        )
        assert found[name].tools == () and found[name].name == name.removesuffix(".md")

    account = tmp_path / "account"
    (account / "specialists").mkdir(parents=True)
    looped = account / "specialists" / "agents"
    looped.symlink_to(looped)
    (only,) = read_folder(Folder(looped, account, "account:test"))
    assert (
        only.problem
        == f"{looped} is a symbolic link loop (it leads back to itself): point it at a folder, or remove it"
    )


def test_a_link_loop_refuses_the_start_with_one_line(data_root: Path, caplog) -> None:
    caplog.set_level(logging.INFO, logger="maxy")
    account_id = _account_specialists(data_root, {})
    link = data_root / "accounts" / account_id / "specialists" / "agents" / "loop.md"
    link.symlink_to(link)
    with pytest.raises(SpecialistDriftError, match="is a symbolic link loop"):
        check_specialists(discover_plugins(), _settings(data_root, account_id))
    (line,) = [r.getMessage() for r in caplog.records if "boot-failed" in r.getMessage()]
    assert line.startswith(
        f"[mcp] boot-failed reason=specialist-tool-drift specialist=loop tool=none drift=malformed path={link} "
    )


_SLUG_START = string.ascii_lowercase + string.digits


@given(st.text(alphabet=_SLUG_START + "_-A \n.é", max_size=66))
def test_specialist_and_plugin_names_share_one_grammar(name: str) -> None:
    """A name is 1-64 of a-z 0-9 _ -, starting with a letter or digit; nothing after it (no newline)."""
    expected = 1 <= len(name) <= 64 and name[0] in _SLUG_START and all(c in _SLUG_START + "_-" for c in name)
    quoted = '"' + name.replace("\\", "\\\\").replace("\n", "\\n") + '"'
    definition = _definition(f"---\nname: {quoted}\ntools: Read\n---\n")
    assert (definition.problem is None) == expected, definition.problem
    try:
        parse_manifest_text(f"---\nname: {quoted}\ndescription: d\n---\n", "PLUGIN.md")
        accepted = True
    except ManifestError:
        accepted = False
    assert accepted == expected


def test_excluded_plugins_are_plugin_names_whole() -> None:
    with pytest.raises(SettingsError, match="EXCLUDED_PLUGINS"):
        load_settings(EXCLUDED_PLUGINS=["work\n"])
    assert load_settings(EXCLUDED_PLUGINS=["work"]).EXCLUDED_PLUGINS == ["work"]


def test_an_installed_plugin_is_found_with_no_package_code_run(tmp_path: Path, monkeypatch) -> None:
    """The catalogue reads an installed plugin's PLUGIN.md without importing its package or the
    packages above it (whose code could do anything)."""
    top = tmp_path / f"vendor_{uuid.uuid4().hex[:8]}"
    (top / "weather").mkdir(parents=True)
    (top / "__init__.py").write_text("raise RuntimeError('the package above the plugin was imported')\n")
    (top / "weather" / "__init__.py").write_text("raise RuntimeError('the plugin was imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert module_folder(f"{top.name}.weather") == top / "weather"
    assert module_folder(f"{top.name}.nothing") is None
    assert module_folder(f"{top.name}.weather.deeper") is None
    assert module_folder("json.decoder.deeper") is None  # json.decoder is a module: nothing is inside it
    assert top.name not in sys.modules


# --- the gate ----------------------------------------------------------------------------
def _account_specialists(data_root: Path, files: dict[str, str]) -> str:
    account = create_account(data_root, "specialists")
    folder = account_folder(data_root, account.account_id)
    assert folder is not None
    folder.path.mkdir(parents=True)
    for name, text in files.items():
        (folder.path / name).write_text(text)
    return account.account_id


def _settings(data_root: Path, account_id: str | None, excluded: str | None = None):
    return load_settings(DATA_ROOT=data_root, ACCOUNT_ID=account_id, EXCLUDED_PLUGINS=excluded)


def test_the_bundled_librarian_passes_and_its_tools_are_served(data_root: Path, caplog) -> None:
    caplog.set_level(logging.INFO, logger="maxy")
    report = check_specialists(discover_plugins(), _settings(data_root, None))
    (librarian,) = [s for s in report.specialists if s.name == "librarian"]
    assert librarian.definition.path == LIBRARIAN and librarian.definition.origin == "plugin:memory"
    assert {v.drift for v in librarian.verdicts} == {NATIVE, SERVED}
    assert (
        f"[mcp] startup-self-test specialist-tool-drift=ok inspected={len(BUNDLED)} stripped-specialists=0"
        in caplog.text
    )


def test_drift_refuses_with_one_line_per_defect(data_root: Path, caplog) -> None:
    caplog.set_level(logging.INFO, logger="maxy")
    account_id = _account_specialists(
        data_root,
        {
            "scout.md": "---\nname: scout\ntools: Read, mcp__plugin_memory_memory__memory-serch, reed,"
            " mcp__plugin_memory_mem__memory-search, mcp__plugin_playwright_playwright__browser_click\n---\n",
            "broken.md": "no front matter\n",
        },
    )
    with pytest.raises(SpecialistDriftError) as err:
        check_specialists(discover_plugins(), _settings(data_root, account_id))
    folder = data_root / "accounts" / account_id / "specialists" / "agents"
    lines = [r.getMessage() for r in caplog.records if "boot-failed" in r.getMessage()]
    assert lines == [
        f"[mcp] boot-failed reason=specialist-tool-drift specialist=broken tool=none drift=malformed path={folder / 'broken.md'} "
        "detail=\"broken.md: must start with a '---' line opening the YAML front matter\"",
        f"[mcp] boot-failed reason=specialist-tool-drift specialist=scout tool=mcp__plugin_memory_memory__memory-serch "
        f"drift=unknown-tool-in-plugin path={folder / 'scout.md'}",
        f"[mcp] boot-failed reason=specialist-tool-drift specialist=scout tool=reed drift=malformed path={folder / 'scout.md'}",
        f"[mcp] boot-failed reason=specialist-tool-drift specialist=scout tool=mcp__plugin_memory_mem__memory-search "
        f"drift=unknown-plugin-namespace path={folder / 'scout.md'}",
    ]
    assert all(r.levelno == logging.ERROR for r in caplog.records if "boot-failed" in r.getMessage())
    assert "startup-self-test" not in caplog.text
    assert str(err.value).startswith("specialist 'broken' cannot start: broken.md: must start with")
    assert str(err.value).endswith("(4 defects in all; `maxy specialists check` lists them)")


def test_excluded_plugins_are_stripped_not_refused(data_root: Path, caplog) -> None:
    caplog.set_level(logging.INFO, logger="maxy")
    account_id = _account_specialists(
        data_root,
        {
            "planner.md": "---\nname: planner\ntools: [Read, mcp__plugin_work_work__work-create, mcp__maxy__work-update,"
            " mcp__telegram__send, mcp__maxy__memory-search]\n---\n",
        },
    )
    settings = _settings(data_root, account_id, excluded="work,telegram")
    report = check_specialists(discover_plugins(None, (), ["work", "telegram"]), settings)
    (planner,) = [s for s in report.specialists if s.name == "planner"]
    assert planner.stripped() == {
        "work": ["mcp__plugin_work_work__work-create", "mcp__maxy__work-update"],
        "telegram": ["mcp__telegram__send"],
    }
    assert spawn_tools(report, "planner") == ["Read", "mcp__maxy__memory-search"]
    text = caplog.text
    assert (
        "[mcp] specialist-tool-strip specialist=planner plugin=telegram tools=mcp__telegram__send reason=excluded"
        in text
    )
    assert (
        "[mcp] specialist-tool-strip specialist=planner plugin=work "
        "tools=mcp__plugin_work_work__work-create,mcp__maxy__work-update reason=excluded" in text
    )
    work = [f for f in BUNDLED if f.parts[-3] == "work"]
    assert f"specialist-tool-drift=ok inspected={len(BUNDLED) - len(work) + 1} stripped-specialists=1" in text
    assert "[specialists] spawn-allowlist specialist=planner count=2 stripped=3 sourced-from=agent-frontmatter" in text


def test_a_specialist_named_twice_refuses(data_root: Path) -> None:
    account_id = _account_specialists(data_root, {"librarian.md": "---\nname: librarian\ntools: Read\n---\n"})
    report = inspect_specialists(discover_plugins(), _settings(data_root, account_id))
    (defect,) = report.defects
    assert defect.drift == MALFORMED and defect.specialist == "librarian"
    assert f"is also the name of {LIBRARIAN}" in defect.detail


def test_a_link_out_of_the_account_refuses_and_names_its_target(data_root: Path, tmp_path: Path, caplog) -> None:
    caplog.set_level(logging.INFO, logger="maxy")
    account_id = _account_specialists(data_root, {})
    outside = tmp_path / "outside.md"
    outside.write_text("---\nname: outside\ntools: Read\n---\n")
    link = data_root / "accounts" / account_id / "specialists" / "agents" / "outside.md"
    os.symlink(outside, link)
    with pytest.raises(SpecialistDriftError, match="replace the link with the file itself"):
        check_specialists(discover_plugins(), _settings(data_root, account_id))
    assert (
        f"[mcp] boot-failed reason=specialist-symlink-outside specialist=outside path={link} target={outside}"
        in caplog.text
    )


def test_spawn_tools_of_an_unknown_or_drifting_specialist(data_root: Path) -> None:
    account_id = _account_specialists(data_root, {"scout.md": "---\nname: scout\ntools: Read, reed\n---\n"})
    report = inspect_specialists(discover_plugins(), _settings(data_root, account_id))
    with pytest.raises(SpecialistDriftError, match="'reed' is neither a Claude Code tool"):
        spawn_tools(report, "scout")
    with pytest.raises(ValueError, match="no specialist is named 'nobody' \\(specialists: .*librarian, .*scout"):
        spawn_tools(report, "nobody")
    assert spawn_tools(report, "librarian")[0] == "Read"


def test_without_an_account_only_the_plugins_are_read(data_root: Path) -> None:
    assert account_folder(data_root, None) is None
    assert account_folder(data_root, "not-a-uuid") is None
    report = inspect_specialists(discover_plugins(), _settings(data_root, str(uuid.uuid4())))
    assert [s.definition.path for s in report.specialists] == BUNDLED and report.ok
