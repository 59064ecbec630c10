"""Maxy: a knowledge-graph memory for AI agents, on Neo4j.

``from maxy import Memory`` gives the Python API (``maxy.memory.api``); it is imported on first
use, so ``import maxy`` stays light for the command line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Memory", "__version__"]

if TYPE_CHECKING:
    from .memory.api import Memory


def __getattr__(name: str) -> Any:
    if name == "Memory":
        from .memory.api import Memory

        return Memory
    raise AttributeError(f"module 'maxy' has no attribute {name!r}")
