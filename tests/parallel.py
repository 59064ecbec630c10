"""Tests run in two worker processes (pytest-xdist) against one Neo4j; most are confined to an
account of their own, a few touch what every account shares (the whole database, its indexes,
the server itself). Those are marked ``alone``: each test holds a lock shared with the others
while it runs, an ``alone`` test holds it exclusively, so it never overlaps another test.

The lock is a file under the system's temporary folder, so two test runs on one machine (which
share the Neo4j the set-up started) take turns the same way. A test waiting for an ``alone``
test goes first to a turnstile, so a stream of ordinary tests cannot keep an ``alone`` one
waiting for ever.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCKS = Path(tempfile.gettempdir()) / f"maxy-tests-{os.getuid()}"


def _open(name: str) -> int:
    LOCKS.mkdir(exist_ok=True)
    return os.open(LOCKS / name, os.O_RDWR | os.O_CREAT, 0o600)


@contextmanager
def suite_lock(alone: bool) -> Iterator[None]:
    """Held around one test: shared, or exclusive when ``alone``."""
    turnstile, lock = _open("turnstile"), _open("lock")
    try:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        if alone:
            fcntl.flock(lock, fcntl.LOCK_EX)  # waits for the running tests, holding the turnstile
            fcntl.flock(turnstile, fcntl.LOCK_UN)
        else:
            fcntl.flock(turnstile, fcntl.LOCK_UN)
            fcntl.flock(lock, fcntl.LOCK_SH)
        yield
    finally:
        os.close(lock)  # closing releases the lock
        os.close(turnstile)


@contextmanager
def exclusive(name: str) -> Iterator[None]:
    """A lock of its own, taken by one worker at a time (not the test lock: a test holds that)."""
    handle = _open(name)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)
