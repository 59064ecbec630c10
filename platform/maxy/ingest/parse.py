"""Files to a :class:`ParsedDocument`: a title and a list of (heading, text) sections.

Markdown   ``#``..``###`` headings (and ``===``/``---`` underlined ones) start sections;
           front matter is stripped (its ``title:`` is used); fenced code is kept as text.
Plain text paragraph blocks; split into sections only on obvious heading lines
           (ALL CAPS, numbered "2.1 Setup", "Chapter 3", or underlined lines).
HTML       stdlib ``html.parser``; script/style/nav/... dropped; h1-h3 start sections;
           title from ``<title>`` or the first ``<h1>``.

Unknown extensions and binary files raise :class:`ValidationError` naming the path. A
document without text parses to zero sections (:attr:`ParsedDocument.is_empty`); the
ingest layer skips it with ``reason=empty``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from ..errors import ValidationError

MEDIA_TYPES: dict[str, str] = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".txt": "text/plain",
    ".html": "text/html",
    ".htm": "text/html",
}
SUPPORTED_EXTENSIONS: tuple[str, ...] = tuple(MEDIA_TYPES)
MAX_FILE_BYTES = 50 * 1024 * 1024


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


# ---------------------------------------------------------------------------------------
def media_type_for(path: str | Path) -> str:
    suffix = Path(path).suffix.lower()
    media = MEDIA_TYPES.get(suffix)
    if media is None:
        raise ValidationError(
            str(path),
            f"unsupported file type {suffix or '(no extension)'!r}; supported: {', '.join(SUPPORTED_EXTENSIONS)}",
        )
    return media


def read_text_file(path: str | Path) -> str:
    """Decode a text file; refuse binary content (NUL bytes or mostly control characters)."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ValidationError(str(p), f"file is {size} bytes; at most {MAX_FILE_BYTES} are ingested")
        data = p.read_bytes()
    except OSError as err:
        raise ValidationError(str(p), f"cannot read file ({err.strerror or err})") from err
    if b"\x00" in data[:65536]:
        raise ValidationError(str(p), "looks like a binary file (NUL bytes), not text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("cp1252", errors="replace")
        sample = text[:65536]
        bad = sum(1 for ch in sample if (ord(ch) < 32 and ch not in "\t\n\r\f") or ch == "\ufffd")
        if sample and bad / len(sample) > 0.01:
            raise ValidationError(str(p), "looks like a binary file (not valid UTF-8 text)") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse_file(path: str | Path) -> ParsedDocument:
    """Parse one file by its extension."""
    p = Path(path)
    media = media_type_for(p)
    if not p.is_file():
        raise ValidationError(str(p), "no such file")
    text = read_text_file(p)
    return parse_content(text, media, source_path=str(p.resolve()), default_title=_title_from_stem(p))


def parse_content(
    text: str, media_type: str, *, source_path: str | None = None, default_title: str = "Untitled"
) -> ParsedDocument:
    if media_type == "text/markdown":
        return parse_markdown(text, source_path=source_path, default_title=default_title)
    if media_type == "text/html":
        return parse_html(text, source_path=source_path, default_title=default_title)
    if media_type == "text/plain":
        return parse_text(text, source_path=source_path, default_title=default_title)
    raise ValidationError("mediaType", f"unsupported media type {media_type!r}")


def _title_from_stem(path: Path) -> str:
    return path.stem.strip() or path.name


def _clean_block(text: str) -> str:
    """Trim trailing spaces on lines and runs of blank lines; keep everything else as is."""
    lines = [line.rstrip() for line in text.split("\n")]
    out = "\n".join(lines)
    out = re.sub(r"\n{3,}", "\n\n", out)
    return out.strip("\n").strip()


def _finish(
    title: str, raw_sections: list[tuple[str, list[str]]], source_path: str | None, media: str
) -> ParsedDocument:
    sections = []
    for heading, lines in raw_sections:
        body = _clean_block("\n".join(lines))
        if body:
            sections.append(ParsedSection(heading.strip() or title, body))
    return ParsedDocument(title=title.strip(), sections=sections, source_path=source_path, media_type=media)


# ---------------------------------------------------------------------------------------
# Markdown
_FRONT_YAML = re.compile(r"\A---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
_FRONT_TOML = re.compile(r"\A\+\+\+[ \t]*\n(.*?)\n\+\+\+[ \t]*(?:\n|\Z)", re.S)
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SETEXT_H1 = re.compile(r"^ {0,3}=+[ \t]*$")
_SETEXT_H2 = re.compile(r"^ {0,3}-+[ \t]*$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")


_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_STRONG_EMPHASIS = re.compile(r"(\*\*|(?<![\w\\])__)(?=\S)(.+?)(?<=\S)\1(?!\w)")
_EMPHASIS = re.compile(r"(\*|(?<![\w\\])_)(?=\S)(.+?)(?<=\S)\1(?!\w)")


def _strip_inline_md(text: str) -> str:
    """A heading's words without its markup: links keep their text, emphasis markers go, a code
    span keeps its content whole, and an underscore inside a word (``HTTP_PROXY``) stays."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    parts = _CODE_SPAN.split(text)  # [prose, ticks, code, prose, ticks, code, ..., prose]
    out = []
    for i, part in enumerate(parts):
        if i % 3 == 2:
            out.append(part.strip())
        elif i % 3 == 0:
            for pattern in (_STRONG_EMPHASIS, _EMPHASIS):
                part = pattern.sub(r"\2", part)
            out.append(part)
    return " ".join("".join(out).split())


def _front_matter(text: str) -> tuple[str, str | None]:
    for pattern, key_re in (
        (_FRONT_YAML, r"^title\s*:\s*(.+?)\s*$"),
        (_FRONT_TOML, r"^title\s*=\s*(.+?)\s*$"),
    ):
        m = pattern.match(text)
        if m:
            title = None
            t = re.search(key_re, m.group(1), re.M)
            if t:
                title = t.group(1).strip().strip("'\"").strip() or None
            return text[m.end() :], title
    return text, None


def parse_markdown(text: str, *, source_path: str | None = None, default_title: str = "Untitled") -> ParsedDocument:
    body, fm_title = _front_matter(text.replace("\r\n", "\n"))
    sections: list[tuple[str, list[str]]] = [("", [])]
    first_h1: str | None = None
    fence: str | None = None
    for line in body.split("\n"):
        current = sections[-1][1]
        if fence is not None:
            current.append(line)
            stripped = line.strip()
            if stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0]):
                fence = None
            continue
        m = _FENCE.match(line)
        if m:
            fence = m.group(1)
            current.append(line)
            continue
        m = _ATX.match(line)
        if m and len(m.group(1)) <= 3:
            heading = _strip_inline_md(m.group(2) or "")
            if len(m.group(1)) == 1 and first_h1 is None and heading:
                first_h1 = heading
            sections.append((heading, []))
            continue
        prev = current[-1] if current else ""
        before = current[-2] if len(current) >= 2 else ""
        is_h1 = _SETEXT_H1.match(line)
        is_h2 = _SETEXT_H2.match(line) and len(line.strip()) >= 2
        if (is_h1 or is_h2) and prev.strip() and not before.strip() and not _LIST_ITEM.match(prev):
            heading = _strip_inline_md(current.pop())
            if is_h1 and first_h1 is None and heading:
                first_h1 = heading
            sections.append((heading, []))
            continue
        current.append(line)
    title = fm_title or first_h1 or default_title
    return _finish(title, sections, source_path, "text/markdown")


# ---------------------------------------------------------------------------------------
# Plain text
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
    return _finish(title or default_title, sections, source_path, "text/plain")


# ---------------------------------------------------------------------------------------
# HTML
_SKIP_TAGS = frozenset({"script", "style", "nav", "noscript", "template", "svg", "iframe", "object", "canvas"})
_SECTION_TAGS = frozenset({"h1", "h2", "h3"})
_PRE_NL = "\x01"
_BLOCK_TAGS = frozenset(
    {
        "p", "div", "section", "article", "main", "header", "footer", "aside", "blockquote", "pre", "ul", "ol",
        "dl", "dt", "dd", "table", "thead", "tbody", "tfoot", "tr", "figure", "figcaption", "form", "fieldset",
        "address", "details", "summary", "h4", "h5", "h6", "hr", "body", "html", "caption",
    }
)  # fmt: skip


class _HTMLExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.skip_depth = 0
        self.pre_depth = 0
        self.in_title = False
        self.title_parts: list[str] = []
        self.heading_tag: str | None = None
        self.heading_parts: list[str] = []
        self.first_h1: str | None = None
        self.sections: list[tuple[str, list[str]]] = [("", [])]

    def _emit(self, s: str) -> None:
        self.sections[-1][1].append(s)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP_TAGS:
            self.skip_depth += 1
            return
        if self.skip_depth:
            return
        if self.heading_tag is not None and (tag in _SECTION_TAGS or tag in _BLOCK_TAGS):
            self.handle_endtag(self.heading_tag)  # an unclosed heading ends at the next block
        if tag == "title":
            self.in_title = True
        elif tag in _SECTION_TAGS:
            self.heading_tag = tag
            self.heading_parts = []
        elif tag == "br":
            self._emit("\n")
        elif tag == "li":
            self._emit("\n- ")
        elif tag in ("td", "th"):
            self._emit(" | ")
        elif tag in _BLOCK_TAGS:
            self._emit("\n\n")
        if tag == "pre":
            self.pre_depth += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP_TAGS:
            return  # a self-closed skip tag has no content
        self.handle_starttag(tag, attrs)
        if tag == "pre":
            self.pre_depth = max(0, self.pre_depth - 1)

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP_TAGS:
            self.skip_depth = max(0, self.skip_depth - 1)
            return
        if self.skip_depth:
            return
        if tag == "title":
            self.in_title = False
        elif tag in _SECTION_TAGS and self.heading_tag is not None:
            heading = " ".join("".join(self.heading_parts).split())
            self.heading_tag = None
            if heading:
                if tag == "h1" and self.first_h1 is None:
                    self.first_h1 = heading
                self.sections.append((heading, []))
        elif tag in _BLOCK_TAGS:
            self._emit("\n\n")
        if tag == "pre":
            self.pre_depth = max(0, self.pre_depth - 1)

    def handle_data(self, data: str) -> None:
        if self.skip_depth:
            return
        if self.in_title:
            self.title_parts.append(data)
        elif self.heading_tag is not None:
            self.heading_parts.append(data)
        elif self.pre_depth:
            self._emit(data.replace("\n", _PRE_NL))  # kept verbatim through normalisation
        else:
            self._emit(re.sub(r"\s+", " ", data))


def _normalise_html_text(parts: list[str]) -> list[str]:
    text = "".join(parts)
    lines = [line.strip() for line in text.split("\n")]
    out = "\n".join(lines)
    out = re.sub(r"[ \t]*\|[ \t]*(?=\n|$)", "", out)  # trailing table separators
    out = re.sub(r"(?m)^\|\s*", "", out)
    out = re.sub(r"\n{3,}", "\n\n", out)
    return [out.replace(_PRE_NL, "\n")]


def parse_html(text: str, *, source_path: str | None = None, default_title: str = "Untitled") -> ParsedDocument:
    parser = _HTMLExtractor()
    parser.feed(text)
    parser.close()
    title = " ".join("".join(parser.title_parts).split()) or parser.first_h1 or default_title
    sections = [(h, _normalise_html_text(parts)) for h, parts in parser.sections]
    return _finish(title, sections, source_path, "text/html")
