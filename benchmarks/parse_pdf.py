"""PDF parsing: ``parse_file`` on a generated N-page PDF (text on every page, an outline of
chapters and sections), against, in the same run, pypdf's text extraction of the same file
(the pure-Python library Maxy did not choose), PDFium's text extraction alone (what
``parse_file`` adds on top of it: the outline and the cuts), ``parse_file`` of the same PDF
without its outline (headings found by font size) and the same text parsed as a plain-text
file.

    .venv/bin/python benchmarks/parse_pdf.py [--pages 100] [--repeat 5] [--json]

The PDF is written by this script (no tool needed, the same bytes every run): Helvetica, 11
point, 46 lines of 80 to 95 characters a page from a fixed word list and seed; a chapter
heading (16 point) every ten pages and a section heading (13 point) every other page, each
in the outline with its page as destination. pypdf comes with ``pip install -e .[bench]``.
The readers take turns, ``--repeat`` rounds; each one's best run is reported, in CPU time
(what the parse costs, whatever else the machine runs) and wall time, with the median wall
time; pages/s are by CPU time."""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from maxy.ingest import parse_file

WORDS = (
    "keeper lamp lens beam light tower gallery storm shutter fog signal horn tide chart buoy harbour pilot "
    "vessel anchor chain windlass watch log barometer wind gale swell reef rock shore coast island channel "
    "current ebb flood water depth fathom mile bearing course compass north south east west clockwork wick "
    "paraffin oil glass prism rotation flash period range visibility night dawn dusk supply tender relief"
).split()
LINES_PER_PAGE = 46


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _page_lines(rng: random.Random) -> list[str]:
    lines = []
    for _ in range(LINES_PER_PAGE):
        words: list[str] = []
        target = rng.randint(80, 95)
        while len(" ".join(words)) < target:
            words.append(rng.choice(WORDS))
        line = " ".join(words)
        lines.append(line[0].upper() + line[1:] + ("." if rng.random() < 0.3 else ""))
    return lines


class _Objects:
    """A PDF's numbered objects, written in order with their cross-reference table."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []  # object k+1 is bodies[k]

    def add(self, body: str | bytes = b"") -> int:
        self.bodies.append(body.encode("latin-1") if isinstance(body, str) else body)
        return len(self.bodies)

    def set(self, oid: int, body: str) -> None:
        self.bodies[oid - 1] = body.encode("latin-1")

    def serialise(self, catalog: int, info: int) -> bytes:
        out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
        offsets = []
        for k, body in enumerate(self.bodies, start=1):
            offsets.append(len(out))
            out += b"%d 0 obj\n" % k + body + b"\nendobj\n"
        xref = len(out)
        out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(self.bodies) + 1)
        out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
        out += b"trailer\n<< /Size %d /Root %d 0 R /Info %d 0 R >>\n" % (len(self.bodies) + 1, catalog, info)
        out += b"startxref\n%d\n%%%%EOF\n" % xref
        return bytes(out)


def _page(rng: random.Random, p: int, chapter: int, marks: list[tuple[int, str, int]]) -> tuple[str, list[str]]:
    """One page's content stream and its lines; its headings are added to ``marks``."""
    ops = ["BT", "/F1 11 Tf", "14 TL", "72 760 Td"]
    lines = []
    if p % 10 == 0:
        title = f"Chapter {chapter}: {rng.choice(WORDS).title()} and {rng.choice(WORDS).title()}"
        marks.append((0, title, p))
        ops += ["/F1 16 Tf", f"({_escape(title)}) Tj", "0 -22 Td", "/F1 11 Tf"]
        lines.append(title)
    if p % 2 == 0:
        title = f"{chapter}.{p % 10 // 2 + 1} {rng.choice(WORDS).title()} {rng.choice(WORDS)}"
        marks.append((1, title, p))
        ops += ["/F1 13 Tf", f"({_escape(title)}) Tj", "0 -18 Td", "/F1 11 Tf"]
        lines.append(title)
    body = _page_lines(rng)[: LINES_PER_PAGE - len(lines)]
    ops += [f"({_escape(line)}) '" for line in body] + ["ET"]
    return "\n".join(ops), lines + body


def _outline(pdf: _Objects, root: int, marks: list[tuple[int, str, int]], page_ids: list[int]) -> None:
    """Chapters at the top of the outline, their sections below them."""
    ids = [pdf.add() for _ in marks]
    tops: list[int] = []
    kids: dict[int, list[int]] = {}
    for (level, _, _), oid in zip(marks, ids, strict=True):
        if level == 0:
            tops.append(oid)
            kids[oid] = []
        else:
            kids[tops[-1]].append(oid)

    def link(siblings: list[int], parent: int) -> None:
        for i, oid in enumerate(siblings):
            _, title, page = marks[ids.index(oid)]
            fields = [
                f"/Title ({_escape(title)})",
                f"/Parent {parent} 0 R",
                f"/Dest [{page_ids[page]} 0 R /XYZ 0 792 0]",
            ]
            fields += [f"/Prev {siblings[i - 1]} 0 R"] if i else []
            fields += [f"/Next {siblings[i + 1]} 0 R"] if i + 1 < len(siblings) else []
            children = kids.get(oid, [])
            if children:
                fields += [f"/First {children[0]} 0 R", f"/Last {children[-1]} 0 R", f"/Count {len(children)}"]
                link(children, oid)
            pdf.set(oid, "<< " + " ".join(fields) + " >>")

    link(tops, root)
    pdf.set(root, f"<< /Type /Outlines /First {tops[0]} 0 R /Last {tops[-1]} 0 R /Count {len(marks)} >>")


