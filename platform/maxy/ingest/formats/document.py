"""What every format parses to: a :class:`ParsedDocument`, a title and (heading, text) sections."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class ParsedSection:
    heading: str
    text: str


@dataclass
class ParsedDocument:
    title: str
    sections: list[ParsedSection] = field(default_factory=list)
    source_path: str | None = None
    media_type: str = "text/plain"
    relative_path: str | None = None  # the file's path inside the folder it was ingested from (its name alone)

    @property
    def is_empty(self) -> bool:
        return not any(s.text.strip() for s in self.sections)

    @property
    def text(self) -> str:
        """All sections as one text (headings included), for document-level summaries."""
        parts = []
        for s in self.sections:
            if s.heading and s.heading != self.title:
                parts.append(s.heading)
            parts.append(s.text)
        return "\n\n".join(p for p in parts if p.strip())


def title_from_stem(path: Path) -> str:
    return path.stem.strip() or path.name


def clean_block(text: str) -> str:
    """Trim trailing spaces on lines and runs of blank lines; keep everything else as is."""
    lines = [line.rstrip() for line in text.split("\n")]
    out = "\n".join(lines)
    out = re.sub(r"\n{3,}", "\n\n", out)
    return out.strip("\n").strip()


def finish(
    title: str, raw_sections: list[tuple[str, list[str]]], source_path: str | None, media: str
) -> ParsedDocument:
    """Sections from (heading, lines) pairs: text cleaned, empty ones dropped, an untitled one
    (the text before the first heading) headed by the document title."""
    sections = []
    for heading, lines in raw_sections:
        body = clean_block("\n".join(lines))
        if body:
            sections.append(ParsedSection(heading.strip() or title, body))
    return ParsedDocument(title=title.strip(), sections=sections, source_path=source_path, media_type=media)
