"""Markdown: ``#``..``###`` headings (and ``===``/``---`` underlined ones) start sections; front
matter is stripped (its ``title:`` is used); fenced code is kept as text."""

from __future__ import annotations

import re

from .document import ParsedDocument, finish

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
    return finish(title, sections, source_path, "text/markdown")