def build_pdf(pages: int, seed: int = 7, outline: bool = True) -> tuple[bytes, str]:
    """A PDF of ``pages`` pages with an outline (unless ``outline`` is false), and the same text
    as plain text."""
    rng = random.Random(seed)
    pdf = _Objects()
    catalog, pages_obj, outlines = pdf.add(), pdf.add(), pdf.add()
    font = pdf.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    info = pdf.add("<< /Title (Lighthouse Keeping, generated) /Producer (benchmarks/parse_pdf.py) >>")
    page_ids: list[int] = []
    marks: list[tuple[int, str, int]] = []  # (level, title, page index)
    plain: list[str] = []
    for p in range(pages):
        ops, lines = _page(rng, p, p // 10 + 1, marks)
        plain.append("\n".join(lines))
        stream = ops.encode("latin-1")
        content = pdf.add(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        page_ids.append(
            pdf.add(
                f"<< /Type /Page /Parent {pages_obj} 0 R /MediaBox [0 0 612 792] "
                f"/Resources << /Font << /F1 {font} 0 R >> >> /Contents {content} 0 R >>"
            )
        )
    pdf.set(pages_obj, f"<< /Type /Pages /Kids [{' '.join(f'{i} 0 R' for i in page_ids)}] /Count {pages} >>")
    if outline:
        _outline(pdf, outlines, marks, page_ids)
        pdf.set(catalog, f"<< /Type /Catalog /Pages {pages_obj} 0 R /Outlines {outlines} 0 R /PageMode /UseOutlines >>")
    else:
        pdf.set(outlines, "null")
        pdf.set(catalog, f"<< /Type /Catalog /Pages {pages_obj} 0 R >>")
    return pdf.serialise(catalog, info), "\n\n".join(plain)


def pdfium_text(path: Path) -> int:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(path)
    try:
        total = 0
        for i in range(len(pdf)):
            page = pdf[i]
            textpage = page.get_textpage()
            total += len(textpage.get_text_range())
            textpage.close()
            page.close()
        return total
    finally:
        pdf.close()


def pypdf_text(path: Path) -> int:
    from pypdf import PdfReader

    reader = PdfReader(path)
    _ = reader.outline
    return sum(len(page.extract_text() or "") for page in reader.pages)


def timed(readers: dict[str, Callable[[], Any]], repeat: int) -> list[dict[str, Any]]:
    """Each reader ``repeat`` times, taking turns (so load from other work falls on all alike):
    wall and CPU seconds of the best run, the median wall time, what the last run returned."""
    wall: dict[str, list[float]] = {name: [] for name in readers}
    cpu: dict[str, list[float]] = {name: [] for name in readers}
    results: dict[str, Any] = {}
    for _ in range(repeat):
        for name, fn in readers.items():
            t0, c0 = time.perf_counter(), time.process_time()
            results[name] = fn()
            wall[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
    rows = []
    for name in readers:
        row: dict[str, Any] = {
            "reader": name,
            "best_s": round(min(wall[name]), 4),
            "median_s": round(statistics.median(wall[name]), 4),
            "cpu_s": round(min(cpu[name]), 4),
        }
        if hasattr(results[name], "sections"):
            row["sections"] = len(results[name].sections)
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    data, plain = build_pdf(args.pages)
    with tempfile.TemporaryDirectory() as tmp:
        pdf_path = Path(tmp) / "bench.pdf"
        pdf_path.write_bytes(data)
        flat_path = Path(tmp) / "bench-no-outline.pdf"
        flat_path.write_bytes(build_pdf(args.pages, outline=False)[0])
        txt_path = Path(tmp) / "bench.txt"
        txt_path.write_text(plain, encoding="utf-8")
        parse_file(pdf_path)  # warm up: the library's first load
        readers: dict[str, Callable[[], Any]] = {
            "maxy parse_file (pypdfium2, outline sections)": lambda: parse_file(pdf_path),
            "maxy parse_file, no outline (font-size headings)": lambda: parse_file(flat_path),
            "pypdfium2 text only": lambda: pdfium_text(pdf_path),
            "pypdf text + outline (baseline)": lambda: pypdf_text(pdf_path),
            "maxy parse_file of the same text as .txt": lambda: parse_file(txt_path),
        }
        figures = timed(readers, args.repeat)
        for row in figures:
            row["pages_per_s"] = round(args.pages / row["cpu_s"], 1)
    if args.json:
        print(json.dumps({"pages": args.pages, "bytes": len(data), "repeat": args.repeat, "figures": figures}))
        return
    print(f"{args.pages} pages, {len(data)} bytes, best of {args.repeat} turns; pages/s by CPU time:")
    base = next(f["cpu_s"] for f in figures if f["reader"].startswith("pypdf text"))
    for f in figures:
        sections = f" ({f['sections']} sections)" if "sections" in f else ""
        print(
            f"  {f['reader']:<50} cpu {f['cpu_s'] * 1000:7.1f} ms, wall {f['best_s'] * 1000:7.1f} ms "
            f"(median {f['median_s'] * 1000:.1f})  {f['pages_per_s']:7.1f} pages/s  x{base / f['cpu_s']:.1f} vs pypdf"
            f"{sections}"
        )


if __name__ == "__main__":
    main()
