"""A long-running server's heap, settled once it has started.

Python's cycle collector now and then walks every object the process holds: about 60,000 once
Maxy, the Neo4j driver and the embedder are loaded, 10 to 20 ms on an idle core and 40 to 70 on
a busy one. A search that ran into one of those walks was among the slowest (docs/peer-graphrag.md,
"Beside other accounts"). Nearly all of those objects are modules, classes and functions loaded
at start-up that live as long as the process. :func:`settle` collects once, then moves every
object still alive into the permanent generation (``gc.freeze``), where later collections no
longer walk it; objects made afterwards are collected as before.

The servers (``maxy serve`` and ``maxy mcp serve``) call it once they are ready to answer. A
library never does: an application that imports Maxy decides for its own process.
"""

from __future__ import annotations

import gc
import time

from .logs import log_line


def settle(component: str) -> int:
    """Collect once, then freeze what is left; returns how many objects were frozen."""
    started = time.perf_counter()
    gc.collect()
    gc.freeze()
    frozen = gc.get_freeze_count()
    log_line(component, "heap-settled", frozen=frozen, ms=round((time.perf_counter() - started) * 1000, 1))
    return frozen
