"""PDF: the text layer, read with pypdfium2 (PDFium, the PDF engine of Chromium).

Sections follow the document's outline (bookmarks) down to three levels: each entry starts a
section at its heading's place on its page (at the top of the page when the heading's words are
not found there). Without an outline, the font sizes hint at headings: short lines set larger
than the body text (the size most of the text is set in) start sections, the three largest
sizes being three levels. Without either, every page is a section headed ``Page N``. The title
is the document's Title metadata, else the file name. A PDF whose pages carry no text (a scan)
and an encrypted one are refused with a reason, never ingested empty."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any

from ...errors import ValidationError
from .document import ParsedDocument, ParsedSection, clean_block

MEDIA_TYPE = "application/pdf"
OUTLINE_LEVELS = 3
_PDFIUM = threading.Lock()  # PDFium is not thread-safe: one document at a time per process
_OFFICE_TITLE = re.compile(r"^Microsoft (?:Word|PowerPoint|Excel) - (.+?)(?:\.(?:docx?|pptx?|xlsx?))?$")
_NOISE = str.maketrans({"\ufffe": "", "\x02": "", "\x00": "", "\ufeff": ""})


@dataclass(frozen=True)
class OutlineEntry:
    level: int
    title: str
    page: int


def _open(data: bytes, name: str) -> Any:
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as err:
        if err.err_code in (pdfium_c.FPDF_ERR_PASSWORD, pdfium_c.FPDF_ERR_SECURITY):
            raise ValidationError(
                name, "is encrypted (password-protected): decrypt it first (e.g. qpdf --decrypt) and ingest the copy"
            ) from None
        raise ValidationError(name, f"is not a readable PDF ({err}); check that the file is whole") from None


@dataclass(frozen=True)
class Line:
    text: str
    size: float  # the font size of its first character, in points


def _page_lines(pdf: Any) -> list[list[Line]]:
    """Each page's lines with their font sizes (one look-up per line: cheap)."""
    import pypdfium2.raw as pdfium_c

    pages = []
    for i in range(len(pdf)):
        page = pdf[i]
        textpage = page.get_textpage()
        try:
            raw = textpage.get_text_range()
            lines = []
            at = 0
            for piece in raw.split("\r\n"):  # the line ends PDFium puts in, one character each in its count
                lead = len(piece) - len(piece.lstrip())
                size = pdfium_c.FPDFText_GetFontSize(textpage, at + lead) if piece.strip() else 0.0
                for text in piece.translate(_NOISE).replace("\r", "\n").split("\n"):
                    lines.append(Line(text, round(size * 2) / 2))
                at += len(piece) + 2
        finally:
            textpage.close()
            page.close()
        pages.append(lines)
    return pages


def _outline(pdf: Any, pages: int) -> list[OutlineEntry]:
    entries = []
    for mark in pdf.get_toc(max_depth=OUTLINE_LEVELS):
        dest = mark.get_dest()
        index = dest.get_index() if dest is not None else None
        title = " ".join((mark.get_title() or "").split())
        if index is not None and 0 <= index < pages and title:
            entries.append(OutlineEntry(mark.level, title, index))
    return entries


def _title(pdf: Any) -> str | None:
    try:
        return document_title(pdf.get_metadata_value("Title"))
    except Exception:  # noqa: BLE001 - a broken info dictionary: the file name serves
        return None


def document_title(raw: object) -> str | None:
    """The Title metadata as a title: None when empty or "Untitled"; a title Word or PowerPoint
    wrote when printing ("Microsoft Word - report.docx") is the file's name."""
    title = " ".join(str(raw or "").split())
    title = _OFFICE_TITLE.sub(r"\1", title)
    return title if title and title.lower() != "untitled" else None


def _heading_at(text: str, title: str, start: int, end: int) -> tuple[int, int] | None:
    """Where ``title`` is written in ``text[start:end]`` (its words, any spacing between them)."""
    words = [re.escape(w) for w in title.split()]
    if not words:
        return None
    m = re.compile(r"\s+".join(words), re.I).search(text, start, end)
    return (m.start(), m.end()) if m else None


