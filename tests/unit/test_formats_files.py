"""PDF, DOCX and PPTX files as LibreOffice, Chromium, pandoc and pypdf write them
(tests/fixtures/formats/README.md says which tool wrote which file)."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest
from maxy.errors import ValidationError
from maxy.ingest import parse_file
from maxy.ingest.formats.pdf import (
    Line,
    OutlineEntry,
    document_title,
    heading_sizes,
    sections_from_font_sizes,
    sections_from_outline,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "formats"
HANDBOOK = ["Lighthouse Keeping", "The Lamp", "Fog Signals", "Logbook", "Storms"]


def test_a_libreoffice_pdf_is_split_by_its_outline() -> None:
    doc = parse_file(FIXTURES / "handbook.pdf")
    assert doc.title == "Lighthouse Keeping" and doc.media_type == "application/pdf"
    assert [s.heading for s in doc.sections] == HANDBOOK
    assert doc.sections[0].text == "A short handbook for the keepers of coastal lights."
    lamp = doc.sections[1].text
    assert lamp.startswith("Trim the paraffin wick") and "Polish the lens" in lamp and "Fog Signals" not in lamp
    assert (
        doc.sections[3].text == "Write the barometer reading and the hours of fog in the logbook at each watch change."
    )


def test_a_chromium_pdf_without_an_outline_is_split_by_its_font_sizes() -> None:
    doc = parse_file(FIXTURES / "handbook-chromium.pdf")
    assert doc.title == "Lighthouse Keeping"  # the <title> Chromium wrote as the Title metadata
    assert [s.heading for s in doc.sections] == HANDBOOK
    assert doc.sections[1].text.startswith("Trim the paraffin wick") and "Fog Signals" not in doc.sections[1].text
    assert doc.sections[2].text.startswith("When visibility drops")  # the heading at the top of page 2


def test_a_pdf_with_one_font_size_and_no_outline_is_one_section_per_page() -> None:
    doc = parse_file(FIXTURES / "letter-chromium.pdf")
    assert doc.title == "Letter to the Keeper"
    assert [s.heading for s in doc.sections] == ["Page 1", "Page 2"]
    assert doc.sections[0].text.startswith("Dear keeper") and doc.sections[1].text.startswith("The new burner")


def test_font_size_headings_join_wrapped_lines_and_keep_three_levels() -> None:
    def page(*lines: tuple[str, float]) -> list[Line]:
        return [Line(text, size) for text, size in lines]

    body = [("Body text that is long enough to be the body of the document.", 10.0)] * 6
    pages = [
        page(("A Very Long Title That", 24.0), ("Wraps", 24.0), *body, ("Part", 18.0), *body),
        page(("Detail", 14.0), *body, ("Minor", 12.0), *body, ("Footnote in small print.", 8.0)),
    ]
    sizes = heading_sizes(pages)
    assert sizes == [24.0, 18.0, 14.0]  # 12 pt is a fourth level: it stays in the text
    sections = sections_from_font_sizes(pages, sizes, "Doc")
    assert [s.heading for s in sections] == ["A Very Long Title That Wraps", "Part", "Detail"]
    assert "Minor" in sections[2].text and sections[2].text.endswith("Footnote in small print.")
    assert heading_sizes([page(("Same size", 10.0), *body)]) == []


def test_pdf_title_metadata_that_names_no_title_gives_way_to_the_file_name() -> None:
    assert document_title("Microsoft Word - Annual report 2024.docx") == "Annual report 2024"
    assert document_title("Microsoft PowerPoint - Q3 review") == "Q3 review"
    assert document_title("  Lighthouse   Keeping ") == "Lighthouse Keeping"
    assert document_title("untitled") is None and document_title("") is None and document_title(None) is None


def test_a_pdf_without_a_text_layer_is_refused_not_parsed_empty() -> None:
    with pytest.raises(ValidationError) as exc:
        parse_file(FIXTURES / "scanned.pdf")
    assert str(exc.value).startswith(f"{FIXTURES / 'scanned.pdf'}: has no text layer (scanned?)")
    assert "OCR" in str(exc.value)


def test_an_encrypted_pdf_and_a_broken_one_are_refused_with_the_reason(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match=r"is encrypted \(password-protected\): decrypt it first"):
        parse_file(FIXTURES / "encrypted.pdf")
    cut = tmp_path / "cut.pdf"
    cut.write_bytes((FIXTURES / "handbook.pdf").read_bytes()[:300])
    with pytest.raises(ValidationError, match="is not a readable PDF"):
        parse_file(cut)


def test_outline_entries_on_one_page_cut_at_their_headings() -> None:
    pages = ["Intro words.\nAlpha\nalpha text\nBeta\nbeta text", "more beta\nGamma Delta\ngamma text"]
    outline = [OutlineEntry(0, "Alpha", 0), OutlineEntry(0, "Beta", 0), OutlineEntry(1, "Gamma  Delta", 1)]
    sections = sections_from_outline(pages, outline, "Doc")
    assert [(s.heading, s.text) for s in sections] == [
        ("Doc", "Intro words."),
        ("Alpha", "alpha text"),
        ("Beta", "beta text\n\nmore beta"),
        ("Gamma  Delta", "gamma text"),
    ]
    missing = sections_from_outline(["one", "two"], [OutlineEntry(0, "Not written", 1)], "Doc")
    assert [(s.heading, s.text) for s in missing] == [("Doc", "one"), ("Not written", "two")]


def test_a_libreoffice_docx_has_heading_sections_and_table_rows() -> None:
    doc = parse_file(FIXTURES / "handbook.docx")
    assert doc.title == "Lighthouse Keeping"
    assert doc.media_type == "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    assert [s.heading for s in doc.sections] == HANDBOOK
    lamp = doc.sections[1].text
    assert "Task | Interval\nPolish the lens | Daily\nWind the clockwork | Every four hours" in lamp


def test_a_pandoc_pptx_is_one_section_per_slide_with_notes() -> None:
    doc = parse_file(FIXTURES / "deck.pptx")
    assert doc.title == "Harbour Pilots Briefing"
    assert doc.media_type == "application/vnd.openxmlformats-officedocument.presentationml.presentation"
    assert [s.heading for s in doc.sections] == ["Pilot Ladder Checks", "Tidal Windows"]
    ladder = doc.sections[0].text
    assert ladder.startswith("Inspect every manrope") and ladder.endswith(
        "Notes: Remind crews that a frayed manrope is a stop condition."
    )
    assert "Tanker | Flood tide" in doc.sections[1].text


def test_office_files_that_are_not_packages_are_refused(tmp_path: Path) -> None:
    fake = tmp_path / "old.docx"
    fake.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 500)
    with pytest.raises(ValidationError, match="password-protected or an old binary Office file"):
        parse_file(fake)
    junk = tmp_path / "junk.pptx"
    junk.write_bytes(b"not a zip at all")
    with pytest.raises(ValidationError, match=r"is not a readable \.pptx file"):
        parse_file(junk)
    other = tmp_path / "swapped.pptx"
    shutil.copy(FIXTURES / "handbook.docx", other)
    with pytest.raises(ValidationError, match="is not a PowerPoint presentation"):
        parse_file(other)


def test_a_docx_title_paragraph_and_list_items(tmp_path: Path) -> None:
    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'

    def para(text: str, style: str = "", listed: bool = False) -> str:
        ppr = f'<w:pStyle w:val="{style}"/>' if style else ""
        ppr += "<w:numPr><w:numId w:val='1'/></w:numPr>" if listed else ""
        return f"<w:p><w:pPr>{ppr}</w:pPr><w:r><w:t>{text}</w:t></w:r></w:p>"

    body = (
        para("Field Guide", "Title") + para("Birds", "Heading1") + para("Gull", listed=True) + para("Tern", listed=True)
    )
    body += para("Nests", "Heading4") + para("On cliffs.")
    f = tmp_path / "guide.docx"
    with zipfile.ZipFile(f, "w") as z:
        z.writestr("word/document.xml", f"<w:document {w}><w:body>{body}</w:body></w:document>")
        z.writestr(
            "word/styles.xml",
            f'<w:styles {w}><w:style w:styleId="Heading1"><w:name w:val="heading 1"/></w:style>'
            f'<w:style w:styleId="Heading4"><w:name w:val="heading 4"/></w:style>'
            f'<w:style w:styleId="Title"><w:name w:val="Title"/></w:style></w:styles>',
        )
    doc = parse_file(f)
    assert doc.title == "Field Guide"
    assert [(s.heading, s.text) for s in doc.sections] == [("Birds", "- Gull\n\n- Tern\n\nNests\n\nOn cliffs.")]
