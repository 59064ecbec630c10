"""Argument checks shared by every plugin's tools.

Each check raises :class:`ToolError` with the message ``"<field>: <reason>"`` before anything
is written, so the agent learns which argument to fix. :func:`tool_errors` turns the
platform's own input and write refusals (``ValidationError``, ``GraphWriteError``) into the
same kind of error, with the same message.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from ..errors import GraphWriteError, ValidationError
from .api import ToolError

F = TypeVar("F", bound=Callable[..., Any])


def require(condition: bool, field_name: str, reason: str) -> None:
    """Raise the standard bad-input error naming the field."""
    if not condition:
        raise ToolError(f"{field_name}: {reason}")


def tool_errors(fn: F) -> F:
    """Turn the library's input and write refusals into ToolErrors (same message, field first)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (ValidationError, GraphWriteError) as err:
            raise ToolError(str(err)) from err

    return wrapper  # type: ignore[return-value]


def check_text(value: object, field: str, *, limit: int, required: bool = True) -> str | None:
    """The stripped text; ``None`` when it is optional and not given."""
    if value is None and not required:
        return None
    require(isinstance(value, str) and bool(value.strip()), field, "a non-empty string is required")
    assert isinstance(value, str)
    require(len(value) <= limit, field, f"at most {limit:,} characters (got {len(value):,})")
    return value.strip()


def check_int(value: object, field: str, lo: int, hi: int) -> int:
    require(
        isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi,
        field,
        f"an integer from {lo} to {hi}",
    )
    assert isinstance(value, int)
    return int(value)


def check_string_list(value: object, field: str, *, max_items: int, max_chars: int) -> list[str]:
    """Distinct stripped strings, in order; a single string counts as a list of one."""
    if isinstance(value, str):
        value = [value]
    require(isinstance(value, (list, tuple)), field, "a list of strings")
    assert isinstance(value, (list, tuple))
    out: list[str] = []
    for i, item in enumerate(value):
        require(isinstance(item, str) and bool(item.strip()), f"{field}[{i}]", "a non-empty string")
        require(len(item) <= max_chars, f"{field}[{i}]", f"at most {max_chars} characters")
        if item.strip() not in out:
            out.append(item.strip())
    require(len(out) <= max_items, field, f"at most {max_items} items")
    return out
