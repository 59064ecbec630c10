"""Every entry of tests/slow_tests.txt names a test that exists, so the fast lane's list does not
rot when a test is renamed or moved."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_every_slow_entry_names_an_existing_test() -> None:
    entries = [
        line.strip()
        for line in (TESTS / "slow_tests.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert len(entries) > 50
    missing = []
    for entry in entries:
        path, _, name = entry.partition("::")
        source = TESTS.parent / path
        if not source.is_file() or (name and not re.search(rf"def {re.escape(name)}\(", source.read_text())):
            missing.append(entry)
    assert missing == []
