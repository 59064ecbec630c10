"""Find plugins: the ``maxy.plugins`` entry-point group, plus explicit module names.

First-party plugins (``maxy_plugins.memory`` ...) are registered in the same entry-point
group a third-party package uses, so both are loaded by one function, :func:`load_plugin`:
import the package (and its ``.tools`` submodule when it has one; the package imports any
other tool modules itself), read ``PLUGIN.md`` beside it, and match the ``@tool`` functions
of the package and all its submodules against the manifest. A tool in the code but not in
the manifest, or the other way round, is an error at load. The prompts the manifest lists are
read from their files then too (served as MCP prompts by the plugin's server).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType
from typing import Any

from ..logs import log_line
from .api import ToolSpec, tools_of
from .manifest import (
    MANIFEST_FILE,
    ManifestError,
    PluginManifest,
    ToolFlags,
    load_manifest,
    read_prompts,
)

ENTRY_POINT_GROUP = "maxy.plugins"


@dataclass(frozen=True)
class PluginTool:
    """One tool: its code (ToolSpec) and its resolved manifest flags."""

    plugin: str
    spec: ToolSpec
    eager: bool
    admin_allowlist: bool
    public_allowlist: bool
    read_only: bool
    destructive: bool
    idempotent: bool
    profile: str | None = None  # the profile serving it besides its plugin's (manifest ``profile``)

    @property
    def name(self) -> str:
        return self.spec.name

    def flags(self) -> dict[str, bool]:
        return {
            "eager": self.eager,
            "adminAllowlist": self.admin_allowlist,
            "publicAllowlist": self.public_allowlist,
            "readOnly": self.read_only,
            "destructive": self.destructive,
            "idempotent": self.idempotent,
        }


@dataclass(frozen=True)
class PluginPrompt:
    """One MCP prompt of a plugin: its manifest entry and the text of its file."""

    plugin: str
    name: str
    title: str | None
    description: str
    text: str


@dataclass(frozen=True)
class LoadedPlugin:
    name: str
    module: str
    manifest: PluginManifest
    tools: tuple[PluginTool, ...]
    source: str  # "entry-point" or "module"
    prompts: tuple[PluginPrompt, ...] = ()

    @property
    def mcp_server(self) -> str | None:
        return self.manifest.mcp_server

    def tool(self, name: str) -> PluginTool | None:
        return next((t for t in self.tools if t.name == name), None)


def available_plugins() -> dict[str, str]:
    """Entry-point name -> module for every installed plugin (nothing is imported)."""
    found: dict[str, str] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(ep.name, ep.module)
    return found


def _import(module_name: str) -> ModuleType:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        if err.name and module_name.startswith(err.name):
            raise ManifestError(f"plugin module {module_name!r} cannot be imported: {err}") from None
        raise


def _resolve_flag(manifest_value: bool | None, code_value: bool, key: str, tool: str, where: str) -> bool:
    if manifest_value is None:
        return code_value
    if manifest_value != code_value:
        raise ManifestError(
            f"{where}: key 'tools.{tool}.{key}' is {str(manifest_value).lower()} but the @tool declaration in the "
            f"code says {str(code_value).lower()}; make them agree"
        )
    return manifest_value


def load_plugin(module_name: str, *, entry_name: str | None = None, source: str = "module") -> LoadedPlugin:
    """Import one plugin package and check its code against its PLUGIN.md."""
    module = _import(module_name)
    is_package = hasattr(module, "__path__")
    if is_package and importlib.util.find_spec(f"{module_name}.tools") is not None:
        _import(f"{module_name}.tools")  # tools registered in the submodule count as the package's
    origin = getattr(module, "__file__", None)
    if not origin:
        raise ManifestError(f"plugin module {module_name!r} has no file on disk, so no {MANIFEST_FILE} beside it")
    manifest_path = Path(origin).parent / MANIFEST_FILE
    manifest = load_manifest(manifest_path)
    where = str(manifest_path)
    if entry_name is not None and manifest.name != entry_name:
        raise ManifestError(
            f"{where}: key 'name' is {manifest.name!r} but the plugin is registered as {entry_name!r} "
            f"in the {ENTRY_POINT_GROUP!r} entry-point group; use one name"
        )
    specs = {spec.name: spec for spec in tools_of(module_name)}
    in_code_only = sorted(set(specs) - set(manifest.tools))
    in_manifest_only = sorted(set(manifest.tools) - set(specs))
    if in_code_only:
        raise ManifestError(
            f"{where}: tool(s) {', '.join(in_code_only)} are declared with @tool in {module_name} but missing "
            "from the manifest's 'tools' mapping; add them with their flags"
        )
    if in_manifest_only:
        raise ManifestError(
            f"{where}: key 'tools.{in_manifest_only[0]}' names a tool that {module_name} does not declare "
            f"with @tool (missing: {', '.join(in_manifest_only)})"
        )
    tools = []
    for name, flags in manifest.tools.items():
        spec = specs[name]
        tools.append(_plugin_tool(manifest.name, spec, flags, where))
    return LoadedPlugin(manifest.name, module_name, manifest, tuple(tools), source, plugin_prompts(manifest))


def plugin_prompts(manifest: PluginManifest) -> tuple[PluginPrompt, ...]:
    texts = read_prompts(manifest)
    return tuple(
        PluginPrompt(manifest.name, name, ref.title, ref.description, texts[name])
        for name, ref in manifest.prompts.items()
    )


def plugin_folder(name: str) -> Path:
    """The folder of the installed plugin ``name`` (its PLUGIN.md and files), without importing it."""
    module = available_plugins().get(name)
    spec = importlib.util.find_spec(module) if module else None
    if spec is None or not spec.origin:
        raise ManifestError(f"plugin {name!r} is not installed (no {ENTRY_POINT_GROUP!r} entry point names it)")
    return Path(spec.origin).parent


def _plugin_tool(plugin: str, spec: ToolSpec, flags: ToolFlags, where: str) -> PluginTool:
    return PluginTool(
        plugin=plugin,
        spec=spec,
        eager=flags.eager,
        admin_allowlist=flags.admin_allowlist,
        public_allowlist=flags.public_allowlist,
        read_only=_resolve_flag(flags.read_only, spec.read_only, "readOnly", spec.name, where),
        destructive=_resolve_flag(flags.destructive, spec.destructive, "destructive", spec.name, where),
        idempotent=_resolve_flag(flags.idempotent, spec.idempotent, "idempotent", spec.name, where),
        profile=flags.profile,
    )


def discover_plugins(
    names: Sequence[str] | None = None, extra_modules: Iterable[str] = (), excluded: Iterable[str] = ()
) -> list[LoadedPlugin]:
    """Load plugins.

    ``names=None`` loads every plugin in the entry-point group; otherwise each name is an
    entry-point name or a dotted module path (``tests.plugins_fixture.echo_plugin``).
    ``extra_modules`` are module paths loaded in addition, through the same loader.
    ``excluded`` (EXCLUDED_PLUGINS) are plugins this install runs without: left out of every
    plugin, and an error when named or loaded.
    """
    out = set(excluded)
    wanted = _wanted(names, out)
    wanted.extend((module, None, "module") for module in extra_modules)

    loaded: list[LoadedPlugin] = []
    seen_modules: set[str] = set()
    for module, entry_name, source in wanted:
        if module in seen_modules:
            continue
        seen_modules.add(module)
        plugin = load_plugin(module, entry_name=entry_name, source=source)
        if plugin.name in out:
            raise ManifestError(_excluded(plugin.name) + f" (module {module!r})")
        clash = next((p for p in loaded if p.name == plugin.name), None)
        if clash is not None:
            raise ManifestError(f"two plugins are named {plugin.name!r}: {clash.module} and {plugin.module}")
        loaded.append(plugin)
    owners: dict[str, str] = {}
    for plugin in loaded:
        for t in plugin.tools:
            if t.name in owners:
                raise ManifestError(
                    f"tool {t.name!r} is declared by two plugins ({owners[t.name]} and {plugin.name}); tool names are global"
                )
            owners[t.name] = plugin.name
    prompt_owners: dict[str, str] = {}
    for plugin in loaded:
        for p in plugin.prompts:
            if p.name in prompt_owners:
                raise ManifestError(
                    f"prompt {p.name!r} is declared by two plugins ({prompt_owners[p.name]} and {plugin.name}); "
                    "prompt names are global"
                )
            prompt_owners[p.name] = plugin.name
    shown: dict[str, Any] = {"excluded": sorted(out)} if out else {}
    log_line("plugins", "loaded", plugins=[p.name for p in loaded], tools=sum(len(p.tools) for p in loaded), **shown)
    return loaded


def _wanted(names: Sequence[str] | None, excluded: set[str]) -> list[tuple[str, str | None, str]]:
    """(module, entry name, source) of each plugin asked for."""
    registered = available_plugins()
    if names is None:
        return [(module, name, "entry-point") for name, module in sorted(registered.items()) if name not in excluded]
    wanted: list[tuple[str, str | None, str]] = []
    for name in names:
        if name in excluded:
            raise ManifestError(_excluded(name))
        if name in registered:
            wanted.append((registered[name], name, "entry-point"))
        elif "." in name:
            wanted.append((name, None, "module"))
        else:
            known = ", ".join(sorted(registered)) or "none"
            raise ManifestError(
                f"unknown plugin {name!r}: installed plugins ({ENTRY_POINT_GROUP} entry points) are {known}; "
                "a plugin that is not installed can be named by its module path (package.module)"
            )
    return wanted


def _excluded(name: str) -> str:
    return f"plugin {name!r} is excluded by EXCLUDED_PLUGINS: remove it from that setting to load it"
