"""Text at the boundary: what is refused on the way in, and what is repaired on the way out.

Every way in (HTTP bodies, MCP arguments, command-line arguments and options, file contents)
calls :func:`check_clean` once, before anything is written: a NUL character or a lone surrogate
(U+D800 to U+DFFF, which no UTF-8 text can hold) anywhere in a string, or in an object's key,
is refused with one line naming the field (``assessment.reasoning``, ``paths[0]``).

Every way out (MCP results, JSON answers, pages, printed lines) passes its data through
:func:`printable`, so a string stored before these checks existed, or read from a file, never
breaks a reply: each lone surrogate becomes U+FFFD.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import ValidationError

REPLACEMENT = "\ufffd"
NUL_REASON = "holds a NUL character (U+0000), which is not text: remove it"
SURROGATE_REASON = "holds a lone surrogate (U+D800 to U+DFFF), which is not text: send UTF-8"
_MAX_DEPTH = 200  # deeper values are refused by the JSON readers before they get here


def bad_text(text: str, *, nul: bool = True) -> str | None:
    """Why ``text`` is refused (the reason, in words), or None when it is taken. ``nul=False``
    takes a NUL (what a database already holds, restored as it was: ``maxy import``)."""
    if nul and "\x00" in text:
        return NUL_REASON
    if not text.isascii() and _has_surrogate(text):
        return SURROGATE_REASON
    return None


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _key_path(field: str, key: object) -> str:
    return f"{field}.{key}" if field else str(key)


def find_bad(value: Any, field: str = "", *, nul: bool = True) -> tuple[str, str] | None:
    """(the field path, the reason) of the first string in ``value`` that cannot be stored, or
    None. Object keys are checked as well as values; lists are named ``field[i]``."""
    stack: list[tuple[Any, str, int]] = [(value, field, 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, str):
            reason = bad_text(item, nul=nul)
            if reason is not None:
                return path or "value", reason
        elif depth < _MAX_DEPTH and isinstance(item, Mapping):
            for key, inner in reversed(list(item.items())):
                if isinstance(key, str):
                    reason = bad_text(key, nul=nul)
                    if reason is not None:
                        return path or "value", f"has a key that {reason}"
                stack.append((inner, _key_path(path, printable(key)), depth + 1))
        elif depth < _MAX_DEPTH and isinstance(item, (list, tuple)):
            for i in range(len(item) - 1, -1, -1):
                stack.append((item[i], f"{path}[{i}]", depth + 1))
    return None


def check_clean(value: Any, field: str = "", *, nul: bool = True) -> None:
    """Refuse (ValidationError naming the field) a value holding a NUL or a lone surrogate
    (``nul=False``: only a lone surrogate, which no database can hold)."""
    bad = find_bad(value, field, nul=nul)
    if bad is not None:
        raise ValidationError(*bad)


def printable(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (and keys) replaced by U+FFFD; the same
    object when there is nothing to replace."""
    if isinstance(value, str):
        if value.isascii() or not _has_surrogate(value):
            return value
        return _replace_surrogates(value)
    if isinstance(value, Mapping):
        return {printable(k): printable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [printable(v) for v in value]
    if isinstance(value, tuple):
        return tuple(printable(v) for v in value)
    return value


def _replace_surrogates(text: str) -> str:
    """Each lone surrogate becomes one U+FFFD (a string never holds a paired one)."""
    return "".join(REPLACEMENT if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in text)


def json_kind(value: Any) -> str:
    """What a decoded JSON value is, for error messages: "an object", "a list", "null", ..."""
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )
