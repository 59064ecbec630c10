"""Source code: one section per top-level definition, headed by its kind and name
(``def parse_file``, ``class Foo``, ``func (Reader) Read``, ``CREATE TABLE users``), after a
preamble section (docstring, imports, settings) headed by the file name.

Python is split with :mod:`ast` (decorators and the comments just above a definition go with
it); other languages by definition lines at the left margin (Java also one level in, where its
methods sit). Comment and attribute lines just above a definition go with the definition. The
text is kept verbatim, indentation included: every line of the file is in exactly one section,
and only blank lines at a section's ends are dropped."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass

from .document import ParsedDocument, ParsedSection

_Rule = tuple[re.Pattern[str], Callable[[re.Match[str]], str]]


@dataclass(frozen=True)
class Language:
    media_type: str
    rules: tuple[_Rule, ...]
    comments: tuple[str, ...]  # prefixes of comment/attribute lines that belong to the next definition


def _kind_name(m: re.Match[str]) -> str:
    return f"{m.group('kind')} {m.group('name')}"


_JS_RULES: tuple[_Rule, ...] = (
    (
        re.compile(
            r"^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?(?P<kind>function\*?|class|interface|enum|namespace|module)\s+(?P<name>[\w$.]+)"
        ),
        lambda m: f"{m.group('kind').rstrip('*')} {m.group('name')}",
    ),
    (re.compile(r"^(?:export\s+)?(?:declare\s+)?(?P<kind>type)\s+(?P<name>[\w$]+)\b[^=]*="), _kind_name),
    (
        re.compile(
            r"^(?:export\s+)?(?:const|let|var)\s+(?P<name>[\w$]+)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|[\w$]+\s*=>)"
        ),
        lambda m: f"function {m.group('name')}",
    ),
    (re.compile(r"^export\s+default\s+(?P<name>function|class)\b"), lambda m: f"export default {m.group('name')}"),
    (re.compile(r"^module\.exports\s*="), lambda m: "module.exports"),
)
_C_SKIP = r"(?!(?:if|for|while|switch|return|else|do|case|typedef|using|template)\b)"
_C_RULES: tuple[_Rule, ...] = (
    (
        re.compile(
            r"^(?:typedef\s+)?(?P<kind>struct|union|enum|class|namespace)\s+(?P<name>\w+)\s*(?:final\s*)?(?::[^;{]*)?\{?\s*$"
        ),
        _kind_name,
    ),
    (
        re.compile(r"^" + _C_SKIP + r"[A-Za-z_][\w\s\*&:<>,]*?[\s\*&](?P<name>~?[\w:]+)\s*\([^;]*$"),
        lambda m: f"{m.group('name')}()",
    ),
)
_JAVA_MODS = (
    r"(?:(?:public|private|protected|static|final|abstract|synchronized|native|default|sealed|non-sealed|strictfp)\s+)"
)
LANGUAGES: dict[str, Language] = {
    "python": Language("text/x-python", (), ("#", "@")),
    "javascript": Language("text/javascript", _JS_RULES, ("//", "/*", "*", "@")),
    "typescript": Language("text/x-typescript", _JS_RULES, ("//", "/*", "*", "@")),
    "go": Language(
        "text/x-go",
        (
            (
                re.compile(r"^func\s+\(\s*\w*\s*\*?(?P<recv>\w+)[^)]*\)\s*(?P<name>\w+)"),
                lambda m: f"func ({m.group('recv')}) {m.group('name')}",
            ),
            (re.compile(r"^func\s+(?P<name>\w+)"), lambda m: f"func {m.group('name')}"),
            (re.compile(r"^(?P<kind>type)\s+(?P<name>\w+)"), _kind_name),
        ),
        ("//", "/*", "*"),
    ),
    "java": Language(
        "text/x-java",
        (
            (
                re.compile(
                    r"^(?:    |\t)?" + _JAVA_MODS + r"*(?P<kind>class|interface|enum|record|@interface)\s+(?P<name>\w+)"
                ),
                _kind_name,
            ),
            (
                re.compile(
                    r"^(?:    |\t)" + _JAVA_MODS + r"+(?:<[^>]+>\s+)?[\w<>\[\],.? ]+\s+(?P<name>\w+)\s*\([^;]*$"
                ),
                lambda m: f"{m.group('name')}()",
            ),
        ),
        ("//", "/*", "*", "@"),
    ),
    "rust": Language(
        "text/x-rust",
        (
            (
                re.compile(
                    r"^(?:pub(?:\([^)]*\))?\s+)?(?:(?:const|async|unsafe|extern\s+\"\w+\")\s+)*(?P<kind>fn|struct|enum|trait|union|mod|type)\s+(?P<name>\w+)"
                ),
                _kind_name,
            ),
            (
                re.compile(r"^(?:unsafe\s+)?impl\b(?:\s*<[^>]*>)?\s+(?P<what>[^{]+?)\s*(?:where\b.*)?\{?\s*$"),
                lambda m: f"impl {m.group('what')}",
            ),
            (re.compile(r"^macro_rules!\s*(?P<name>\w+)"), lambda m: f"macro {m.group('name')}"),
        ),
        ("//", "/*", "*", "#["),
    ),
    "c": Language("text/x-c", _C_RULES, ("//", "/*", "*")),
    "cpp": Language("text/x-c++", _C_RULES, ("//", "/*", "*", "template")),
    "shell": Language(
        "text/x-shellscript",
        (
            (re.compile(r"^(?:function\s+)?(?P<name>[\w.:-]+)\s*\(\s*\)\s*\{?"), lambda m: f"{m.group('name')}()"),
            (re.compile(r"^function\s+(?P<name>[\w.:-]+)\s*\{?\s*$"), lambda m: f"{m.group('name')}()"),
        ),
        ("#",),
    ),
    "sql": Language(
        "application/sql",
        (
            (
                re.compile(
                    r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:(?:TEMP|TEMPORARY|UNIQUE|UNLOGGED|RECURSIVE)\s+)?"
                    r"(?P<kind>TABLE|VIEW|MATERIALIZED\s+VIEW|FUNCTION|PROCEDURE|INDEX|TRIGGER|TYPE|SCHEMA|SEQUENCE|DOMAIN)\s+"
                    r"(?:IF\s+NOT\s+EXISTS\s+)?(?P<name>[\w.\"`\[\]]+)",
                    re.I,
                ),
                lambda m: f"CREATE {' '.join(m.group('kind').upper().split())} {m.group('name')}",
            ),
        ),
        ("--", "/*", "*"),
    ),
}


def _python_starts(text: str, lines: list[str]) -> list[tuple[int, str]] | None:
    """(first line index, heading) of each top-level definition, or None if ``text`` does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    starts = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            kind = {ast.FunctionDef: "def", ast.AsyncFunctionDef: "async def", ast.ClassDef: "class"}[type(node)]
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
            starts.append((first, f"{kind} {node.name}"))
    return starts


