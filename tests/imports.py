"""Reading the imports of a source file, for the tests that check how modules depend on each
other (the import graph, the plugin border)."""

from __future__ import annotations

import ast


def from_module(package: list[str], node: ast.ImportFrom) -> list[str]:
    """The module a ``from ... import`` names, as parts, its leading dots resolved against the
    importing file's ``package`` (``from ..graph import x`` in ``maxy.search`` is ``maxy.graph``)."""
    base = package[: len(package) - node.level + 1] if node.level else []
    return base + (node.module.split(".") if node.module else [])
