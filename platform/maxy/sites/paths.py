"""The path of a ``/sites/...`` request, checked before the file system is touched.

The path is read as it came on the wire (still percent-encoded), split on ``/``, and each
segment is percent-decoded once. A decoded segment must be a safe name (:data:`SAFE_SEGMENT`:
an ASCII letter or digit, then letters, digits, ``.``, ``_``, ``~`` or ``-``, at most 128 in
all), so ``.``, ``..``, hidden names, a backslash, a NUL, an encoded ``/`` and a second layer of
encoding are all refused here, each with its own reason. Nothing in this module reads the disk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote_to_bytes

SAFE_SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._~-]{0,127}")
MAX_SEGMENTS = 32
MAX_PATH_CHARS = 2048
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")


@dataclass(frozen=True)
class SitePath:
    """A path that passed every check: its decoded segments, and whether it ended with ``/``."""

    segments: tuple[str, ...]
    trailing_slash: bool


@dataclass(frozen=True)
class Refused:
    """Why a path is refused (403): nul, backslash, empty-segment, dot-segment,
    encoded-dot-segment, encoded-slash, hidden, double-encoding, bad-encoding, unsafe-segment,
    unsafe-prefix, too-long."""

    reason: str


def segment_problem(raw: str) -> str | None:
    """Why one raw (still encoded) segment cannot name a file, or None when it can."""
    lowered = raw.lower()
    if "\x00" in raw or "%00" in lowered:
        return "nul"
    if "\\" in raw or "%5c" in lowered:
        return "backslash"
    if not raw:
        return "empty-segment"
    if _BAD_PERCENT.search(raw):
        return "bad-encoding"
    decoded = unquote_to_bytes(raw)
    if decoded in (b".", b".."):
        return "dot-segment" if decoded == raw.encode("latin-1", "replace") else "encoded-dot-segment"
    if b"/" in decoded:
        return "encoded-slash"
    if decoded.startswith(b"."):
        return "hidden"
    if b"%" in decoded:
        return "double-encoding"
    if not decoded.isascii() or not SAFE_SEGMENT.fullmatch(decoded.decode("ascii")):
        return "unsafe-segment"
    return None


def parse_site_path(raw: str) -> SitePath | Refused:
    """The request path after ``/sites`` (``""``, ``"/"`` or ``"/a/b.html"``, as sent), checked.

    ``""`` is the sites folder itself without its slash (a directory: redirected), ``"/"`` the
    same folder with it."""
    if len(raw) > MAX_PATH_CHARS:
        return Refused("too-long")
    if not raw:
        return SitePath((), trailing_slash=False)
    if not raw.startswith("/"):
        return Refused("unsafe-prefix")
    body = raw[1:]
    if not body:
        return SitePath((), trailing_slash=True)
    trailing = body.endswith("/")
    raw_segments = (body[:-1] if trailing else body).split("/")  # "//" leaves one empty segment
    if len(raw_segments) > MAX_SEGMENTS:
        return Refused("too-long")
    for segment in raw_segments:
        problem = segment_problem(segment)
        if problem:
            return Refused(problem)
    return SitePath(tuple(unquote_to_bytes(s).decode("ascii") for s in raw_segments), trailing_slash=trailing)


def split_request_path(raw_path: str) -> tuple[str, str] | Refused:
    """``/sites/a/b`` -> (``"/sites"``, ``"/a/b"``): the first segment, which must decode to
    ``sites`` (the route matched it decoded), and the rest as sent."""
    first, slash, rest = raw_path.removeprefix("/").partition("/")
    if _BAD_PERCENT.search(first) or unquote_to_bytes(first) != b"sites":
        return Refused("unsafe-prefix")
    return "/sites", slash + rest
