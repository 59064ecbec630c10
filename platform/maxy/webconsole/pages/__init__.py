"""One module per console page; each reads only through guarded functions, with the view's caller."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import audit, conversations, documents, node, reports, search, status, tasks

ROUTES: list[tuple[str, Callable[..., Any], list[str]]] = [
    route for page in (search, node, documents, conversations, reports, tasks, audit, status) for route in page.ROUTES
]
