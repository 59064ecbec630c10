"""Text-based formats: encodings, reStructuredText, AsciiDoc, source code, --as-text and the
refusal of a type Maxy does not read."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from maxy.errors import ValidationError
from maxy.ingest import SUPPORTED_EXTENSIONS, parse_file
from maxy.ingest.formats import parse_asciidoc, parse_rst
from maxy.ingest.formats.code import LANGUAGES, split_code
from maxy.ingest.formats.encoding import decode_text

from tests.hypothesis_profile import examples

# Text as people write it: no control characters but newline and tab, no BOM character, no
# replacement character (both mean something to the decoder).
TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Cf"), blacklist_characters="\ufffd")
    | st.sampled_from("\n\t"),
    min_size=1,
)


@given(TEXT, st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-16-le-bom", "utf-16-be-bom", "utf-32"]))
def test_text_in_a_unicode_encoding_decodes_back_to_itself(text: str, encoding: str) -> None:
    if encoding.endswith("-bom"):
        codec = encoding.removesuffix("-bom")
        bom = codecs.BOM_UTF16_LE if codec.endswith("le") else codecs.BOM_UTF16_BE
        data = bom + text.encode(codec)
    else:
        data = text.encode(encoding)
    assert decode_text(data, "f.txt") == text


@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E) | st.just("\n"), min_size=2))
def test_utf16_without_a_bom_is_recognised_by_its_nul_bytes(text: str) -> None:
    for codec in ("utf-16-le", "utf-16-be"):
        assert decode_text(text.encode(codec), "f.txt") == text


@pytest.mark.parametrize(
    "text",
    [
        "Café crème brûlée, naïve façade.",
        "Grüße aus München: Äpfel, Öl und Übermaß kosten 5 €.",
        "Le cœur a ses raisons que la raison ne connaît point. « Déjà vu » — très.",
        "Señor Muñoz pagó el almuerzo.",
    ],
)
def test_latin1_and_cp1252_text_is_read_as_written(text: str, tmp_path: Path) -> None:
    f = tmp_path / "legacy.txt"
    f.write_bytes(text.encode("cp1252"))
    assert parse_file(f).sections[0].text == text


def test_other_legacy_encodings_are_detected() -> None:
    russian = "Привет, как дела? Это обычный русский текст о погоде и работе."
    assert decode_text(russian.encode("cp1251"), "ru.txt") == russian
    japanese = "日本語のテキストです。東京は晴れです。"
    assert decode_text(japanese.encode("shift_jis"), "ja.txt") == japanese


def test_a_utf16_text_file_is_parsed_not_refused_as_binary(tmp_path: Path) -> None:
    f = tmp_path / "notes.txt"
    f.write_text("Boiler notes\n\nBleed the radiators in October.\n", encoding="utf-16")
    doc = parse_file(f)
    assert doc.title == "Boiler notes" and doc.sections[0].text == "Bleed the radiators in October."


@pytest.mark.parametrize(
    "data",
    [
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4,
        bytes(range(1, 32)) * 50,
        b"abc\x00\x01\x02" * 100,
    ],
)
def test_binary_content_is_still_refused(data: bytes, tmp_path: Path) -> None:
    f = tmp_path / "data.txt"
    f.write_bytes(data)
    with pytest.raises(ValidationError) as exc:
        parse_file(f)
    assert str(f) in str(exc.value) and "binary" in str(exc.value)


# -- types and --as-text ----------------------------------------------------------------------
def test_an_unknown_type_names_the_supported_ones_and_as_text(tmp_path: Path) -> None:
    f = tmp_path / "x.xyz"
    f.write_text("Some words.\n")
    with pytest.raises(ValidationError) as exc:
        parse_file(f)
    message = str(exc.value)
    assert message.startswith(f"{f}: unsupported file type '.xyz'; supported: .md, ")
    assert ".pdf" in message and ".docx" in message and ".rst" in message and ".py" in message
    assert message.endswith("; to read it as plain text, add --as-text")
    doc = parse_file(f, as_text=True)
    assert doc.media_type == "text/plain" and doc.title == "x.xyz" and doc.sections[0].text == "Some words."
    binary = tmp_path / "blob.bin"
    binary.write_bytes(b"\x00\x01\x02\x03" * 64)
    with pytest.raises(ValidationError, match="binary"):
        parse_file(binary, as_text=True)


def test_supported_types_keep_their_parser_under_as_text(tmp_path: Path) -> None:
    f = tmp_path / "a.md"
    f.write_text("# Title\n\n## Part\n\nBody.\n")
    assert [s.heading for s in parse_file(f, as_text=True).sections] == ["Part"]
    assert {".pdf", ".docx", ".pptx", ".rst", ".adoc", ".py", ".go", ".sql"} <= set(SUPPORTED_EXTENSIONS)


# -- reStructuredText -------------------------------------------------------------------------
RST = """\
=================
 Harbour Manual
