"""``PLUGIN.md``: a plugin's manifest, YAML front matter above free-form Markdown.

    ---
    name: memory
    description: Long-term memory in the knowledge graph.
    mcp:
      server: memory          # the plugin's MCP server; without this block the plugin has none
    tools:
      memory-search: {eager: true, adminAllowlist: true, publicAllowlist: true, readOnly: true, profile: daily}
      memory-delete: {adminAllowlist: true, destructive: true}
    prompts:                  # MCP prompts: Markdown files of the plugin, served by its server
      entry_capture_prompt: {file: prompts/entry_capture_prompt.md, description: How to capture an entry.}
    ---

Per tool: ``eager`` (``_meta["anthropic/alwaysLoad"]`` in tools/list), ``adminAllowlist`` and
``publicAllowlist`` (which role's server registers it) and the annotations ``readOnly``,
``destructive``, ``idempotent`` (omitted: taken from the ``@tool`` decorator; given and
different from it: an error), and ``profile``: the tool profile that serves it besides the
plugin's own (``daily``: the default surface of an admin server; omitted: only the profile
named after the plugin, which is opt-in). Per prompt: ``file`` (a ``.md`` file inside the plugin's folder),
``description`` and an optional ``title``. Every error names the file and the key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..errors import MaxyError
from ..identifiers import NAME_RE

MANIFEST_FILE = "PLUGIN.md"
# tools/list ``_meta`` key that makes Claude Code load a tool eagerly (no ToolSearch round-trip)
EAGER_META_KEY = "anthropic/alwaysLoad"
# matched whole (fullmatch: a "$" would let a trailing newline through)
_TOOL_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")

# manifest key -> ToolFlags attribute
_FLAG_KEYS = {
    "eager": "eager",
    "adminAllowlist": "admin_allowlist",
    "publicAllowlist": "public_allowlist",
    "readOnly": "read_only",
    "destructive": "destructive",
    "idempotent": "idempotent",
    "profile": "profile",
}
_MCP_KEYS = {"server"}
_PROMPT_KEYS = {"file", "description", "title"}


class ManifestError(MaxyError):
    """A PLUGIN.md that cannot be used, or a manifest that disagrees with the plugin's code."""


@dataclass(frozen=True)
class ToolFlags:
    """A tool's manifest entry. ``None`` annotations mean "as the @tool decorator says"."""

    eager: bool = False
    admin_allowlist: bool = False
    public_allowlist: bool = False
    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    profile: str | None = None  # a profile beside the plugin's own, e.g. daily


@dataclass(frozen=True)
class PromptRef:
    """A prompt's manifest entry: its Markdown file, relative to the plugin's folder."""

    file: str
    description: str
    title: str | None = None


@dataclass(frozen=True)
class PluginManifest:
    name: str
    description: str
    mcp_server: str | None  # None: the plugin declares no MCP server
    tools: dict[str, ToolFlags] = field(default_factory=dict)
    path: Path | None = None
    prompts: dict[str, PromptRef] = field(default_factory=dict)


