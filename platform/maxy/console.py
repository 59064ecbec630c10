"""What every ``maxy`` command prints through: the two consoles, JSON output, and
:func:`friendly`, which turns an error into one line naming the flag or setting, the reason
and the fix, and an exit code (2: a bad flag or setting, 1: a failure while running).

Shared by the core command line, the feature packages' commands and plugins' commands
(``maxy.plugins`` re-exports them), so they all fail and print the same way. ``--debug`` (or
``MAXY_DEBUG=1``) adds the traceback above the line.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import sys
import traceback
from collections.abc import Callable
from functools import wraps
from typing import Any, NoReturn, TypeVar

import typer
from rich.console import Console, ConsoleDimensions
from rich.markup import escape

from .errors import EmbeddingError, MaxyError, ValidationError

F = TypeVar("F", bound=Callable[..., Any])
PIPED_WIDTH = 10_000  # wide enough that no line of ours is ever cut when the output is not a terminal


class _Console(Console):
    """Wraps text at the terminal's width on a terminal only: piped or redirected output keeps
    every line whole, so another program reads each value on its line."""

    @property
    def size(self) -> ConsoleDimensions:
        dims = super().size
        if self.is_terminal or self._width is not None:
            return dims
        return ConsoleDimensions(PIPED_WIDTH, dims.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size

    @property
    def soft_wrap(self) -> bool:
        return self._soft_wrap or not self.is_terminal

    @soft_wrap.setter
    def soft_wrap(self, value: bool) -> None:
        self._soft_wrap = value

    def _render_buffer(self, buffer: Any) -> str:
        """What is written, with each lone surrogate (a string stored before the boundary
        checks) shown as U+FFFD instead of failing the whole output."""
        from .textcheck import printable

        return str(printable(super()._render_buffer(buffer)))


out = _Console()
err = _Console(stderr=True)

_debug = False


def set_debug(on: bool) -> None:
    global _debug
    _debug = on


def debug_enabled() -> bool:
    """``--debug`` or ``MAXY_DEBUG`` (1/true/yes): show the traceback behind an error."""
    return _debug or os.environ.get("MAXY_DEBUG", "").strip().lower() in ("1", "true", "yes", "on")


def report(message: str, exc: BaseException | None = None) -> None:
    """Print ``error: message`` as one line on stderr (with --debug, the traceback above it)."""
    if exc is not None and debug_enabled():
        traceback.print_exception(exc, file=sys.stderr)
    line = escape(" ".join(message.split()))  # one line, whatever the message held
    err.print(f"[red]error:[/red] {line}", highlight=False, soft_wrap=True, emoji=False)


def fail(message: str, code: int = 1, exc: BaseException | None = None) -> NoReturn:
    """:func:`report` the error and exit with ``code``."""
    report(message, exc)
    raise typer.Exit(code)


def friendly(fn: F) -> F:
    """Errors become one line and an exit code (see the module docstring), never a traceback;
    an error about an input field names the command's flag for it (``expandHops`` -> ``--expand-hops``)."""
    flags = _flags(fn)

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        _one_line_values(kwargs, flags)
        try:
            return fn(*args, **kwargs)
        except typer.Exit:
            raise
        except KeyboardInterrupt:
            err.print("interrupted")
            raise typer.Exit(130) from None
        except Exception as exc:  # noqa: BLE001 - every error becomes one line (describe knows which)
            described = describe(exc, flags)
            if described is None:
                raise
            message, code = described
            fail(message, code, exc)

    return wrapper  # type: ignore[return-value]


MULTILINE_OPTIONS = ("--prop",)  # values that may hold text of several lines


def _one_line_values(kwargs: dict[str, Any], flags: dict[str, str]) -> None:
    """An argument or option holding a NUL or a lone surrogate (bytes that are not UTF-8, in a
    UTF-8 locale) is refused, naming it; so is an option's value with a control character (a
    pasted newline, a tab): names, ids, paths and filters are one line."""
    from .textcheck import bad_text

    for name, value in kwargs.items():
        flag = flags.get(name, "")
        for item in value if isinstance(value, (list, tuple)) else [value]:
            text = os.fspath(item) if isinstance(item, (str, os.PathLike)) else ""
            reason = bad_text(text) if isinstance(text, str) else None
            if reason is not None and flag:
                fail(f"{flag}: {reason}", 2)
            if not flag.startswith("--") or flag in MULTILINE_OPTIONS:
                continue
            if any(ord(ch) < 32 or ord(ch) == 127 for ch in text):
                fail(f"{flag}: {text!r} has a control character (a pasted newline?); give the value on one line", 2)


def describe(exc: BaseException, flags: dict[str, str] | None = None) -> tuple[str, int] | None:
    """``(one line, exit code)`` for an error a person can act on, or None for a bug."""
    if isinstance(exc, ValidationError):
        flag = flag_for(exc.field, flags or {})
        if flag:
            return f"{flag}: {exc.reason}", 2
        return str(exc), exc.exit_code
    if isinstance(exc, MaxyError):
        return str(exc), exc.exit_code
    if isinstance(exc, EmbeddingError):
        return str(exc), 1
    if type(exc).__module__.startswith("neo4j"):
        return _neo4j_error(exc), 1
    if isinstance(exc, UnicodeDecodeError):
        return (
            f"a file is not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8 and run the command again",
            1,
        )
    if isinstance(exc, OSError) and exc.strerror:
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror}", 1
    return None


