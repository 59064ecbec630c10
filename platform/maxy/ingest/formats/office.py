"""Word (.docx) and PowerPoint (.pptx) files, read as the zip of XML parts they are (stdlib
``zipfile`` and ``xml.etree``).

DOCX  paragraphs in order; one styled Heading 1..3 starts a section (deeper headings stay in
      the text), a Title-styled paragraph is the title (else the core properties' title,
      else the first Heading 1, else the file name). Tables become ``a | b`` rows, list
      paragraphs ``- item`` lines.
PPTX  one section per slide in presentation order, headed by the slide's title (``Slide N``
      when it has none), its other text boxes and tables as text, then its speaker notes.
      The title is the core properties' title, else the first slide's title."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Iterator
from posixpath import dirname, join, normpath

from ...errors import ValidationError
from .document import ParsedDocument, ParsedSection, clean_block

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_PKG_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_DC_TITLE = "{http://purl.org/dc/elements/1.1/}title"
_MAX_PART_BYTES = 200 * 1024 * 1024  # an XML part larger than this is not a document we read
_OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_HEADING = re.compile(r"^heading\s*([1-9])$")


class _Package:
    def __init__(self, data: bytes, name: str, kind: str) -> None:
        self.name = name
        if data.startswith(_OLE):
            raise ValidationError(
                name,
                f"is password-protected or an old binary Office file, not a {kind} package: "
                f"save it unprotected as {kind} and ingest that",
            )
        try:
            self.zip = zipfile.ZipFile(io.BytesIO(data))
        except zipfile.BadZipFile:
            raise ValidationError(
                name, f"is not a readable {kind} file (not a zip package); check that it is whole"
            ) from None

    def xml(self, part: str) -> ET.Element | None:
        try:
            info = self.zip.getinfo(part)
        except KeyError:
            return None
        if info.file_size > _MAX_PART_BYTES:
            raise ValidationError(self.name, f"its part {part} unpacks to {info.file_size} bytes; too large to read")
        try:
            return ET.fromstring(self.zip.read(info))
        except (ET.ParseError, zipfile.BadZipFile, OSError) as err:
            raise ValidationError(self.name, f"its part {part} cannot be read ({err})") from None

    def rels(self, part: str) -> dict[str, str]:
        """A part's relationships: id -> the target part's path."""
        folder, base = dirname(part), part.rsplit("/", 1)[-1]
        root = self.xml(join(folder, "_rels", base + ".rels"))
        out = {}
        for rel in root.iter(f"{_PKG_REL}Relationship") if root is not None else ():
            target = rel.get("Target", "")
            if rel.get("TargetMode") != "External":
                out[rel.get("Id", "")] = normpath(
                    target.lstrip("/") if target.startswith("/") else join(folder, target)
                )
        return out

    def core_title(self) -> str | None:
        core = self.xml("docProps/core.xml")
        node = core.find(_DC_TITLE) if core is not None else None
        title = " ".join((node.text or "").split()) if node is not None else ""
        return title or None


# ---------------------------------------------------------------------------------------
# DOCX
def _docx_styles(pkg: _Package) -> dict[str, str]:
    """styleId -> lower-case style name (``heading 1``, ``title``)."""
    root = pkg.xml("word/styles.xml")
    out = {}
    for style in root.iter(f"{_W}style") if root is not None else ():
        name = style.find(f"{_W}name")
        sid = style.get(f"{_W}styleId", "")
        out[sid] = (name.get(f"{_W}val", sid) if name is not None else sid).lower()
    return out


def _w_text(element: ET.Element) -> str:
    parts = []
    for node in element.iter():
        if node.tag == f"{_W}t":
            parts.append(node.text or "")
        elif node.tag == f"{_W}tab":
            parts.append("\t")
        elif node.tag in (f"{_W}br", f"{_W}cr"):
            parts.append("\n")
    return "".join(parts)


def _docx_blocks(body: ET.Element) -> Iterator[ET.Element]:
    """Paragraphs and tables in reading order (content controls opened)."""
    for child in body:
        if child.tag in (f"{_W}p", f"{_W}tbl"):
            yield child
        elif child.tag == f"{_W}sdt":
            content = child.find(f"{_W}sdtContent")
            if content is not None:
                yield from _docx_blocks(content)


def _docx_table(table: ET.Element) -> str:
    rows = []
    for row in table.iter(f"{_W}tr"):
        cells = [" ".join(_w_text(p).split()) for p in row.findall(f"{_W}tc")]
        if any(cells):
            rows.append(" | ".join(cells))
    return "\n".join(rows)


def _paragraph_style(p: ET.Element, styles: dict[str, str]) -> tuple[str, bool]:
    """(style name, is a list item)."""
    ppr = p.find(f"{_W}pPr")
    if ppr is None:
        return "", False
    style = ppr.find(f"{_W}pStyle")
    sid = style.get(f"{_W}val", "") if style is not None else ""
    return styles.get(sid, sid.lower()), ppr.find(f"{_W}numPr") is not None


def parse_docx(
    data: bytes, *, name: str, source_path: str | None = None, default_title: str = "Untitled"
) -> ParsedDocument:
    pkg = _Package(data, name, ".docx")
    document = pkg.xml("word/document.xml")
    body = document.find(f"{_W}body") if document is not None else None
    if body is None:
        raise ValidationError(name, "is not a Word document (no word/document.xml); check that it is a .docx")
    styles = _docx_styles(pkg)
    title_para: str | None = None
    first_h1: str | None = None
    sections: list[tuple[str, list[str]]] = [("", [])]
    for block in _docx_blocks(body):
        if block.tag == f"{_W}tbl":
            sections[-1][1].extend([_docx_table(block), ""])
            continue
        text = _w_text(block).strip()
        if not text:
            continue
        style, listed = _paragraph_style(block, styles)
        level = _HEADING.match(style)
        if style == "title" and title_para is None:
            title_para = " ".join(text.split())
        elif level and int(level.group(1)) <= 3:
            heading = " ".join(text.split())
            if level.group(1) == "1" and first_h1 is None:
                first_h1 = heading
            sections.append((heading, []))
        else:
            sections[-1][1].extend([f"- {text}" if listed else text, ""])
    title = title_para or pkg.core_title() or first_h1 or default_title
    return _sections(title, sections, source_path, DOCX)


def _sections(title: str, raw: list[tuple[str, list[str]]], source_path: str | None, media: str) -> ParsedDocument:
    sections = []
    for heading, lines in raw:
        body = clean_block("\n".join(lines))
        if body:
            sections.append(ParsedSection(heading or title, body))
    return ParsedDocument(title=title, sections=sections, source_path=source_path, media_type=media)


# ---------------------------------------------------------------------------------------
# PPTX
def _a_paragraphs(element: ET.Element) -> list[str]:
    out = []
    for para in element.iter(f"{_A}p"):
        parts = []
        for node in para.iter():
            if node.tag == f"{_A}t":
                parts.append(node.text or "")
            elif node.tag == f"{_A}br":
                parts.append("\n")
        text = "".join(parts).strip()
        if text:
            out.append(text)
    return out


def _placeholder(shape: ET.Element) -> str | None:
    ph = shape.find(f"{_P}nvSpPr/{_P}nvPr/{_P}ph")
    return None if ph is None else ph.get("type", "body")


def _slide_text(root: ET.Element) -> tuple[str | None, list[str]]:
    """(title, the other text) of a slide: text boxes, then table rows, in document order."""
    title = None
    body: list[str] = []
    for node in root.iter():
        if node.tag == f"{_P}sp":
            lines = _a_paragraphs(node)
            if _placeholder(node) in ("title", "ctrTitle") and title is None and lines:
                title = " ".join(" ".join(lines).split())
            elif lines and _placeholder(node) not in ("sldNum", "dt", "ftr"):
                body.extend(lines)
        elif node.tag == f"{_A}tbl":
            for row in node.iter(f"{_A}tr"):
                cells = [" ".join(" ".join(_a_paragraphs(tc)).split()) for tc in row.iter(f"{_A}tc")]
                if any(cells):
                    body.append(" | ".join(cells))
    return title, body


def _notes(pkg: _Package, slide_part: str) -> list[str]:
    for target in pkg.rels(slide_part).values():
        if "notesSlide" in target:
            root = pkg.xml(target)
            if root is None:
                return []
            return [line for sp in root.iter(f"{_P}sp") if _placeholder(sp) == "body" for line in _a_paragraphs(sp)]
    return []


def parse_pptx(
    data: bytes, *, name: str, source_path: str | None = None, default_title: str = "Untitled"
) -> ParsedDocument:
    pkg = _Package(data, name, ".pptx")
    presentation = pkg.xml("ppt/presentation.xml")
    if presentation is None:
        raise ValidationError(
            name, "is not a PowerPoint presentation (no ppt/presentation.xml); check that it is a .pptx"
        )
    targets = pkg.rels("ppt/presentation.xml")
    sections: list[tuple[str, list[str]]] = []
    first_title: str | None = None
    for number, sld in enumerate(presentation.iter(f"{_P}sldId"), start=1):
        part = targets.get(sld.get(f"{_R}id", ""))
        root = pkg.xml(part) if part else None
        if root is None:
            continue
        title, body = _slide_text(root)
        first_title = first_title or title
        notes = _notes(pkg, part or "")
        lines = ["\n\n".join(body)] if body else []
        if notes:
            lines.append("\n\nNotes: " + "\n".join(notes))
        sections.append((title or f"Slide {number}", lines))
    title = pkg.core_title() or first_title or default_title
    return _sections(title, sections, source_path, PPTX)
