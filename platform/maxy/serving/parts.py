"""What the routers of ``maxy serve`` share (:class:`Parts`), and what they hand back to run
beside the app."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..config import Settings
from ..db import Database
from ..plugins.discovery import LoadedPlugin
from .keys import ApiKeyStore


class Background(Protocol):
    def start(self) -> None: ...

    def stop(self) -> None: ...


@dataclass
class Parts:
    """What the routers of one app share, and what they hand back to run beside it."""

    settings: Settings
    plugins: Sequence[LoadedPlugin]
    store: ApiKeyStore
    db: Database
    embedder: Any
    host: str
    profiles: tuple[str, ...]
    stateless: bool = False  # /mcp answers each request without an MCP session
    running: list[Callable[[], AbstractAsyncContextManager[Any]]] = field(default_factory=list)
    background: list[Background] = field(default_factory=list)
    stopping: list[Callable[[], None]] = field(default_factory=list)
    tools: dict[str, list[str]] = field(default_factory=dict)  # role -> the MCP tools it serves
