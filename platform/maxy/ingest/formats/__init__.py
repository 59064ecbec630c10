"""Files to a :class:`ParsedDocument`, by extension: one module per family of formats.

``markdown``  .md .markdown          ``markup``  .rst, .adoc .asciidoc .asc
``text``      .txt (and --as-text)   ``html``    .html .htm
``pdf``       .pdf                   ``office``  .docx .pptx
``code``      .py .js .ts .go .java .rs .c .cpp .sh .sql ...
``encoding``  how a text file's bytes become text (BOM, UTF-16, UTF-8, charset-normalizer)

An unknown extension raises :class:`ValidationError` naming the path, the supported types and
``--as-text``; with ``as_text`` such a file is read as plain text. A binary file is refused
either way. A document without text parses to zero sections (:attr:`ParsedDocument.is_empty`);
the ingest layer skips it with ``reason=empty``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ...errors import ValidationError
from . import code, office, pdf
from .document import ParsedDocument, ParsedSection, title_from_stem
from .encoding import MAX_FILE_BYTES, looks_binary, read_bytes, read_text_file
from .html import parse_html
from .markdown import parse_markdown
from .markup import parse_asciidoc, parse_rst
from .text import parse_text

BinaryParser = Callable[..., ParsedDocument]


@dataclass(frozen=True)
class Format:
    media_type: str
    language: str | None = None  # source code: the language its definitions are found by
    binary: BinaryParser | None = None  # read from bytes, not decoded text


_CODE_EXTENSIONS = {
    ".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".jsx": "javascript", ".ts": "typescript", ".tsx": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".go": "go", ".java": "java", ".rs": "rust", ".c": "c", ".h": "c", ".cpp": "cpp", ".cc": "cpp",
    ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp", ".sh": "shell", ".bash": "shell", ".sql": "sql",
}  # fmt: skip
FORMATS: dict[str, Format] = {
    ".md": Format("text/markdown"),
    ".markdown": Format("text/markdown"),
    ".txt": Format("text/plain"),
    ".html": Format("text/html"),
    ".htm": Format("text/html"),
    ".rst": Format("text/x-rst"),
    ".adoc": Format("text/asciidoc"),
    ".asciidoc": Format("text/asciidoc"),
    ".asc": Format("text/asciidoc"),
    ".pdf": Format(pdf.MEDIA_TYPE, binary=pdf.parse_pdf),
    ".docx": Format(office.DOCX, binary=office.parse_docx),
    ".pptx": Format(office.PPTX, binary=office.parse_pptx),
    **{ext: Format(code.LANGUAGES[lang].media_type, language=lang) for ext, lang in _CODE_EXTENSIONS.items()},
}
MEDIA_TYPES: dict[str, str] = {ext: f.media_type for ext, f in FORMATS.items()}
SUPPORTED_EXTENSIONS: tuple[str, ...] = tuple(FORMATS)
_CODE_MEDIA = {lang.media_type: name for name, lang in code.LANGUAGES.items()}
AS_TEXT_HINT = "to read it as plain text, add --as-text"


def unsupported(path: str | Path) -> ValidationError:
    """The refusal of a file of a type Maxy does not read, naming the way to read it anyway."""
    suffix = Path(path).suffix.lower()
    return ValidationError(
        str(path),
        f"unsupported file type {suffix or '(no extension)'!r}; supported: {', '.join(SUPPORTED_EXTENSIONS)}; "
        + AS_TEXT_HINT,
    )


def is_supported(path: str | Path) -> bool:
    return Path(path).suffix.lower() in FORMATS


def media_type_for(path: str | Path) -> str:
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise unsupported(path)
    return fmt.media_type


def parse_file(path: str | Path, *, as_text: bool = False) -> ParsedDocument:
    """Parse one file by its extension; ``as_text``: a file of an unknown type is read as plain text."""
    p = Path(path)
    fmt = FORMATS.get(p.suffix.lower())
    if fmt is None and not as_text:
        raise unsupported(p)
    if not p.is_file():
        raise ValidationError(str(p), "no such file")
    source = str(p.resolve())
    if fmt is not None and fmt.binary is not None:
        return fmt.binary(read_bytes(p), name=str(p), source_path=source, default_title=title_from_stem(p))
    text = read_text_file(p)
    if fmt is None:
        return parse_text(text, source_path=source, default_title=p.name)
    title = p.name if fmt.language else title_from_stem(p)  # code is known by its file name
    return parse_content(text, fmt.media_type, source_path=source, default_title=title)


def parse_content(
    text: str, media_type: str, *, source_path: str | None = None, default_title: str = "Untitled"
) -> ParsedDocument:
    """Parse text of a text-based media type (Markdown, plain text, HTML, reST, AsciiDoc, code)."""
    if media_type == "text/markdown":
        return parse_markdown(text, source_path=source_path, default_title=default_title)
    if media_type == "text/html":
        return parse_html(text, source_path=source_path, default_title=default_title)
    if media_type == "text/plain":
        return parse_text(text, source_path=source_path, default_title=default_title)
    if media_type == "text/x-rst":
        return parse_rst(text, source_path=source_path, default_title=default_title)
    if media_type == "text/asciidoc":
        return parse_asciidoc(text, source_path=source_path, default_title=default_title)
    if media_type in _CODE_MEDIA:
        return code.parse_code(text, _CODE_MEDIA[media_type], source_path=source_path, default_title=default_title)
    raise ValidationError("mediaType", f"unsupported media type {media_type!r}")


__all__ = [
    "AS_TEXT_HINT",
    "FORMATS",
    "MAX_FILE_BYTES",
    "MEDIA_TYPES",
    "SUPPORTED_EXTENSIONS",
    "Format",
    "ParsedDocument",
    "ParsedSection",
    "is_supported",
    "looks_binary",
    "media_type_for",
    "parse_asciidoc",
    "parse_content",
    "parse_file",
    "parse_html",
    "parse_markdown",
    "parse_rst",
    "parse_text",
    "read_text_file",
    "unsupported",
]