_MAX_DEFINITION_LINE = 400  # longer lines (data, minified code) are never definitions, and not searched
_PY_FALLBACK: tuple[_Rule, ...] = ((re.compile(r"^(?P<kind>async\s+def|def|class)\s+(?P<name>\w+)"), _kind_name),)


def _rule_starts(lines: list[str], rules: tuple[_Rule, ...]) -> list[tuple[int, str]]:
    starts = []
    for i, line in enumerate(lines):
        if len(line) > _MAX_DEFINITION_LINE or not line[:1].strip() and not line.startswith(("    ", "\t")):
            continue  # a definition line is short; and starts at the margin or one level in
        for pattern, heading in rules:
            m = pattern.match(line)
            if m:
                starts.append((i, " ".join(heading(m).split())))
                break
    return starts


def _with_leading_comments(
    lines: list[str], starts: list[tuple[int, str]], comments: tuple[str, ...]
) -> list[tuple[int, str]]:
    """Move each start up over the comment and attribute lines right above it."""
    out: list[tuple[int, str]] = []
    floor = 0
    for first, heading in starts:
        i = first
        while i > floor and lines[i - 1].strip() and lines[i - 1].lstrip().startswith(comments):
            i -= 1
        out.append((i, heading))
        floor = first + 1
    return out


def _verbatim(lines: list[str]) -> str:
    """The lines as written, without blank lines at either end."""
    a, b = 0, len(lines)
    while a < b and not lines[a].strip():
        a += 1
    while b > a and not lines[b - 1].strip():
        b -= 1
    return "\n".join(lines[a:b])


def split_code(text: str, language: str) -> list[tuple[str, str]]:
    """(heading, verbatim text) pieces; the first heading is ``""`` for the preamble."""
    lang = LANGUAGES[language]
    lines = text.split("\n")
    starts = _python_starts(text, lines) if language == "python" else None
    if starts is None:
        starts = _rule_starts(lines, _PY_FALLBACK if language == "python" else lang.rules)
    starts = _with_leading_comments(lines, starts, lang.comments)
    bounds = starts if starts and starts[0][0] == 0 else [(0, ""), *starts]  # the preamble first
    pieces = []
    for k, (first, heading) in enumerate(bounds):
        end = bounds[k + 1][0] if k + 1 < len(bounds) else len(lines)
        pieces.append((heading, _verbatim(lines[first:end])))
    return pieces


def parse_code(
    text: str, language: str, *, source_path: str | None = None, default_title: str = "Untitled"
) -> ParsedDocument:
    sections = [ParsedSection(heading or default_title, body) for heading, body in split_code(text, language) if body]
    return ParsedDocument(
        title=default_title, sections=sections, source_path=source_path, media_type=LANGUAGES[language].media_type
    )
