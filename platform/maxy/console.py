"""What every ``maxy`` command prints through: the two consoles, JSON output, and
:func:`friendly`, which turns an operator-facing error into one clear line and exit code 1.

Shared by the core command line, the feature packages' commands and plugins' commands
(``maxy.plugins`` re-exports them), so they all fail and print the same way.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

import typer
from rich.console import Console

from .embeddings.base import EmbeddingError
from .errors import MaxyError

out = Console()
err = Console(stderr=True)
F = TypeVar("F", bound=Callable[..., Any])


def friendly(fn: F) -> F:
    """Operator-facing errors are one clear message and exit code 1, never a traceback."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (MaxyError, EmbeddingError) as exc:
            err.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
            raise typer.Exit(1) from None
        except KeyboardInterrupt:
            err.print("interrupted")
            raise typer.Exit(130) from None

    return wrapper  # type: ignore[return-value]


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")
