"""What ``maxy ingest`` tells a person while it runs: the estimate of a large file, what a
stopped earlier ingest of it left, and how far it is, as plain lines (for a piped or logged
ingest) or on the live bar (``maxy.ingest.cli``).

A large file is one written in bounded transactions (``maxy.ingest.staged``); its progress
is counted in chunks, with the time left from the rate measured so far.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .estimate import LONG_S, about, remaining_seconds

STEPS = 10  # a plain line each time a large file passes another tenth


def name_of(result: Any) -> str:
    return Path(result.path).name if result.path else result.attachment_id


def estimate_line(result: Any) -> str | None:
    """``big.txt: about 14,800 chunks, about 9 min at 27 chunks/s (...)`` when it is long."""
    est = result.estimate
    if est is None:
        return None
    seconds = est.seconds(result.resumed_chunks)
    if seconds is None or seconds <= LONG_S:
        return None
    rate = est.chunks_per_s or 0
    shown = f"{rate:.0f}" if rate >= 10 else f"{rate:.2g}"
    return (
        f"{name_of(result)}: about {est.chunks:,} chunks, {about(seconds)} at {shown} chunks/s "
        "(stop with Ctrl-C; the next ingest of this file resumes or cleans up)"
    )


def leftover_line(result: Any) -> str | None:
    """What a stopped earlier ingest of this file left, and what became of it."""
    if result.resumed_chunks:
        est = result.estimate
        of = f" of about {est.chunks:,}" if est is not None and est.chunks > result.resumed_chunks else ""
        return f"{name_of(result)}: resumed: {result.resumed_chunks:,}{of} chunks already written"
    if result.removed_leftover:
        return f"{name_of(result)}: removed {result.removed_leftover:,} nodes an earlier stopped ingest left"
    return None


def stopped_line(result: Any) -> str:
    """What Ctrl-C leaves of a large file, and the ways out."""
    path = result.path or "<file>"
    return (
        f"{name_of(result)}: stopped; the {result.chunks_done:,} chunks written so far stay hidden: the next "
        f"'maxy ingest {path}' resumes, or 'maxy purge --stopped' removes them"
    )


@dataclass
class FileProgress:
    """Where a large file is: chunks written of about how many, and the time left."""

    result: Any
    started: float = field(default_factory=time.perf_counter)  # once its leftovers are dealt with

    def measure(self, done_chars: int, total_chars: int) -> tuple[int, int, float | None]:
        """(chunks done, chunks expected, seconds left or None)."""
        r = self.result
        if r.estimate is None:
            return r.chunks_done, r.chunks_done, None
        total, left = remaining_seconds(
            r.estimate,
            r.chunks_done,
            done_chars,
            total_chars,
            time.perf_counter() - self.started,
            r.resumed_chunks,
        )
        return r.chunks_done, total, left


def percent_line(result: Any, share: float, done: int, total: int, left: float | None) -> str:
    """``ingest: big.txt 30% (4,440/14,800 chunks, about 6 min left)``."""
    tail = f", {about(left)} left" if left is not None and share < 1 else ""
    percent = int(share * 100)  # never ahead of what is written
    return f"ingest: {name_of(result)} {percent}% ({done:,}/{max(done, total):,} chunks{tail})"


class PlainProgress:
    """Progress as plain lines through ``say``: a line per file, and inside a large file its
    estimate, its leftovers and a line per tenth."""

    def __init__(self, say: Callable[[str], None], files: int):
        self.say = say
        self.files = files
        self.current: FileProgress | None = None
        self.step = 0

    def file_done(self, done: int, total: int, result: Any) -> None:
        what = "failed" if result.error else f"skipped ({result.reason})" if result.skipped else "done"
        self.say(f"ingest: {done}/{total} {name_of(result)} {what}")
        self.current = None

    def batch(self, result: Any, done_chars: int, total_chars: int) -> None:
        if self.current is None or self.current.result is not result:
            self.current = FileProgress(result)
            self.step = 0
            for line in (leftover_line(result), estimate_line(result)):
                if line:
                    self.say(line)
        share = done_chars / total_chars if total_chars else 1.0
        step = int(share * STEPS)
        if self.step < step < STEPS:
            self.step = step
            chunks, total, left = self.current.measure(done_chars, total_chars)
            self.say(percent_line(result, share, chunks, total, left))
