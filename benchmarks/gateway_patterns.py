"""How well the gateway's local prompt-injection patterns separate injections from ordinary
messages, against a naive baseline measured in the same run.

    .venv/bin/python benchmarks/gateway_patterns.py [--json] [--show tune|held-out]

The corpus is ``benchmarks/data/gateway/`` (sources and licences in its README). Each message
falls in the ``tune`` or the ``held-out`` half by a hash of its text; the patterns were tuned
looking only at the tune half, so the held-out figures are the honest ones. Catch rate: share of
injections flagged; false-positive rate: share of ordinary messages flagged; each overall and
for short messages (under five words, the ones that never reach the model). ``--show`` lists
the misses and false positives of one half.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from maxy.gateway.patterns import local_hits
from maxy.gateway.screen import SHORT_WORDS

CORPUS = Path(__file__).resolve().parent / "data" / "gateway"
SPLITS = ("tune", "held-out", "all")
BASELINE_PHRASE = "ignore previous instructions"
BASELINE_KEYWORDS = (
    BASELINE_PHRASE,
    "ignore all previous instructions",
    "system prompt",
    "jailbreak",
    "developer mode",
)


@dataclass(frozen=True)
class Example:
    text: str
    injection: bool
    source: str

    @property
    def split(self) -> str:
        return "tune" if hashlib.sha256(self.text.encode("utf-8")).digest()[0] % 2 == 0 else "held-out"

    @property
    def short(self) -> bool:
        return len(self.text.split()) < SHORT_WORDS


def load_corpus(folder: Path = CORPUS) -> list[Example]:
    examples = []
    for name, injection in (("injections.jsonl", True), ("ordinary.jsonl", False)):
        for line in (folder / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                examples.append(Example(row["text"], injection, row["source"]))
    return examples


def phrase(text: str) -> bool:
    """The naive baseline: the one phrase everybody checks for first."""
    return BASELINE_PHRASE in text.lower()


def keywords(text: str) -> bool:
    """A second baseline: a handful of well-known phrases, as substrings."""
    lowered = text.lower()
    return any(k in lowered for k in BASELINE_KEYWORDS)


def vocabulary(text: str) -> bool:
    """The gateway's local patterns."""
    return bool(local_hits(text))


MATCHERS: dict[str, Callable[[str], bool]] = {"phrase": phrase, "keywords": keywords, "vocabulary": vocabulary}


def _rate(flags: Iterable[bool]) -> dict[str, float | int]:
    values = list(flags)
    return {"rate": round(sum(values) / len(values), 3) if values else 0.0, "flagged": sum(values), "n": len(values)}


def measure(examples: list[Example], flag: Callable[[str], bool]) -> dict[str, dict[str, dict[str, float | int]]]:
    """Catch and false-positive rates of ``flag`` per split, overall and for short messages."""
    verdicts = {e.text: flag(e.text) for e in examples}
    out: dict[str, dict[str, dict[str, float | int]]] = {}
    for split in SPLITS:
        part = [e for e in examples if split == "all" or e.split == split]
        out[split] = {
            "catch": _rate(verdicts[e.text] for e in part if e.injection),
            "catchShort": _rate(verdicts[e.text] for e in part if e.injection and e.short),
            "falsePositive": _rate(verdicts[e.text] for e in part if not e.injection),
            "falsePositiveShort": _rate(verdicts[e.text] for e in part if not e.injection and e.short),
        }
    return out


def _microseconds_per_message(examples: list[Example]) -> float:
    started = time.perf_counter()
    for _ in range(5):
        for e in examples:
            local_hits(e.text)
    return round((time.perf_counter() - started) / (5 * len(examples)) * 1e6, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--show", choices=("tune", "held-out"), help="list one half's misses and false positives")
    args = parser.parse_args()

    examples = load_corpus()
    report: dict[str, Any] = {
        "corpus": {
            "injections": sum(e.injection for e in examples),
            "ordinary": sum(not e.injection for e in examples),
            "short": sum(e.short for e in examples),
        },
        **{name: measure(examples, flag) for name, flag in MATCHERS.items()},
        "microsecondsPerMessage": _microseconds_per_message(examples),
    }
    if args.show:
        part = [e for e in examples if e.split == args.show]
        report["misses"] = [e.text for e in part if e.injection and not local_hits(e.text)]
        report["falsePositives"] = [
            {"text": e.text, "hits": local_hits(e.text)} for e in part if not e.injection and local_hits(e.text)
        ]
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        _print(report)


def _print(report: dict[str, Any]) -> None:
    c = report["corpus"]
    print(f"corpus: {c['injections']} injections, {c['ordinary']} ordinary, {c['short']} under {SHORT_WORDS} words")
    print(f"{'matcher':<11} {'split':<9} {'catch':>15} {'catch short':>15} {'false pos':>15} {'fp short':>15}")
    for name in MATCHERS:
        for split in SPLITS:
            row = report[name][split]
            cells = [f"{row[k]['rate']:.3f} ({row[k]['flagged']}/{row[k]['n']})" for k in row]
            print(f"{name:<11} {split:<9} " + " ".join(f"{cell:>15}" for cell in cells))
    print(f"local patterns: {report['microsecondsPerMessage']} µs per message")
    for text in report.get("misses", []):
        print(f"miss: {text!r}")
    for row in report.get("falsePositives", []):
        print(f"false positive {','.join(row['hits'])}: {row['text']!r}")


if __name__ == "__main__":
    main()
