"""PDF: the text layer, read with pypdfium2 (PDFium, the PDF engine of Chromium).

Sections follow the document's outline (bookmarks) down to three levels: each entry starts a
section at its heading's place on its page (at the top of the page when the heading's words are
not found there). Without an outline every page is a section headed ``Page N``. The title is the
document's Title metadata, else the file name. A PDF whose pages carry no text (a scan) and an
encrypted one are refused with a reason, never ingested empty."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ...errors import ValidationError
from .document import ParsedDocument, ParsedSection, clean_block

MEDIA_TYPE = "application/pdf"
OUTLINE_LEVELS = 3
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


def _page_texts(pdf: Any) -> list[str]:
    texts = []
    for i in range(len(pdf)):
        page = pdf[i]
        textpage = page.get_textpage()
        try:
            raw = textpage.get_text_range()
        finally:
            textpage.close()
            page.close()
        texts.append(raw.translate(_NOISE).replace("\r\n", "\n").replace("\r", "\n"))
    return texts


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
        title = pdf.get_metadata_value("Title")
    except Exception:  # noqa: BLE001 - a broken info dictionary: the file name serves
        return None
    title = " ".join(str(title or "").split())
    return title or None


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


def parse_pdf(
    data: bytes, *, name: str, source_path: str | None = None, default_title: str = "Untitled"
) -> ParsedDocument:
    pdf = _open(data, name)
    try:
        texts = _page_texts(pdf)
        outline = _outline(pdf, len(texts))
        title = _title(pdf) or default_title
    finally:
        pdf.close()
    if not any(t.strip() for t in texts):
        raise ValidationError(
            name,
            f"has no text layer (scanned?): none of its {len(texts)} page(s) carries text; "
            "run OCR on it first (e.g. ocrmypdf) and ingest the result",
        )
    if outline:
        sections = sections_from_outline(texts, outline, title)
    else:
        sections = [ParsedSection(f"Page {i + 1}", clean_block(t)) for i, t in enumerate(texts) if t.strip()]
    return ParsedDocument(title=title, sections=sections, source_path=source_path, media_type=MEDIA_TYPE)
