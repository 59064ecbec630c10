"""How long a large document's ingest will take: its chunks, estimated from its size, and the
rate this machine writes them at.

The chunks are ``characters / characters per chunk`` (cutting the text first would cost as
much as a good share of the ingest: the chunker reads about 0.1 MB/s). The rate is the one
the last large ingest with the same embedder and summariser measured, remembered in
``<cache dir>/ingest-rate.json``; without one, it is measured here: a few chunk-sized pieces
of the document, summarised and embedded as its chunks will be, are timed. While the ingest
runs, its caller refines both from what has been written (:func:`remaining_seconds`).
"""

from __future__ import annotations

import json
import logging
import math
import time
from dataclasses import dataclass
from typing import Any

from ..config import cache_dir
from ..graph.text import embedding_text
from ..logs import log_line
from .chunker import ChunkBounds
from .summarize import ExtractiveSummarizer

RATE_FILE = "ingest-rate.json"
LONG_S = 60.0  # an ingest expected to take longer than this is announced up front
CALIBRATION_PIECES = 8
CALIBRATION_WARMUP = 4  # the first few calls of a fresh model run slower than the rest
MIN_REMEMBERED_CHUNKS = 20  # a shorter run measures its start-up more than its rate


@dataclass(frozen=True)
class Estimate:
    """About how many chunks a document makes and how fast they are written (None: unknown)."""

    chunks: int
    chunks_per_s: float | None
    rate_from: str  # "last run", "measured now" or "unknown"

    def seconds(self, done: int = 0) -> float | None:
        if not self.chunks_per_s:
            return None
        return max(0, self.chunks - done) / self.chunks_per_s

    def as_dict(self, done: int = 0) -> dict[str, Any]:
        seconds = self.seconds(done)
        return {
            "chunks": self.chunks,
            "chunksPerSecond": None if self.chunks_per_s is None else round(self.chunks_per_s, 2),
            "seconds": None if seconds is None else round(seconds),
            "rateFrom": self.rate_from,
        }


def _rate_path() -> Any:
    return cache_dir() / RATE_FILE


def _rate_key(embedder_name: str | None, summarizer_name: str) -> str:
    return f"{embedder_name or 'none'}|{summarizer_name}"


def remembered(embedder_name: str | None, summarizer_name: str) -> dict[str, float] | None:
    """``{"chunksPerSecond", "charsPerChunk"}`` of the last large ingest with these, if any."""
    try:
        data = json.loads(_rate_path().read_text(encoding="utf-8"))
        entry = data.get(_rate_key(embedder_name, summarizer_name))
        rate, size = float(entry["chunksPerSecond"]), float(entry["charsPerChunk"])
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    return {"chunksPerSecond": rate, "charsPerChunk": size} if rate > 0 and size > 0 else None


def remember(embedder_name: str | None, summarizer_name: str, chunks: int, chars: int, seconds: float) -> None:
    """Keep what a large ingest measured for the next one's estimate (best effort: a cache
    that cannot be written only costs the next estimate its first guess)."""
    if chunks < MIN_REMEMBERED_CHUNKS or seconds <= 0 or chars <= 0:
        return
    path = _rate_path()
    try:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            data = data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            data = {}
        data[_rate_key(embedder_name, summarizer_name)] = {
            "chunksPerSecond": round(chunks / seconds, 3),
            "charsPerChunk": round(chars / chunks, 1),
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    except OSError as err:
        log_line("ingest", "warn", level=logging.DEBUG, reason="rate-not-kept", error=str(err)[:160])


def default_chars_per_chunk(bounds: ChunkBounds) -> float:
    """Chunks end at a topic break once past ``min_chars``, or near ``target_chars``: most
    land between the two."""
    return (bounds.min_chars + bounds.target_chars) / 2


def calibrate(embedder: Any, text: str, title: str, bounds: ChunkBounds) -> float | None:
    """Chunks per second this machine summarises and embeds, timed on a few chunk-sized pieces
    of ``text`` (None when there is no embedder or it fails)."""
    if embedder is None:
        return None
    size = round(default_chars_per_chunk(bounds))
    count = CALIBRATION_WARMUP + CALIBRATION_PIECES
    step = max(1, len(text) // count)
    pieces = [p for p in (text[i : i + size] for i in range(0, len(text), step)) if p.strip()][:count]
    if len(pieces) <= CALIBRATION_WARMUP:
        return None
    summarizer = ExtractiveSummarizer()
    try:
        texts = [
            embedding_text(("Chunk",), {"content": p, "summary": summarizer.summarize("chunk", p, title)}) or p
            for p in pieces
        ]
        for text in texts[:CALIBRATION_WARMUP]:  # loads and warms the model, outside the timing
            embedder.embed([text])
        started = time.perf_counter()
        embedder.embed(texts[CALIBRATION_WARMUP:])
        seconds = time.perf_counter() - started
    except Exception as err:  # noqa: BLE001 - an estimate never stops an ingest
        log_line("ingest", "warn", level=logging.DEBUG, reason="calibration-failed", error=str(err)[:160])
        return None
    return (len(texts) - CALIBRATION_WARMUP) / seconds if seconds > 0 else None


def estimate(
    text_chars: int, bounds: ChunkBounds, embedder: Any, summarizer_name: str, sample: str, title: str
) -> Estimate:
    """The estimate of a document of ``text_chars`` characters (``sample``: its text, or the
    start of it, for a calibration when no rate is remembered)."""
    name = getattr(embedder, "name", None) if embedder is not None else None
    last = remembered(name, summarizer_name)
    size = last["charsPerChunk"] if last else default_chars_per_chunk(bounds)
    chunks = max(1, math.ceil(text_chars / size))
    if last:
        return Estimate(chunks, last["chunksPerSecond"], "last run")
    rate = calibrate(embedder, sample, title, bounds)
    return Estimate(chunks, rate, "measured now" if rate else "unknown")


def remaining_seconds(
    est: Estimate, chunks_done: int, chars_done: int, text_chars: int, elapsed: float, resumed: int
) -> tuple[int, float | None]:
    """The chunks expected in all and the seconds left, from what has been written so far:
    the characters per chunk seen, and the rate of this run once it has written a few."""
    total = est.chunks
    if chunks_done and chars_done:
        total = max(chunks_done, math.ceil(text_chars * chunks_done / chars_done))
    written = chunks_done - resumed
    rate = written / elapsed if written >= 3 and elapsed > 0 else est.chunks_per_s
    if not rate:
        return total, None
    return total, max(0, total - chunks_done) / rate


def about(seconds: float) -> str:
    """``about 40 s``, ``about 9 min``, ``about 2 h``, ``about 2 h 10 min``."""
    if seconds < 90:
        return f"about {max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    if minutes < 120:
        return f"about {minutes} min"
    hours, rest = divmod(minutes, 60)
    return f"about {hours} h {rest} min" if rest else f"about {hours} h"
