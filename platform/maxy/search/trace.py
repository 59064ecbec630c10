"""One search run: its timings, counts and warnings, and the one log line it ends with."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..graph.guards import Caller
from ..logs import log_line, short
from .hits import Hit

COMPONENT = "graph-search:hybrid"
# The counts every log line carries, in this order (absent: 0).
COUNTS = (
    "expansions",
    "vector",
    "bm25",
    "keyword",
    "exact",
    "fused",
    "dated",
    "episode",
    "boosted",
    "deduped",
    "below_cut",
    "final",
)


@dataclass
class SearchResponse:
    hits: list[Hit]
    mode: str  # hybrid | rrf | vector | bm25 | none | skipped
    stats: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    nearest_miss: Hit | None = None  # the best hit the relevance cut left out, when it left out all


@dataclass
class SearchRun:
    caller: Caller
    retrieval_class: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)  # "<box>_ms" -> milliseconds
    warnings: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)

    @contextmanager
    def timed(self, box: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.timings[f"{box}_ms"] = self.timings.get(f"{box}_ms", 0.0) + (time.perf_counter() - t0) * 1000

    def count(self, **counts: int) -> None:
        self.counts.update(counts)

    def warn(self, reason: str) -> None:
        """A degraded path: said in the response and as a warning line."""
        self.warnings.append(reason)
        log_line(COMPONENT, "warn", level=logging.WARNING, accountId=short(self.caller.account_id), reason=reason)

    def finish(self, hits: list[Hit], mode: str, nearest_miss: Hit | None = None) -> SearchResponse:
        """The response, and the one line per search."""
        total = (time.perf_counter() - self.started) * 1000
        self.counts["final"] = len(hits)
        stats: dict[str, Any] = {name: self.counts.get(name, 0) for name in COUNTS}
        stats.update(ms=total, **self.timings)
        log_line(
            COMPONENT,
            accountId=short(self.caller.account_id),
            retrievalClass=self.retrieval_class or "none",
            **{name: stats[name] for name in COUNTS},
            mode=mode,
            ms=round(total),
            expand_ms=round(self.timings.get("query_expansion_ms", 0.0)),
            graph_ms=round(self.timings.get("graph_expansion_ms", 0.0)),
        )
        return SearchResponse(hits, mode, stats, list(self.warnings), nearest_miss)