def split_front_matter(text: str, where: str) -> str:
    """The YAML between the opening ``---`` line and the next ``---`` line."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        raise ManifestError(f"{where}: must start with a '---' line opening the YAML front matter")
    for i, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return "\n".join(lines[1:i])
    raise ManifestError(f"{where}: the YAML front matter is not closed by a '---' line")


def _flag(value: object, where: str) -> bool:
    if not isinstance(value, bool):
        raise ManifestError(f"{where}: must be true or false, got {value!r}")
    return value


def _front_matter_data(text: str, where: str) -> dict[Any, Any]:
    raw = split_front_matter(text, where)
    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as err:
        raise ManifestError(f"{where}: the front matter is not valid YAML ({err})") from None
    if not isinstance(data, dict):
        raise ManifestError(f"{where}: the front matter must be a mapping with name, description and tools")
    return data


def _name(data: dict[Any, Any], where: str) -> str:
    name = data.get("name")
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise ManifestError(
            f"{where}: key 'name' must be a lower-case plugin name (letters, digits, '-', '_'), got {name!r}"
        )
    return name


def _description(data: dict[Any, Any], where: str) -> str:
    description = data.get("description", "")
    if description is None:
        description = ""
    if not isinstance(description, str):
        raise ManifestError(f"{where}: key 'description' must be text, got {description!r}")
    return description.strip()


def _mcp_server(data: dict[Any, Any], name: str, where: str) -> str | None:
    if "mcp" not in data or data["mcp"] is None:
        return None
    mcp = data["mcp"]
    if not isinstance(mcp, dict):
        raise ManifestError(f"{where}: key 'mcp' must be a mapping like {{server: {name}}}, got {mcp!r}")
    unknown = sorted(set(map(str, mcp)) - _MCP_KEYS)
    if unknown:
        raise ManifestError(f"{where}: key 'mcp.{unknown[0]}' is not known; 'mcp' holds only 'server'")
    server = mcp.get("server")
    if not isinstance(server, str) or not NAME_RE.fullmatch(server):
        raise ManifestError(f"{where}: key 'mcp.server' must name the plugin's MCP server, got {server!r}")
    return server


def _tool_flags(tool_name: Any, flags: Any, where: str) -> ToolFlags:
    if not isinstance(tool_name, str) or not _TOOL_RE.fullmatch(tool_name):
        raise ManifestError(f"{where}: key 'tools.{tool_name}' is not a valid tool name")
    at = f"tools.{tool_name}"
    if flags is None:
        flags = {}
    if not isinstance(flags, dict):
        raise ManifestError(f"{where}: key '{at}' must be a mapping of flags, got {flags!r}")
    values: dict[str, Any] = {}
    for key, value in flags.items():
        if key not in _FLAG_KEYS:
            raise ManifestError(f"{where}: key '{at}.{key}' is not a known flag; known flags: {', '.join(_FLAG_KEYS)}")
        if key == "profile":
            if not isinstance(value, str) or not NAME_RE.fullmatch(value):
                raise ManifestError(f"{where}: key '{at}.profile' must be a profile name such as daily, got {value!r}")
            values["profile"] = value
            continue
        values[_FLAG_KEYS[key]] = _flag(value, f"{where}: key '{at}.{key}'")
    return ToolFlags(**values)


def _tools(data: dict[Any, Any], where: str) -> dict[str, ToolFlags]:
    tools_raw = data.get("tools", {})
    if tools_raw is None:
        tools_raw = {}
    if not isinstance(tools_raw, dict):
        raise ManifestError(f"{where}: key 'tools' must map each tool name to its flags, got {tools_raw!r}")
    return {tool_name: _tool_flags(tool_name, flags, where) for tool_name, flags in tools_raw.items()}


def _prompt_ref(prompt_name: Any, entry: Any, where: str) -> PromptRef:
    if not isinstance(prompt_name, str) or not _TOOL_RE.fullmatch(prompt_name):
        raise ManifestError(f"{where}: key 'prompts.{prompt_name}' is not a valid prompt name")
    at = f"prompts.{prompt_name}"
    if not isinstance(entry, dict):
        raise ManifestError(f"{where}: key '{at}' must be a mapping with file and description, got {entry!r}")
    unknown = sorted(set(map(str, entry)) - _PROMPT_KEYS)
    if unknown:
        raise ManifestError(f"{where}: key '{at}.{unknown[0]}' is not known; a prompt has file, description, title")
    file = entry.get("file")
    if not isinstance(file, str) or Path(file).is_absolute() or ".." in Path(file).parts or not file.endswith(".md"):
        raise ManifestError(
            f"{where}: key '{at}.file' must be a .md file inside the plugin's folder (a relative path), got {file!r}"
        )
    description = entry.get("description")
    if not isinstance(description, str) or not description.strip():
        raise ManifestError(f"{where}: key '{at}.description' must say what the prompt is for, got {description!r}")
    title = entry.get("title")
    if title is not None and not isinstance(title, str):
        raise ManifestError(f"{where}: key '{at}.title' must be text, got {title!r}")
    return PromptRef(file, description.strip(), title)


def _prompts(data: dict[Any, Any], where: str) -> dict[str, PromptRef]:
    raw = data.get("prompts") or {}
    if not isinstance(raw, dict):
        raise ManifestError(f"{where}: key 'prompts' must map each prompt name to its file and description")
    return {name: _prompt_ref(name, entry, where) for name, entry in raw.items()}


def parse_manifest_text(text: str, where: str = MANIFEST_FILE, path: Path | None = None) -> PluginManifest:
    data = _front_matter_data(text, where)
    name = _name(data, where)
    description = _description(data, where)
    server = _mcp_server(data, name, where)
    tools = _tools(data, where)
    prompts = _prompts(data, where)
    return PluginManifest(
        name=name, description=description, mcp_server=server, tools=tools, path=path, prompts=prompts
    )


def read_prompts(manifest: PluginManifest) -> dict[str, str]:
    """Each declared prompt's text, read from its file beside the manifest."""
    where = str(manifest.path or MANIFEST_FILE)
    folder = (manifest.path or Path(MANIFEST_FILE)).parent
    texts = {}
    for name, ref in manifest.prompts.items():
        try:
            text = (folder / ref.file).read_text(encoding="utf-8").strip()
        except OSError as err:
            raise ManifestError(
                f"{where}: key 'prompts.{name}.file' names {ref.file!r}, which cannot be read ({err})"
            ) from None
        if not text:
            raise ManifestError(f"{where}: key 'prompts.{name}.file' names {ref.file!r}, which is empty")
        texts[name] = text
    return texts


def load_manifest(path: Path) -> PluginManifest:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ManifestError(
            f"{path}: missing; every plugin package has a {MANIFEST_FILE} beside its __init__.py"
        ) from None
    except OSError as err:
        raise ManifestError(f"{path}: cannot be read ({err})") from None
    return parse_manifest_text(text, str(path), path)