=================

Welcome aboard.

Mooring
=======

Use two *bow* lines.

.. code-block:: python

    Heading inside code
    ===================

Spring lines
------------

Cross them.

Knots
~~~~~

A bowline holds.

Anchoring
=========

Let out five times the depth.
"""


def test_rst_titles_by_adornment_order_and_the_document_title() -> None:
    doc = parse_rst(RST, default_title="manual")
    assert doc.title == "Harbour Manual" and doc.media_type == "text/x-rst"
    headings = [s.heading for s in doc.sections]
    assert headings == ["Harbour Manual", "Mooring", "Spring lines", "Knots", "Anchoring"]
    mooring = doc.sections[1].text
    assert "Use two *bow* lines." in mooring and "    Heading inside code\n    ===================" in mooring
    assert doc.sections[4].text == "Let out five times the depth."


def test_rst_deeper_titles_stay_in_the_text_and_inline_markup_leaves_headings() -> None:
    text = (
        "Top\n===\n\nA\n\n``Second`` level\n----------------\n\nB\n\nThird\n~~~~~\n\nC\n\nFourth\n^^^^^^\n\nD\n\n"
        "Other top\n=========\n\nE\n"
    )
    doc = parse_rst(text)  # the first style is used twice: not a document title, so three levels
    assert [s.heading for s in doc.sections] == ["Top", "Second level", "Third", "Other top"]
    assert doc.sections[2].text == "C\n\nFourth\n\nD"
    titled = parse_rst("Manual\n######\n\n" + text)  # a document title: three levels below it
    assert [s.heading for s in titled.sections] == ["Top", "Second level", "Third", "Other top"]


# -- AsciiDoc ---------------------------------------------------------------------------------
ADOC = """\
= Harbour Manual
:author: Port Authority
:toc:

Welcome aboard.

== Mooring

Use two bow lines.

----
== not a heading inside a listing block
----

// a comment line that is left out

=== Spring lines

Cross them.

////
a comment block, left out
////

===== Deep heading

Stays in the text.

Anchoring
---------

