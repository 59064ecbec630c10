"""The SciFact folder the benchmarks read: required on the command line, checked up front.

SciFact in BEIR format (``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``) comes
from the BEIR benchmark distribution (https://github.com/beir-cellar/beir, the
``BeIR/scifact`` dataset); docs/search-quality.md, "The evaluation data", describes it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "a SciFact folder in BEIR format (corpus.jsonl, queries.jsonl, qrels/), e.g. path/to/scifact"


def add_dir_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dir", type=Path, default=None, help=f"required: {HELP}")


def require_dir(parser: argparse.ArgumentParser, directory: Path | None, *files: str) -> Path:
    """``directory`` when it holds every one of ``files``; otherwise exit with a one-line error."""
    if directory is None:
        parser.exit(2, f"{parser.prog}: --dir is missing: pass {HELP} (see docs/search-quality.md)\n")
    missing = [name for name in files if not (directory / name).is_file()]
    if missing:
        parser.exit(
            2,
            f"{parser.prog}: --dir {directory} has no {', '.join(missing)}: pass {HELP} (see docs/search-quality.md)\n",
        )
    return directory
