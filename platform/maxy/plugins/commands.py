"""The CLI hook: plugins add their own ``maxy`` commands.

A plugin package may define ``register_commands(app: typer.Typer)``; the core command line
calls it for every plugin installed in the ``maxy.plugins`` entry-point group, so the core
never names a plugin:

    def register_commands(app: typer.Typer) -> None:
        group = typer.Typer(no_args_is_help=True, help="...")
        app.add_typer(group, name="session")

A plugin that cannot be imported, or whose hook fails, costs only its own commands: one
warning line on stderr names it, and every other command keeps working.
:func:`cli_context` gives a command the same pinned :class:`ToolContext` a tool gets.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .api import ToolContext
from .discovery import available_plugins

if TYPE_CHECKING:
    import typer

HOOK = "register_commands"


def register_plugin_commands(app: typer.Typer, plugins: Mapping[str, str] | None = None) -> list[str]:
    """Call ``register_commands(app)`` of every plugin (entry-point name -> module; default: the
    installed ones); returns the names of the plugins that added commands."""
    found = available_plugins() if plugins is None else dict(plugins)
    added: list[str] = []
    for name, module_name in sorted(found.items()):
        try:
            hook = getattr(importlib.import_module(module_name), HOOK, None)
            if hook is None:
                continue
            hook(app)
        except Exception as exc:  # noqa: BLE001 - a broken plugin must not break the command line
            _warn(name, module_name, exc)
            continue
        added.append(name)
    return added


def _warn(name: str, module_name: str, exc: BaseException) -> None:
    reason = " ".join(f"{type(exc).__name__}: {exc}".split())
    sys.stderr.write(f"warning: plugin {name!r} ({module_name}) is left out of the commands: {reason}\n")
    sys.stderr.flush()


def cli_context(settings: Any = None, plugin: str = "") -> ToolContext:
    """An admin ToolContext from the environment (ACCOUNT_ID validated, pins applied), for a
    plugin's command to call the same code its tools run."""
    from ..accounts import validate_account
    from ..config import load_settings

    settings = settings or load_settings()
    account = validate_account(settings.data_root, settings.ACCOUNT_ID)
    return ToolContext.pinned_by(settings, account, role="admin", embedder=None, plugin=plugin)
