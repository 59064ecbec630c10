"""One greppable line per operation: ``[component] key=value ...`` on stderr.

Library code never prints to stdout: stdio MCP servers use stdout for JSON-RPC. As a library
Maxy follows Python's logging conventions: the ``maxy`` logger has only a ``NullHandler``, so
an application sees the lines when it configures logging (``logging.basicConfig``) and not
otherwise; Maxy's own entry points (the command line, the servers) call :func:`configure`.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TextIO

_logger = logging.getLogger("maxy")
_logger.addHandler(logging.NullHandler())  # silent until the application configures logging


def _fmt_value(value: object) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.1f}" if abs(value) >= 10 else f"{value:.3f}"
    if isinstance(value, (list, tuple, set, frozenset)):
        return ",".join(str(v) for v in value) or "-"
    text = str(value)
    if not text:
        return '""'
    if any(ch.isspace() for ch in text) or '"' in text:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    return text


def format_line(component: str, *words: str, **fields: object) -> str:
    parts = [f"[{component}]", *words]
    parts.extend(f"{key.replace('_', '-')}={_fmt_value(val)}" for key, val in fields.items())
    return " ".join(parts)


def log_line(component: str, *words: str, level: int = logging.INFO, **fields: object) -> str:
    """Emit and return the line. Keys use ``_`` in Python and ``-`` on the wire (expand_ms -> expand-ms)."""
    line = format_line(component, *words, **fields)
    _logger.log(level, line)
    return line


def short(identifier: str | None, n: int = 8) -> str:
    return (identifier or "none")[:n]


class _Stderr(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is when a line is logged (as the standard library's
    last-resort handler does), so a caller that redirects stderr gets the lines too."""

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, _value: object) -> None:
        pass


def configure(level: str | None = None) -> None:
    """For Maxy's own entry points: the lines on stderr at ``level`` (the command line's
    --quiet / --verbose), else ``LOG_LEVEL`` (``MAXY_LOG_LEVEL``), else every line."""
    if not any(isinstance(h, _Stderr) for h in _logger.handlers):
        handler = _Stderr()
        handler.setFormatter(logging.Formatter("%(message)s"))
        _logger.addHandler(handler)
    if level is None:
        level = os.environ.get("LOG_LEVEL") or os.environ.get("MAXY_LOG_LEVEL") or "INFO"
    _logger.setLevel(getattr(logging, level.strip().upper(), logging.INFO))
