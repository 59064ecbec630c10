"""One module per console page; each reads only through guarded functions, with the view's caller."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import node, search, status

ROUTES: list[tuple[str, Callable[..., Any], list[str]]] = [
    *search.ROUTES,
    *node.ROUTES,
    *status.ROUTES,
]
