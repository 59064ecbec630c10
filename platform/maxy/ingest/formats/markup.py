"""reStructuredText and AsciiDoc, by their heading syntax; everything else stays as text.

reST   a title line underlined (or over- and underlined) with one punctuation character;
       levels follow the order in which the adornment styles first appear. The first title
       is the document's; when its style is used once (a document title), the next three
       levels start sections, else the first three. Lines indented (literal blocks,
       directive bodies) are never titles.
AsciiDoc  ``= Title`` is the document title, ``==``..``====`` (or ``#``..``####``) start
       sections; underlined two-line titles (``=``, ``-``, ``~``, ``^``) too. Nothing inside
       delimited blocks (``----``, ``....``, ``====``, ...) is a heading; ``//`` comments and
       ``////`` comment blocks are left out."""

from __future__ import annotations

import re

from .document import ParsedDocument, finish

# ---------------------------------------------------------------------------------------
# reStructuredText
_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1+\s*$")
_RST_ROLE = re.compile(r":[\w:.+-]+:`([^`]+)`")
_RST_LINK = re.compile(r"`([^`<]+?)\s*<[^>]+>`__?")
_RST_INLINE = re.compile(r"(\*\*|\*|``|`)(\S(?:.*?\S)?)\1_{0,2}")


def _rst_inline(text: str) -> str:
    """A title's words without inline markup: roles, links, emphasis and literals keep their text."""
    text = _RST_ROLE.sub(lambda m: m.group(1).split("<")[0].strip(), text)
    text = _RST_LINK.sub(r"\1", text)
    text = _RST_INLINE.sub(r"\2", text)
    return " ".join(text.split())


def _rst_titles(lines: list[str]) -> list[tuple[int, int, str, tuple[str, bool]]]:
    """(first line, lines used, title, style) of each section title; style = (char, overlined)."""
    found = []
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        before_blank = i == 0 or not lines[i - 1].strip()
        over = _ADORNMENT.match(line)
        if over and before_blank and i + 2 < n and lines[i + 1].strip() and lines[i + 2].rstrip() == line.rstrip():
            found.append((i, 3, lines[i + 1].strip(), (line[0], True)))
            i += 3
            continue
        if line.strip() and not line[0].isspace() and not _ADORNMENT.match(line) and before_blank and i + 1 < n:
            under = _ADORNMENT.match(lines[i + 1])
            width = len(lines[i + 1].rstrip())
            if under and (width >= len(line.rstrip()) or width >= 4):
                found.append((i, 2, line.strip(), (lines[i + 1][0], False)))
                i += 2
                continue
        i += 1
    return found


def parse_rst(text: str, *, source_path: str | None = None, default_title: str = "Untitled") -> ParsedDocument:
    lines = text.split("\n")
    titles = _rst_titles(lines)
    styles: list[tuple[str, bool]] = []
    for *_, style in titles:
        if style not in styles:
            styles.append(style)
    used_once = bool(titles) and sum(1 for t in titles if t[3] == styles[0]) == 1
    sectioning = set(styles[: 4 if used_once else 3])
    title = _rst_inline(titles[0][2]) if titles else default_title
    sections: list[tuple[str, list[str]]] = [("", [])]
    at = 0
    for first, used, words, style in titles:
        sections[-1][1].extend(lines[at:first])
        if style in sectioning:
            sections.append((_rst_inline(words), []))
        else:
            sections[-1][1].append(words)  # a deeper title stays in the text, without its adornment
        at = first + used
    sections[-1][1].extend(lines[at:])
    return finish(title or default_title, sections, source_path, "text/x-rst")


# ---------------------------------------------------------------------------------------
# AsciiDoc
_ADOC_HEADING = re.compile(r"^(={1,6}|#{1,6})[ \t]+(\S.*?)[ \t]*(?:[ \t]\1)?$")
_ADOC_DELIMITER = re.compile(r"^(-{4,}|\.{4,}|\+{4,}|_{4,}|={4,}|\*{4,}|/{4,}|`{3,})[ \t]*$")
_ADOC_SETEXT = {"=": 0, "-": 1, "~": 2, "^": 3}
_ADOC_ATTRIBUTE = re.compile(r"^:([\w-]+!?):(?:[ \t]+(.*))?$")


def _adoc_setext(line: str, under: str) -> int | None:
    """The level of a two-line title (``Title`` over ``=====``), or None."""
    u = under.rstrip()
    if not line.strip() or line[0].isspace() or len(u) < 2 or u[0] not in _ADOC_SETEXT or u != u[0] * len(u):
        return None
    return _ADOC_SETEXT[u[0]] if abs(len(u) - len(line.rstrip())) <= 2 else None


def _adoc_heading(lines: list[str], i: int) -> tuple[int, str, int] | None:
    """(level, words, lines used) when a title starts at line ``i``."""
    line = lines[i]
    m = _ADOC_HEADING.match(line)
    if m:
        return len(m.group(1)) - 1, m.group(2), 1
    if i + 1 < len(lines) and (i == 0 or not lines[i - 1].strip()):
        level = _adoc_setext(line, lines[i + 1])
        if level is not None:
            return level, line.strip(), 2
    return None


def parse_asciidoc(text: str, *, source_path: str | None = None, default_title: str = "Untitled") -> ParsedDocument:
    lines = text.split("\n")
    sections: list[tuple[str, list[str]]] = [("", [])]
    title: str | None = None
    block: str | None = None  # the delimiter that closes the block we are in
    i = 0
    while i < len(lines):
        line = lines[i]
        current = sections[-1][1]
        i += 1
        if block is not None:
            if not block.startswith("/"):
                current.append(line)
            if line.rstrip() == block:
                block = None
            continue
        heading = _adoc_heading(lines, i - 1)
        if heading is not None:
            level, words, used = heading
            i += used - 1
            if level == 0 and title is None:
                title = words
            if level <= 3:
                sections.append((words, []))
            else:
                current.append(words)
        elif _ADOC_DELIMITER.match(line):
            block = line.rstrip()
            if not block.startswith("/"):
                current.append(line)
        elif line.startswith("//"):
            pass  # a comment line
        elif (
            len(sections) == 2
            and title is not None
            and not any(x.strip() for x in current)
            and _ADOC_ATTRIBUTE.match(line)
        ):
            pass  # the header's attribute entries (:author:, :toc:)
        else:
            current.append(line)
    return finish(title or default_title, sections, source_path, "text/asciidoc")