Let out five times the depth.
"""


def test_asciidoc_sections_blocks_and_comments() -> None:
    doc = parse_asciidoc(ADOC)
    assert doc.title == "Harbour Manual" and doc.media_type == "text/asciidoc"
    assert [s.heading for s in doc.sections] == ["Harbour Manual", "Mooring", "Spring lines", "Anchoring"]
    assert doc.sections[0].text == "Welcome aboard."
    assert "== not a heading inside a listing block" in doc.sections[1].text
    assert "comment" not in doc.text
    assert doc.sections[2].text == "Cross them.\n\nDeep heading\n\nStays in the text."


# -- source code ------------------------------------------------------------------------------
PYTHON = '''\
"""Boiler control."""

import os

LIMIT = 3


@cache
def read_pressure(sensor):
    """Bar."""
    if sensor:
        return 1.5
    return 0.0


# The controller keeps state.
class Controller:
    def start(self):
        pass


async def main():
    await run()
'''


def test_python_splits_at_top_level_definitions_with_decorators_and_comments(tmp_path: Path) -> None:
    f = tmp_path / "boiler.py"
    f.write_text(PYTHON)
    doc = parse_file(f)
    assert doc.title == "boiler.py" and doc.media_type == "text/x-python"
    assert [s.heading for s in doc.sections] == ["boiler.py", "def read_pressure", "class Controller", "async def main"]
    assert doc.sections[0].text == '"""Boiler control."""\n\nimport os\n\nLIMIT = 3'
    assert doc.sections[1].text.startswith("@cache\ndef read_pressure(sensor):\n")
    assert "    if sensor:\n        return 1.5" in doc.sections[1].text
    assert (
        doc.sections[2].text == "# The controller keeps state.\nclass Controller:\n    def start(self):\n        pass"
    )


SAMPLES = {
    "go": (
        'package main\n\nimport "fmt"\n\n// Reader reads.\ntype Reader struct {\n\tn int\n}\n\n'
        "func (r *Reader) Read(p []byte) int {\n\treturn 0\n}\n\nfunc main() {\n\tfmt.Println(1)\n}\n",
        ["main.go", "type Reader", "func (Reader) Read", "func main"],
    ),
    "js": (
        "import x from 'x';\n\nexport function parse(a) {\n  return a;\n}\n\nexport const run = async (b) => {\n"
        "  return b;\n};\n\nclass Store {\n  get() {}\n}\n\nexport default function () {}\n",
        ["main.js", "function parse", "function run", "class Store", "export default function"],
    ),
    "ts": (
        "export interface Options {\n  depth: number;\n}\n\nexport type Mode = 'a' | 'b';\n\n"
        "export async function load(o: Options): Promise<void> {\n  await o;\n}\n",
        ["interface Options", "type Mode", "function load"],
    ),
    "rs": (
        "use std::io;\n\n/// A point.\n#[derive(Debug)]\npub struct Point {\n    x: i32,\n}\n\n"
        "impl Display for Point {\n    fn fmt(&self) {}\n}\n\npub(crate) async fn run() {\n}\n",
        ["main.rs", "struct Point", "impl Display for Point", "fn run"],
    ),
    "java": (
        "package a;\n\nimport java.util.List;\n\npublic class Harbour {\n    private int n;\n\n"
        '    @Override\n    public String toString() {\n        return "";\n    }\n\n'
        "    public static void main(String[] args) {\n    }\n}\n",
        ["main.java", "class Harbour", "toString()", "main()"],
    ),
    "c": (
        "#include <stdio.h>\n\nstruct point {\n    int x;\n};\n\nstatic int add(int a, int b)\n{\n"
        "    return a + b;\n}\n\nint main(void) {\n    return add(1, 2);\n}\n",
        ["main.c", "struct point", "add()", "main()"],
    ),
    "sh": (
        "#!/bin/sh\nset -eu\n\n# Build it.\nbuild() {\n  make\n}\n\nfunction clean {\n  rm -rf out\n}\n",
        ["main.sh", "build()", "clean()"],
    ),
    "sql": (
        "-- Schema\n\nCREATE TABLE boilers (\n  id int\n);\n\nINSERT INTO boilers VALUES (1);\n\n"
        "create or replace view hot as\n  select * from boilers;\n\nCREATE INDEX IF NOT EXISTS b_id ON boilers (id);\n",
        ["main.sql", "CREATE TABLE boilers", "CREATE VIEW hot", "CREATE INDEX b_id"],
    ),
}


@pytest.mark.parametrize("ext", sorted(SAMPLES))
def test_code_splits_at_definitions_keeping_the_text_verbatim(ext: str, tmp_path: Path) -> None:
    source, headings = SAMPLES[ext]
    f = tmp_path / f"main.{ext}"
    f.write_text(source)
    doc = parse_file(f)
    assert [s.heading for s in doc.sections] == headings
    assert "\n\n".join(s.text for s in doc.sections) == source.strip("\n")


CODE_LINES = st.lists(
    st.sampled_from(
        ["import os", "x = 1", "def f():", "    return 1", "class C:", "    y = 2", "", "# note", "@wrap",
         "async def g():", "    pass", "  odd indent", "\tdef h(): pass", "func main() {", "func (r *R) Get() {",
         "fn run() {", "pub struct S {", "impl S {", "#[derive(Debug)]", "}", "// comment", "/** doc */",
         "export function f() {", "const g = (a) => {", "CREATE TABLE t (", "-- c", "build() {",
         "int main(void) {", "public class A {", "    public void m() {", "    }", "type T struct {"]
    ),
    max_size=40,
)  # fmt: skip


@settings(max_examples=examples(300))
@given(CODE_LINES, st.sampled_from(sorted(LANGUAGES)))
def test_code_splitting_keeps_every_line_once_in_order(lines: list[str], language: str) -> None:
    text = "\n".join(lines)
    pieces = split_code(text, language)
    kept = [line for _, body in pieces for line in body.split("\n") if line.strip()]
    assert kept == [line for line in lines if line.strip()]
    assert all(body.strip() for _, body in pieces[1:]), "every definition has its text"


def test_a_long_data_line_is_not_searched_for_definitions() -> None:
    data = ", ".join(["0x00"] * 20000)  # one line of an embedded table: scanning it would take minutes
    source = f"static const unsigned char table[] = {{\n{data}\n}};\n\nint main(void) {{\n    return table[0];\n}}"
    pieces = split_code(source, "c")
    assert [heading for heading, _ in pieces] == ["", "main()"]
    assert data in pieces[0][1]
