"""A server's heap settled after start-up: what was alive is frozen, what comes later is collected."""

from __future__ import annotations

import gc
import logging
import weakref

import pytest
from maxy.heap import settle


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the collector frees it


@pytest.fixture()
def thawed():
    gc.unfreeze()
    yield
    gc.unfreeze()  # the rest of the test process collects as before


def test_settle_freezes_what_is_alive_and_still_collects_what_comes_after(thawed, caplog) -> None:
    before = _Node()
    kept = weakref.ref(before)
    with caplog.at_level(logging.INFO, logger="maxy"):
        frozen = settle("mcp")
    assert frozen > 1000 and gc.get_freeze_count() > 1000  # the modules and classes loaded so far
    assert any("[mcp] heap-settled frozen=" in r.getMessage() for r in caplog.records)
    del before
    gc.collect()
    assert kept() is not None  # frozen: no collection walks it any more

    after = _Node()
    gone = weakref.ref(after)
    del after
    gc.collect()
    assert gone() is None  # made after settling: collected as before
