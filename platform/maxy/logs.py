"""One greppable line per operation: ``[component] key=value ...`` on stderr.

Library code never prints to stdout: stdio MCP servers use stdout for JSON-RPC.
"""

from __future__ import annotations

import logging
import os
import sys

_logger = logging.getLogger("maxy")


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
    _ensure_handler()
    _logger.log(level, line)
    return line


def short(identifier: str | None, n: int = 8) -> str:
    return (identifier or "none")[:n]


_configured = False


def _ensure_handler() -> None:
    global _configured
    if _configured:
        return
    _configured = True
    if not _logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        _logger.addHandler(handler)
        # MAXY_LOG_LEVEL=WARNING keeps only warnings and errors (scripts, demos).
        level = os.environ.get("MAXY_LOG_LEVEL", "INFO").upper()
        _logger.setLevel(getattr(logging, level, logging.INFO))
        _logger.propagate = True
