"""What this install's plugins serve, for telling a specialist's tool names apart.

The catalogue holds every Maxy plugin it can name:

- the plugins this process loaded (their code checked against their ``PLUGIN.md``);
- every plugin installed in the ``maxy.plugins`` entry-point group, read from its ``PLUGIN.md``
  without importing its code or the packages above it (found as the import system finds it,
  with nothing run), so a server started for one plugin (``maxy mcp serve memory``,
  ``maxy mcp config --per-plugin``) judges names by the whole install, as ``serve all`` does;
- the first-party plugin folders shipped in ``maxy_plugins`` but not installed;
- the plugins named in ``EXCLUDED_PLUGINS``, which this install runs without.

A plugin *serves* a tool when it declares an MCP server and the tool is on its admin or
public allow-list (the tools its server registers). Excluded plugins serve nothing.
"""

from __future__ import annotations

import importlib.util
import logging
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib.machinery import ModuleSpec
from pathlib import Path

from ..logs import log_line
from ..plugins.discovery import LoadedPlugin, available_plugins
from ..plugins.manifest import MANIFEST_FILE, ManifestError, load_manifest
from .names import PLUGIN_PREFIX

FIRST_PARTY_PACKAGE = "maxy_plugins"
COMBINED_SERVER = "maxy"  # the one server `maxy mcp config` writes, serving every plugin's tools


@dataclass(frozen=True)
class PluginEntry:
    """One Maxy plugin as the catalogue knows it."""

    name: str
    server: str | None  # its MCP server; None: it declares none (or its manifest could not be read)
    tools: frozenset[str]  # the tools its server registers
    folder: Path | None  # the package folder holding PLUGIN.md (and agents/)
    source: str  # "loaded", "installed" or "bundled" (shipped but not installed)
    excluded: bool = False

    @property
    def active(self) -> bool:
        """Served on this install: loaded or installed, and not excluded."""
        return self.source != "bundled" and not self.excluded

    @property
    def agents_dir(self) -> Path | None:
        return self.folder / "agents" if self.folder is not None else None


@dataclass(frozen=True)
class Catalogue:
    plugins: dict[str, PluginEntry]

    def resolve(self, namespace: str) -> tuple[str | None, str]:
        """The Maxy plugin a namespace names and the server it names; (None, namespace) when the
        namespace is no Maxy plugin's (a third-party server).

        ``plugin_<p>_<server>`` names Maxy plugin ``<p>`` when ``<p>`` is a plugin this catalogue
        knows (loaded, installed, shipped or excluded); a short namespace names the plugin whose
        server (or, for one that is not served, whose name) it is."""
        if namespace.startswith(PLUGIN_PREFIX):
            rest = namespace[len(PLUGIN_PREFIX) :]
            known = [p for p in self.plugins if rest.startswith(p + "_")]
            exact = [p for p in known if rest == f"{p}_{self.plugins[p].server or p}"]
            if exact or known:
                plugin = exact[0] if exact else max(known, key=len)
                return plugin, rest[len(plugin) + 1 :]
            return None, namespace
        by_server = sorted((p for p in self.plugins.values() if p.server == namespace), key=lambda p: not p.active)
        if by_server:
            return by_server[0].name, namespace
        if namespace in self.plugins:
            return namespace, namespace
        return None, namespace

    def owner_of(self, tool: str) -> PluginEntry | None:
        """The plugin declaring ``tool`` (tool names are global), served or excluded."""
        return next((p for p in self.plugins.values() if tool in p.tools), None)

    def agent_folders(self) -> list[PluginEntry]:
        """The served plugins whose definitions are read, by name."""
        return [p for _, p in sorted(self.plugins.items()) if p.active and p.agents_dir is not None]


def served_tools(plugin: LoadedPlugin) -> frozenset[str]:
    if plugin.mcp_server is None:
        return frozenset()
    return frozenset(t.name for t in plugin.tools if t.admin_allowlist or t.public_allowlist)


def build_catalogue(loaded: Sequence[LoadedPlugin], excluded: Iterable[str] = ()) -> Catalogue:
    out = set(excluded)
    entries: dict[str, PluginEntry] = {}
    for plugin in loaded:
        folder = plugin.manifest.path.parent if plugin.manifest.path is not None else None
        entries[plugin.name] = PluginEntry(
            plugin.name, plugin.mcp_server, served_tools(plugin), folder, "loaded", plugin.name in out
        )
    for name, module in sorted(available_plugins().items()):
        if name not in entries:
            entries[name] = _installed(name, module, name in out)
    for folder in _first_party_folders():
        name = folder.name
        if name not in entries:
            entries[name] = PluginEntry(name, None, frozenset(), folder, "bundled", name in out)
    for name in sorted(out - set(entries)):
        entries[name] = PluginEntry(name, None, frozenset(), None, "bundled", True)
    return Catalogue(entries)


def _installed(name: str, module: str, excluded: bool) -> PluginEntry:
    """An installed plugin from its manifest alone (its code is not imported here)."""
    try:
        folder = module_folder(module)
        if folder is None:
            raise ManifestError(f"plugin module {module!r} is not found on disk")
        manifest = load_manifest(folder / MANIFEST_FILE)
    except Exception as err:  # noqa: BLE001 - a broken plugin is named, and serves nothing
        log_line(
            "mcp",
            "warn",
            level=logging.WARNING,
            reason="plugin-manifest-unreadable",
            plugin=name,
            error=" ".join(str(err).split())[:200],
        )
        return PluginEntry(name, None, frozenset(), None, "installed", excluded)
    tools = frozenset(t for t, f in manifest.tools.items() if f.admin_allowlist or f.public_allowlist)
    return PluginEntry(
        name, manifest.mcp_server, tools if manifest.mcp_server else frozenset(), folder, "installed", excluded
    )


def module_folder(module: str) -> Path | None:
    """The folder of ``module``'s file, found as an import would find it but with no code run:
    ``importlib.util.find_spec`` imports the packages above a dotted name; here each level is
    asked of the import system's finders with its parent's search path instead."""
    spec: ModuleSpec | None = None
    search: Sequence[str] | None = None
    for depth, part in enumerate(module.split(".")):
        if depth and search is None:
            return None  # a module above it, not a package: nothing is inside
        name = f"{spec.name}.{part}" if spec is not None else part
        spec = next((found for finder in sys.meta_path if (found := _ask(finder, name, search)) is not None), None)
        if spec is None:
            return None
        search = spec.submodule_search_locations
    return Path(spec.origin).parent if spec is not None and spec.origin else None


def _ask(finder: object, name: str, search: Sequence[str] | None) -> ModuleSpec | None:
    find = getattr(finder, "find_spec", None)
    return find(name, search) if find is not None else None


def _first_party_folders() -> list[Path]:
    spec = importlib.util.find_spec(FIRST_PARTY_PACKAGE)
    folders: list[Path] = []
    for location in (spec.submodule_search_locations or []) if spec is not None else []:
        folders.extend(sorted(p.parent for p in Path(location).glob(f"*/{MANIFEST_FILE}")))
    return folders
