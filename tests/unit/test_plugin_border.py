"""Every first-party plugin keeps to the plugin border: it imports the public plugin API
(``maxy.plugins``), the platform's domain packages and its own modules; never the plugin
system's internals, the serving stack (MCP, the HTTP app, the console), the core command line
or another plugin."""

from __future__ import annotations

import ast
from pathlib import Path

import maxy_plugins

from tests.imports import from_module

PLUGINS = Path(maxy_plugins.__file__).parent
BEYOND = ("maxy.plugins.", "maxy.mcp", "maxy.serving", "maxy.webconsole", "maxy.cli")


def _imported(path: Path, package: str) -> set[str]:
    """Every module a source file imports, relative imports resolved against its package."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            found.add(".".join(from_module(package.split("."), node)))
    return found


def _plugins() -> list[Path]:
    return sorted(p for p in PLUGINS.iterdir() if (p / "__init__.py").is_file())


def test_all_seven_first_party_plugins_are_checked() -> None:
    names = [p.name for p in _plugins()]
    assert names == ["admin", "community", "memory", "memory_agent", "session", "taskstore", "work"]


def test_plugins_import_only_the_public_api_the_domain_and_their_own_modules() -> None:
    crossings = []
    for plugin in _plugins():
        own = f"maxy_plugins.{plugin.name}"
        for path in sorted(plugin.rglob("*.py")):
            package = ".".join(["maxy_plugins", *path.relative_to(PLUGINS).parent.parts])
            for module in _imported(path, package):
                if module.startswith(BEYOND) or (
                    module.startswith("maxy_plugins") and module != own and not module.startswith(own + ".")
                ):
                    crossings.append(f"{path.relative_to(PLUGINS)} imports {module}")
    assert crossings == []


def test_relative_imports_resolve_to_the_module_they_name(tmp_path: Path) -> None:
    source = tmp_path / "tools.py"
    source.write_text("from ..work import tools\nfrom . import cli\nfrom .search import run\nimport maxy.mcp.server\n")
    assert _imported(source, "maxy_plugins.memory") == {
        "maxy_plugins.work",
        "maxy_plugins.memory",
        "maxy_plugins.memory.search",
        "maxy.mcp.server",
    }
