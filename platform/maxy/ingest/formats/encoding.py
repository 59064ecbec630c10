"""Text files in any common encoding, and binary files refused.

The order: a byte order mark (UTF-8, UTF-16 and UTF-32, either byte order), then UTF-16 without
one (ASCII-range text leaves every other byte NUL), then strict UTF-8, then charset-normalizer's
best guess (Latin-1/cp1252, cp1251, Shift-JIS, ...). A file with NUL bytes that is not UTF-16 or
UTF-32, or whose decoded text is full of control characters, is refused as binary."""

from __future__ import annotations

import codecs
from pathlib import Path

from ...errors import ValidationError

MAX_FILE_BYTES = 50 * 1024 * 1024
_SAMPLE = 65536
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),  # before UTF-16 LE: its BOM starts the same way
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_LATIN_GUESSES = (
    "utf_16", "utf_32", "ascii", "latin_1", "cp1250", "cp1252", "cp1254", "cp1257", "cp1258", "cp437", "cp850",
    "cp852", "cp858", "iso8859_1", "iso8859_2", "iso8859_3", "iso8859_4", "iso8859_9", "iso8859_10", "iso8859_13",
    "iso8859_14", "iso8859_15", "iso8859_16", "mac_roman", "mac_latin2", "mac_iceland", "mac_turkish",
)  # fmt: skip
_TEXT_CONTROLS = frozenset("\t\n\r\f\v\x1b")


def read_bytes(path: Path) -> bytes:
    """A file's bytes, refusing one too large to ingest or unreadable."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ValidationError(str(path), f"file is {size} bytes; at most {MAX_FILE_BYTES} are ingested")
        return path.read_bytes()
    except OSError as err:
        raise ValidationError(str(path), f"cannot read file ({err.strerror or err})") from err


def _utf16_without_bom(sample: bytes) -> str | None:
    """``utf-16-le``/``-be`` when NUL bytes fall on one side of nearly every pair (Latin-script
    UTF-16), else None."""
    pairs = len(sample) // 2
    if pairs < 2:
        return None
    even_nul = sample[0 : pairs * 2 : 2].count(0)
    odd_nul = sample[1 : pairs * 2 : 2].count(0)
    if odd_nul >= 0.6 * pairs and even_nul <= 0.05 * pairs:
        return "utf-16-le"
    if even_nul >= 0.6 * pairs and odd_nul <= 0.05 * pairs:
        return "utf-16-be"
    return None


def _mostly_controls(text: str) -> bool:
    sample = text[:_SAMPLE]
    bad = sum(1 for ch in sample if (ord(ch) < 32 and ch not in _TEXT_CONTROLS) or ch == "\ufffd" or ch == "\x7f")
    return bool(sample) and bad / len(sample) > 0.01


def detect_encoding(data: bytes, *, partial: bool = False) -> str | None:
    """The encoding of ``data``, or None when it looks binary; ``partial``: ``data`` is the start
    of a file, perhaps cut inside a character."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return encoding
    sample = data[:_SAMPLE]
    if b"\x00" in sample:
        return _utf16_without_bom(sample)
    try:
        codecs.getincrementaldecoder("utf-8")().decode(data, final=not partial)
        return "utf-8"
    except UnicodeDecodeError:
        pass
    return _legacy_encoding(data)


def _legacy_encoding(data: bytes) -> str | None:
    """A single- or multi-byte legacy encoding: charset-normalizer's guess when it names a
    non-Latin script (cp1251, Shift-JIS, GB18030, ...), else cp1252 (Windows' Western code page,
    a superset of Latin-1's letters); charset-normalizer alone takes short French or German text
    for cp1250 or Mac Roman."""
    from charset_normalizer import from_bytes

    best = from_bytes(data[: _SAMPLE * 4]).best()
    guess = best.encoding if best is not None else None
    if guess is not None and not guess.startswith(_LATIN_GUESSES):
        return guess
    try:
        data.decode("cp1252")
        return "cp1252"
    except UnicodeDecodeError:
        return "latin-1"  # every byte is a character; control characters then mark it binary


def decode_text(data: bytes, name: str) -> str:
    """``data`` as text with ``\\n`` line ends; :class:`ValidationError` naming ``name`` when it
    is binary."""
    encoding = detect_encoding(data)
    if encoding is None:
        reason = "NUL bytes" if b"\x00" in data[:_SAMPLE] else "not text in any common encoding"
        raise ValidationError(name, f"looks like a binary file ({reason}), not text")
    bom = next((b for b, e in _BOMS if e == encoding and data.startswith(b)), b"")
    text = data[len(bom) :].decode(encoding, errors="replace")
    if _mostly_controls(text):
        raise ValidationError(name, f"looks like a binary file (control characters as {encoding}), not text")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_text_file(path: str | Path) -> str:
    """Decode a text file in whichever common encoding it is in; refuse a binary one."""
    p = Path(path)
    return decode_text(read_bytes(p), str(p))


def looks_binary(path: Path) -> bool:
    """Whether the start of a file is not text (for choosing a folder's files to read as text)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(_SAMPLE)
    except OSError:
        return False  # unreadable: reading it reports why
    encoding = detect_encoding(head, partial=True)
    if encoding is None:
        return True
    return _mostly_controls(head.decode(encoding, errors="ignore"))
