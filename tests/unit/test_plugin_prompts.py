"""A manifest's ``prompts``: each a Markdown file inside the plugin's folder with a description;
anything else is refused naming the file and the key, and the texts are read as written."""

from __future__ import annotations

from pathlib import Path

import pytest
from maxy.plugins.manifest import ManifestError, PluginManifest, parse_manifest_text, read_prompts

HEAD = "---\nname: demo\ndescription: d\nprompts:\n"


def _manifest(tmp_path: Path, prompts: str) -> PluginManifest:
    path = tmp_path / "PLUGIN.md"
    path.write_text(HEAD + prompts + "---\n")
    return parse_manifest_text(path.read_text(), str(path), path)


def test_prompts_are_read_from_their_files(tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "rules.md").write_text("# Rules\n\nKeep dates.\n")
    manifest = _manifest(tmp_path, "  rules: {file: prompts/rules.md, description: The rules., title: Rules}\n")
    assert manifest.prompts["rules"].title == "Rules"
    assert read_prompts(manifest) == {"rules": "# Rules\n\nKeep dates."}


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("  r: {file: ../secret.md, description: d}\n", "key 'prompts.r.file' must be a .md file inside"),
        ("  r: {file: /etc/passwd.md, description: d}\n", "key 'prompts.r.file' must be a .md file inside"),
        ("  r: {file: rules.txt, description: d}\n", "key 'prompts.r.file' must be a .md file inside"),
        ("  r: {file: r.md}\n", "key 'prompts.r.description' must say what the prompt is for"),
        ("  r: {file: r.md, description: d, args: [x]}\n", "key 'prompts.r.args' is not known"),
        ("  'bad name': {file: r.md, description: d}\n", "key 'prompts.bad name' is not a valid prompt name"),
        ("  r: prompts/r.md\n", "key 'prompts.r' must be a mapping with file and description"),
    ],
)
def test_a_bad_prompt_entry_names_the_file_and_key(tmp_path: Path, entry: str, expected: str) -> None:
    with pytest.raises(ManifestError) as err:
        _manifest(tmp_path, entry)
    assert str(err.value).startswith(f"{tmp_path / 'PLUGIN.md'}: {expected}")


def test_a_missing_or_empty_prompt_file_is_refused_at_load(tmp_path: Path) -> None:
    manifest = _manifest(tmp_path, "  r: {file: r.md, description: d}\n")
    with pytest.raises(ManifestError, match="key 'prompts.r.file' names 'r.md', which cannot be read"):
        read_prompts(manifest)
    (tmp_path / "r.md").write_text("  \n")
    with pytest.raises(ManifestError, match="which is empty"):
        read_prompts(manifest)


def test_the_memory_agent_tools_and_prompts_stay_off_public_servers() -> None:
    from maxy.mcp.server import prompts_for_tools, tools_for_role
    from maxy.plugins.discovery import discover_plugins

    plugins = [p for p in discover_plugins() if p.name == "memory-agent"]
    assert len(plugins) == 1
    admin = tools_for_role(plugins, "admin")
    assert {t.name for t in admin} == {"add_entry", "list_entries", "get_context", "put_context", "await_consistency"}
    assert {p.name for p in prompts_for_tools(plugins, admin)} == {
        "entry_capture_prompt",
        "summary_prompt",
        "context_prompt",
    }
    public = tools_for_role(plugins, "public")
    assert public == [] and prompts_for_tools(plugins, public) == []
