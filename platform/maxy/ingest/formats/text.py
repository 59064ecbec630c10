"""Plain text: paragraph blocks, split into sections only on obvious heading lines (ALL CAPS,
numbered "2.1 Setup", "Chapter 3", or underlined lines)."""

from __future__ import annotations

import re

from .document import ParsedDocument, finish

_NUMBERED = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[IVXLC]+\.)\s+\S")
_NAMED = re.compile(r"^(?:chapter|section|part|appendix)\s+[\w.]+", re.I)
_UNDERLINE = re.compile(r"^\s*(?:={3,}|-{3,})\s*$")


def _is_heading_line(line: str) -> bool:
    s = line.strip()
    if not (2 <= len(s) <= 80) or not re.search(r"[A-Za-z]", s) or s[-1] in ".!?,;:":
        return False
    if len(s.split()) > 12:
        return False
    letters = [c for c in s if c.isalpha()]
    if len(letters) >= 3 and all(c.isupper() for c in letters):
        return True
    return bool(_NUMBERED.match(s) or _NAMED.match(s))


def parse_text(text: str, *, source_path: str | None = None, default_title: str = "Untitled") -> ParsedDocument:
    blocks = [b for b in re.split(r"\n[ \t]*\n", text.replace("\r\n", "\n")) if b.strip()]
    title: str | None = None
    sections: list[tuple[str, list[str]]] = [("", [])]
    for i, block in enumerate(blocks):
        lines = block.strip("\n").split("\n")
        first = lines[0].strip()
        heading = None
        last = i == len(blocks) - 1  # a heading needs text after it
        if not last and len(lines) == 2 and _UNDERLINE.match(lines[1]) and first:
            heading = first
        elif not last and len(lines) == 1 and _is_heading_line(first):
            heading = first
        if i == 0 and len(blocks) > 1:
            if heading is not None or (len(lines) == 1 and len(first) <= 100 and first[-1] not in ".!?,;:"):
                title = heading or first  # a short first line on its own is the title
                continue
        if heading is not None:
            sections.append((heading, []))
            continue
        sections[-1][1].append(block.strip("\n"))
        sections[-1][1].append("")
    return finish(title or default_title, sections, source_path, "text/plain")
