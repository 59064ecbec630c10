"""The community plugin: members' profiles, networks, intents, discovery, opportunities and
negotiations as MCP tools (server ``community``). Each ``*_tools`` module of the package
declares the tools of one part; importing them registers the tools."""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    if _module.name.endswith("_tools"):
        importlib.import_module(f"{__name__}.{_module.name}")
