"""The estimate of a large ingest and the lines it prints, without a database: durations in
words, the time left from what has been written, the rate kept in the cache folder, and one
plain progress line per tenth whatever the transactions' sizes."""

from __future__ import annotations

import json
from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st
from maxy.ingest.estimate import Estimate, about, remaining_seconds, remember, remembered
from maxy.ingest.progress import PlainProgress, estimate_line, leftover_line


@dataclass
class Result:
    """The fields of an IngestResult the progress lines read."""

    path: str | None = "/data/big.txt"
    attachment_id: str = "file:abc"
    estimate: Estimate | None = None
    resumed_chunks: int = 0
    removed_leftover: int = 0
    chunks_done: int = 0
    error: str | None = None
    skipped: bool = False
    reason: str | None = None


def test_about_reads_as_people_say_it():
    assert [about(s) for s in (0.2, 40, 89, 90, 540, 7139, 7200, 7800)] == [
        "about 1 s",
        "about 40 s",
        "about 89 s",
        "about 2 min",
        "about 9 min",
        "about 119 min",
        "about 2 h",
        "about 2 h 10 min",
    ]


def test_the_estimate_line_only_for_a_long_ingest():
    long = Result(estimate=Estimate(14_800, 27.0, "last run"))
    assert estimate_line(long) == (
        "big.txt: about 14,800 chunks, about 9 min at 27 chunks/s "
        "(stop with Ctrl-C; the next ingest of this file resumes or cleans up)"
    )
    assert estimate_line(Result(estimate=Estimate(1_000, 27.0, "last run"))) is None, "37 s: no line"
    assert estimate_line(Result(estimate=Estimate(14_800, None, "unknown"))) is None, "no rate: no guess"
    resumed = Result(estimate=Estimate(14_800, 27.0, "last run"), resumed_chunks=14_000)
    assert estimate_line(resumed) is None, "what is left takes 30 s"


def test_leftover_lines():
    assert leftover_line(Result(removed_leftover=1283)) == "big.txt: removed 1,283 nodes an earlier stopped ingest left"
    resumed = Result(resumed_chunks=1283, estimate=Estimate(14_800, 27.0, "last run"))
    assert leftover_line(resumed) == "big.txt: resumed: 1,283 of about 14,800 chunks already written"
    assert leftover_line(Result()) is None


def test_remaining_time_follows_what_was_written():
    est = Estimate(1000, 10.0, "last run")
    assert remaining_seconds(est, 0, 0, 1_000_000, 0.0, 0) == (1000, 100.0)
    # 200 chunks of 2,000 characters in 10 s: 500 chunks in all, 300 left at 20 a second
    assert remaining_seconds(est, 200, 400_000, 1_000_000, 10.0, 0) == (500, 15.0)
    # resumed chunks do not count toward the rate
    assert remaining_seconds(est, 210, 420_000, 1_000_000, 1.0, 200) == (500, 29.0)


def test_the_rate_is_kept_per_embedder_and_summariser(tmp_path, monkeypatch):
    monkeypatch.setenv("MAXY_CACHE_DIR", str(tmp_path))
    assert remembered("bge", "extractive") is None
    remember("bge", "extractive", chunks=10, chars=9000, seconds=1.0)
    assert remembered("bge", "extractive") is None, "too short a run to keep"
    remember("bge", "extractive", chunks=400, chars=360_000, seconds=20.0)
    remember(None, "extractive", chunks=400, chars=400_000, seconds=2.0)
    assert remembered("bge", "extractive") == {"chunksPerSecond": 20.0, "charsPerChunk": 900.0}
    assert remembered(None, "extractive") == {"chunksPerSecond": 200.0, "charsPerChunk": 1000.0}
    assert remembered("bge", "claude") is None
    (tmp_path / "ingest-rate.json").write_text("{not json")
    assert remembered("bge", "extractive") is None, "a damaged file is no rate, not an error"
    remember("bge", "extractive", chunks=400, chars=360_000, seconds=40.0)
    assert json.loads((tmp_path / "ingest-rate.json").read_text())["bge|extractive"]["chunksPerSecond"] == 10.0


@given(st.lists(st.integers(min_value=0, max_value=1000), min_size=1, max_size=60))
def test_one_plain_line_per_tenth(steps):
    """Whatever the transactions cover, a large file prints at most one line per tenth, in
    order, each naming a tenth it has reached, and never one for 100 % (the file's line says so)."""
    total = 1000
    lines: list[str] = []
    plain = PlainProgress(lines.append, files=1)
    result = Result(estimate=Estimate(100, 50.0, "last run"))
    done = 0
    for step in steps:
        done = min(total, done + step)
        result.chunks_done = done // 10
        plain.batch(result, done, total)
    shares = [int(line.split()[2].rstrip("%")) for line in lines]
    tenths = [s // 10 for s in shares]
    assert tenths == sorted(set(tenths)) and all(1 <= t <= 9 for t in tenths)
    assert len(lines) <= 9
    if done * 10 // total >= 1 and done < total:
        assert tenths and tenths[-1] == done * 10 // total
    plain.file_done(1, 1, result)
    assert lines[-1] == "ingest: 1/1 big.txt done"
