"""Files to a :class:`ParsedDocument`: a title and a list of (heading, text) sections.

The formats live in :mod:`maxy.ingest.formats`, one module per family; this module keeps the
names other code imports (``parse_file``, ``parse_content``, ``ParsedDocument``,
``SUPPORTED_EXTENSIONS`` ...)."""

from __future__ import annotations

from .formats import (
    AS_TEXT_HINT,
    MAX_FILE_BYTES,
    MEDIA_TYPES,
    SUPPORTED_EXTENSIONS,
    ParsedDocument,
    ParsedSection,
    is_supported,
    media_type_for,
    parse_asciidoc,
    parse_content,
    parse_file,
    parse_html,
    parse_markdown,
    parse_rst,
    parse_text,
    read_text_file,
    unsupported,
)

__all__ = [
    "AS_TEXT_HINT",
    "MAX_FILE_BYTES",
    "MEDIA_TYPES",
    "SUPPORTED_EXTENSIONS",
    "ParsedDocument",
    "ParsedSection",
    "is_supported",
    "media_type_for",
    "parse_asciidoc",
    "parse_content",
    "parse_file",
    "parse_html",
    "parse_markdown",
    "parse_rst",
    "parse_text",
    "read_text_file",
    "unsupported",
]