def sections_from_outline(page_texts: list[str], outline: list[OutlineEntry], title: str) -> list[ParsedSection]:
    """Cut the pages' text at each outline entry's heading (or the top of its page)."""
    text = ""
    page_starts = []
    for page in page_texts:
        page_starts.append(len(text))
        text += page.rstrip("\n") + "\n\n"
    page_starts.append(len(text))
    cuts: list[tuple[int, int, str]] = []  # (section starts, body starts, heading)
    position = 0
    for entry in outline:
        page_start = max(page_starts[entry.page], position)
        page_end = max(page_starts[entry.page + 1], page_start)
        found = _heading_at(text, entry.title, page_start, page_end)
        start, body = found if found else (page_start, page_start)
        cuts.append((start, body, entry.title))
        position = body
    sections = []
    intro = clean_block(text[: cuts[0][0]]) if cuts else ""
    if intro:
        sections.append(ParsedSection(title, intro))
    for i, (_, body, heading) in enumerate(cuts):
        end = cuts[i + 1][0] if i + 1 < len(cuts) else len(text)
        content = clean_block(text[body:end])
        if content:
            sections.append(ParsedSection(heading, content))
    return sections


HEADING_RATIO = 1.15  # a heading's font is at least this much larger than the body's
_MAX_HEADING_CHARS = 120


def heading_sizes(pages: list[list[Line]]) -> list[float]:
    """The font sizes of headings, largest first (at most three), or [] when the sizes say nothing."""
    chars: dict[float, int] = {}
    for line in (ln for page in pages for ln in page):
        chars[line.size] = chars.get(line.size, 0) + len(line.text.strip())
    if not chars:
        return []
    body = max(chars, key=lambda size: chars[size])
    larger = {
        ln.size
        for page in pages
        for ln in page
        if ln.size >= body * HEADING_RATIO and 0 < len(ln.text.strip()) <= _MAX_HEADING_CHARS
        and re.search(r"[^\W\d_]", ln.text)
    }  # fmt: skip
    share = sum(chars[size] for size in larger) / max(1, sum(chars.values()))
    return sorted(larger, reverse=True)[:3] if larger and share < 0.25 else []


def sections_from_font_sizes(pages: list[list[Line]], sizes: list[float], title: str) -> list[ParsedSection]:
    """Cut the text at lines set in a heading size; a heading wrapped over lines is joined."""
    raw: list[tuple[str, list[str]]] = [("", [])]
    heading_open = False  # the last line was a heading: a next one of the same size continues it
    last_size = 0.0
    for page in pages:
        for line in page:
            words = line.text.strip()
            is_heading = line.size in sizes and 0 < len(words) <= _MAX_HEADING_CHARS
            if is_heading and heading_open and line.size == last_size:
                raw[-1] = (f"{raw[-1][0]} {words}", raw[-1][1])
            elif is_heading:
                raw.append((words, []))
            else:
                raw[-1][1].append(line.text)
            heading_open, last_size = is_heading, line.size
        raw[-1][1].append("")  # a page break is a paragraph break
    sections = []
    for heading, lines in raw:
        body = clean_block("\n".join(lines))
        if body:
            sections.append(ParsedSection(heading or title, body))
    return sections


def parse_pdf(
    data: bytes, *, name: str, source_path: str | None = None, default_title: str = "Untitled"
) -> ParsedDocument:
    with _PDFIUM:
        pdf = _open(data, name)
        try:
            pages = _page_lines(pdf)
            outline = _outline(pdf, len(pages))
            title = _title(pdf) or default_title
        finally:
            pdf.close()
    texts = ["\n".join(line.text for line in page) for page in pages]
    if not any(t.strip() for t in texts):
        raise ValidationError(
            name,
            f"has no text layer (scanned?): none of its {len(texts)} page(s) carries text; "
            "run OCR on it first (e.g. ocrmypdf) and ingest the result",
        )
    sizes = [] if outline else heading_sizes(pages)
    if outline:
        sections = sections_from_outline(texts, outline, title)
    elif sizes:
        sections = sections_from_font_sizes(pages, sizes, title)
    else:
        sections = [ParsedSection(f"Page {i + 1}", clean_block(t)) for i, t in enumerate(texts) if t.strip()]
    return ParsedDocument(title=title, sections=sections, source_path=source_path, media_type=MEDIA_TYPE)
