"""HTML: stdlib ``html.parser``; script/style/nav/... dropped; h1-h3 start sections; title from
``<title>`` or the first ``<h1>``."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from .document import ParsedDocument, finish

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
    return finish(title, sections, source_path, "text/html")
