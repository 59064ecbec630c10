"""The Content-Type of a published file, by its extension (lower-cased); anything else is
``application/octet-stream``, which a browser downloads rather than renders."""

from __future__ import annotations

from pathlib import PurePath

OCTET_STREAM = "application/octet-stream"
HTML_SUFFIXES = frozenset({".html", ".htm"})
_UTF8 = "; charset=utf-8"

TYPES = {
    ".html": "text/html" + _UTF8,
    ".htm": "text/html" + _UTF8,
    ".css": "text/css" + _UTF8,
    ".js": "text/javascript" + _UTF8,
    ".mjs": "text/javascript" + _UTF8,
    ".json": "application/json",
    ".map": "application/json",
    ".webmanifest": "application/manifest+json",
    ".txt": "text/plain" + _UTF8,
    ".md": "text/markdown" + _UTF8,
    ".csv": "text/csv" + _UTF8,
    ".xml": "application/xml",
    ".pdf": "application/pdf",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".avif": "image/avif",
    ".ico": "image/x-icon",
    ".bmp": "image/bmp",
    ".woff": "font/woff",
    ".woff2": "font/woff2",
    ".ttf": "font/ttf",
    ".otf": "font/otf",
    ".wasm": "application/wasm",
    ".mp4": "video/mp4",
    ".webm": "video/webm",
    ".mp3": "audio/mpeg",
    ".ogg": "audio/ogg",
    ".wav": "audio/wav",
    ".zip": "application/zip",
}


def content_type(name: str) -> str:
    return TYPES.get(PurePath(name).suffix.lower(), OCTET_STREAM)


def is_html(name: str) -> bool:
    return PurePath(name).suffix.lower() in HTML_SUFFIXES