def _neo4j_error(exc: BaseException) -> str:
    """A driver error that reached the command line, named by the setting that decides it."""
    code = str(getattr(exc, "code", "") or "")
    message = " ".join(str(getattr(exc, "message", None) or exc).split())
    name = type(exc).__name__
    if code.endswith("DatabaseNotFound"):
        return (
            f"NEO4J_DATABASE: the server has no such database ({message}); set it to a database "
            "that SHOW DATABASES lists, or unset it for the server's default"
        )
    if name == "AuthError" or code.startswith("Neo.ClientError.Security"):
        return f"NEO4J_USER / NEO4J_PASSWORD: the server refused them ({message}); set the right user and password"
    if name in ("ServiceUnavailable", "SessionExpired"):
        return f"NEO4J_URI: Neo4j is not reachable ({message}); start it with `maxy neo4j start` or fix NEO4J_URI"
    if name == "ConfigurationError":
        return f"NEO4J_URI: {message}"
    return f"Neo4j refused the request: {code + ': ' if code else ''}{message}"


def _flags(fn: Callable[..., Any]) -> dict[str, str]:
    """Python parameter name -> how the command line spells it (``--expand-hops``, ``QUERY``)."""
    from typer.models import ArgumentInfo, OptionInfo

    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return {}
    flags: dict[str, str] = {}
    for param in params:
        info = param.default
        if isinstance(info, OptionInfo):
            decls = [d for d in (info.param_decls or ()) if d.startswith("--")]
            flags[param.name] = max(decls, key=len).split("/")[0] if decls else "--" + param.name.replace("_", "-")
        elif isinstance(info, ArgumentInfo):
            flags[param.name] = (info.metavar or param.name).upper()
    return flags


# API field names whose command-line parameter is named differently.
_FIELD_PARAMS = {
    "properties": ("props",),
    "nodeIds": ("ids",),
    "attachmentId": ("attachment",),
    "allowedScopes": ("scope", "scopes"),
    "knowledgeKeywords": ("keyword",),
    "displayName": ("name",),
}


def flag_for(field: str, flags: dict[str, str]) -> str | None:
    """The flag that sets the API field ``field`` (``expandHops`` -> ``--expand-hops``), if any."""
    if field in flags.values():  # raised with the flag's own name
        return field
    parts = field.split(".")
    for part in dict.fromkeys([parts[-1], parts[0]]):  # properties.validFrom: --valid-from, else --prop
        snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", part).lower()
        for candidate in (part, snake, snake.removesuffix("s"), snake + "s", *_FIELD_PARAMS.get(part, ())):
            if candidate in flags:
                return flags[candidate]
        kebab = "--" + snake.replace("_", "-")
        if kebab in flags.values():
            return kebab
    return None


def usage_line(exc: Any) -> str:
    """A command-line usage error (typer's ``UsageError``) as one line: the flag, the reason, the help."""
    from typer._click.exceptions import BadOptionUsage, BadParameter, MissingParameter, NoSuchOption

    ctx = getattr(exc, "ctx", None)
    see = f"see `{ctx.command_path} --help`" if ctx is not None else "see `maxy --help`"
    if isinstance(exc, BadParameter):
        name = _param_name(exc)
        if isinstance(exc, MissingParameter):
            return f"{name}: missing; {see}"
        return f"{name}: {_bad_value(exc)}; {see}"
    if isinstance(exc, BadOptionUsage):
        needs = "requires an argument" in str(exc.message)
        return f"{exc.option_name}: {'needs a value' if needs else str(exc.message).rstrip('.')}; {see}"
    if isinstance(exc, NoSuchOption):
        maybe = f" (did you mean {' or '.join(sorted(exc.possibilities))}?)" if exc.possibilities else ""
        return f"{exc.option_name}: no such option{maybe}; {see}"
    return f"{str(exc.message).rstrip('.')}; {see}"


def _param_name(exc: Any) -> str:
    param = exc.param
    if exc.param_hint is not None:
        hint = exc.param_hint
        return " / ".join(hint) if isinstance(hint, (list, tuple)) else str(hint).strip("'")
    if param is None:
        return "value"
    if getattr(param, "param_type_name", "") == "argument":
        return str(param.name).upper()
    opts = [o for o in (*param.opts, *param.secondary_opts) if o.startswith("--")] or list(param.opts)
    return max(opts, key=len) if opts else str(param.name)


# Reasons for the types options take, as pydantic reports their failures (typer parses with it).
_VALUE_REASONS = {
    "int_parsing": "is not a whole number",
    "int_from_float": "is not a whole number",
    "float_parsing": "is not a number",
    "bool_parsing": "is not true or false",
}
_VALUE_BOUNDS = {
    "gt": "must be above {}",
    "ge": "must be at least {}",
    "lt": "must be below {}",
    "le": "must be at most {}",
}


def _bad_value(exc: Any) -> str:
    """Why the value was refused, with the value itself when typer's parser knows it."""
    cause = exc.__cause__
    errors = cause.errors() if cause is not None and hasattr(cause, "errors") else []
    if not errors:
        return " ".join(str(exc.message).split()).rstrip(".")
    first = errors[0]
    value = first.get("input")
    shown = f"{value!r} " if isinstance(value, (str, int, float)) else ""
    bounds = first.get("ctx") or {}
    bound = next((k for k in _VALUE_BOUNDS if k in bounds), None)
    if bound:
        limit = bounds[bound]
        return shown + _VALUE_BOUNDS[bound].format(f"{limit:g}" if isinstance(limit, float) else limit)
    return shown + _VALUE_REASONS.get(first["type"], " ".join(str(first["msg"]).split()).lower())


def emit_json(data: Any) -> None:
    from .textcheck import printable

    sys.stdout.write(json.dumps(printable(data), indent=2, default=str) + "\n")
