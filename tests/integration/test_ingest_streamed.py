"""A document too large for one transaction, against the real Neo4j: written in bounded
transactions while a reader only ever sees the old version or the whole new one; a crash
between transactions leaves the old version, and the next run cleans up and succeeds."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import pytest
from maxy.graph.guards import Caller, node_guard
from maxy.graph.write import GraphWriter
from maxy.ingest import content_hash, ingest_document, parse_file
from maxy.ingest import staged as staged_mod
from maxy.ingest.summarize import ExtractiveSummarizer
from maxy.search.bm25 import bm25_search

EXTRACTIVE = ExtractiveSummarizer()
BATCH = 8


def write_doc(path: Path, version: int, sections: int) -> Path:
    body = [f"# Handbook v{version}"]
    for s in range(sections):
        sentences = " ".join(
            f"Version {version} section {s} sentence {i} explains the zebrafish topic in plain words."
            for i in range(40)
        )
        body.append(f"## Part {s}\n\n{sentences}")
    path.write_text("\n\n".join(body) + "\n")
    return path


def visible(db, caller: Caller, att: str) -> tuple[str | None, int, int]:
    """What a reader sees of the document, through the read guard: (contentHash, sections, chunks),
    with sections and chunks counted by attachmentId, not by traversal."""
    d, s, c = (node_guard(caller, v) for v in ("d", "s", "c"))
    row = db.read(
        f"""
        OPTIONAL MATCH (d:KnowledgeDocument {{attachmentId: $att}}) WHERE {d.clause}
        WITH collect(d.contentHash) AS hashes
        OPTIONAL MATCH (s:Section {{attachmentId: $att}}) WHERE {s.clause}
        WITH hashes, count(s) AS sections
        OPTIONAL MATCH (c:Chunk {{attachmentId: $att}}) WHERE {c.clause}
        RETURN hashes, sections, count(c) AS chunks
        """,
        att=att,
        **d.params,
    )[0]
    assert len(row["hashes"]) <= 1
    return (row["hashes"][0] if row["hashes"] else None), row["sections"], row["chunks"]


def hidden(db, account_id: str, att: str) -> int:
    return db.read(
        "MATCH (n:Node {accountId: $acc}) WHERE n.attachmentId = $att AND n.pendingWrite IS NOT NULL RETURN count(n) AS c",
        acc=account_id,
        att=att,
    )[0]["c"]


@pytest.fixture()
def writer(db, account):
    return GraphWriter(db, account, None, created_by="ingest", batch_size=BATCH)


def test_streamed_document_is_seen_whole_old_or_whole_new(db, account, writer, tmp_path, monkeypatch, caplog):
    caller = Caller(account.account_id)
    f = write_doc(tmp_path / "big.md", 1, 5)
    first = ingest_document(writer, parse_file(f), "big", summarizer=EXTRACTIVE)
    v1 = (content_hash(parse_file(f)), first.sections, first.chunks)
    assert 1 + first.sections + first.chunks > 2 * BATCH, "the document needs several transactions"
    assert visible(db, caller, "big") == v1
    write_doc(f, 2, 7)
    v2_hash = content_hash(parse_file(f))

    real_commit = GraphWriter.commit

    def slow_commit(self, write, **kwargs):
        # each transaction waits for the reader to see the document once more after it began
        # (however slow the machine), so a read lands between every two of them
        start, deadline = len(seen), time.monotonic() + 30
        while len(seen) <= start and time.monotonic() < deadline:
            time.sleep(0.01)
        return real_commit(self, write, **kwargs)

    monkeypatch.setattr(GraphWriter, "commit", slow_commit)
    # Neo4j reads committed data as a query goes: a read running while the final switch commits
    # may count parts of both versions (docs/ingest.md). The switch's window is recorded, and
    # only reads that lie wholly outside it must see one version whole.
    switch: list[float] = []
    real_write_tx = db.write_tx

    def timed_write_tx(work):
        is_switch = work.__qualname__.startswith("_flip.")
        if is_switch:
            switch.append(time.monotonic())
        try:
            return real_write_tx(work)
        finally:
            if is_switch:
                switch.append(time.monotonic())

    monkeypatch.setattr(db, "write_tx", timed_write_tx)
    seen: list[tuple[str | None, int, int]] = []
    during: list[int] = []
    stop = threading.Event()

    searched: list[int] = []

    def across_switch(started: float) -> bool:
        return len(switch) == 1 or (len(switch) == 2 and started <= switch[1] and time.monotonic() >= switch[0])

    def reader() -> None:
        while not stop.is_set():
            started = time.monotonic()
            view = visible(db, caller, "big")
            if not across_switch(started):
                seen.append(view)
            started = time.monotonic()
            [hits] = bm25_search(db, caller, ["zebrafish"], ["Chunk"], 500)
            if not across_switch(started):
                searched.append(len(hits))

    progress: list[tuple[int, int]] = []

    def batch_progress(result, done, total):
        progress.append((done, total))
        during.append(len(seen))

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        with caplog.at_level(logging.INFO, logger="maxy"):
            second = ingest_document(writer, parse_file(f), "big", summarizer=EXTRACTIVE, batch_progress=batch_progress)
    finally:
        stop.set()
        thread.join(timeout=30)
    v2 = (v2_hash, second.sections, second.chunks)
    assert v2 != v1 and second.sections == 7
    assert set(seen) <= {v1, v2}, f"a reader saw a partial document: {set(seen) - {v1, v2}}"
    assert set(searched) <= {v1[2], v2[2]}, "a search found chunks of neither whole version"
    assert v1 in seen, "the reader ran while the new version was being written"
    assert during[-1] - during[0] >= 3, "the reader read between the write's transactions"
    assert visible(db, caller, "big") == v2
    assert hidden(db, account.account_id, "big") == 0, "the old version is deleted after the flip"
    # progress inside the file: several reports, growing, ending at the whole text
    assert len(progress) >= 3 and progress == sorted(progress) and progress[-1][0] == progress[-1][1]
    batch_lines = [r.getMessage() for r in caplog.records if "op=batch" in r.getMessage()]
    assert len(batch_lines) >= 3 and all("attachmentId=big" in line for line in batch_lines)


def test_crash_between_transactions_keeps_the_old_version_and_a_rerun_succeeds(
    db, account, writer, tmp_path, monkeypatch
):
    caller = Caller(account.account_id)
    f = write_doc(tmp_path / "big.md", 1, 4)
    first = ingest_document(writer, parse_file(f), "big", summarizer=EXTRACTIVE)
    v1 = (content_hash(parse_file(f)), first.sections, first.chunks)
    write_doc(f, 2, 6)

    real_commit = GraphWriter.commit
    calls = []

    def crash_on_third(self, write, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("simulated crash between transactions")
        return real_commit(self, write, **kwargs)

    monkeypatch.setattr(GraphWriter, "commit", crash_on_third)
    monkeypatch.setattr(staged_mod, "_discard", lambda *a: None)  # a killed process cleans nothing up
    with pytest.raises(RuntimeError, match="simulated crash"):
        ingest_document(writer, parse_file(f), "big", summarizer=EXTRACTIVE)
    assert visible(db, caller, "big") == v1, "the old version stays, whole"
    assert hidden(db, account.account_id, "big") >= 2 * BATCH, "the staged batches are there, hidden"
    [hits] = bm25_search(db, caller, ["zebrafish"], ["Chunk"], 500)
    assert len(hits) == v1[2], "search finds the old version's chunks only"

    monkeypatch.setattr(GraphWriter, "commit", real_commit)
    again = ingest_document(writer, parse_file(f), "big", summarizer=EXTRACTIVE)
    assert not again.skipped and again.sections == 6
    assert visible(db, caller, "big") == (content_hash(parse_file(f)), 6, again.chunks)
    assert hidden(db, account.account_id, "big") == 0, "the leftovers were deleted"
    nodes = db.read(
        "MATCH (n:Node {accountId: $acc}) WHERE n.attachmentId = 'big' RETURN count(n) AS c", acc=account.account_id
    )[0]["c"]
    assert nodes == 1 + 6 + again.chunks


def test_crash_after_the_flip_shows_the_new_version_and_the_next_run_deletes_the_old(
    db, account, writer, tmp_path, monkeypatch
):
    caller = Caller(account.account_id)
    f = write_doc(tmp_path / "big.md", 1, 3)
    ingest_document(writer, parse_file(f), "big", summarizer=EXTRACTIVE)
    write_doc(f, 2, 4)
    real_remove = staged_mod.remove_tree

    retired_calls = []

    def fail_on_retired(writer, root_id, att):
        if root_id.endswith("-retired"):
            retired_calls.append(root_id)
            if len(retired_calls) == 2:  # the first is the clean-up before staging
                raise RuntimeError("simulated crash after the flip")
        return real_remove(writer, root_id, att)

    monkeypatch.setattr(staged_mod, "remove_tree", fail_on_retired)
    with pytest.raises(RuntimeError, match="after the flip"):
        ingest_document(writer, parse_file(f), "big", summarizer=EXTRACTIVE)
    new = visible(db, caller, "big")
    assert new[0] == content_hash(parse_file(f)) and new[1] == 4
    assert hidden(db, account.account_id, "big") > 0, "the retired version waits, hidden"

    monkeypatch.setattr(staged_mod, "remove_tree", real_remove)
    again = ingest_document(writer, parse_file(f), "big", force=True, summarizer=EXTRACTIVE)
    assert again.sections == 4 and hidden(db, account.account_id, "big") == 0
    assert visible(db, caller, "big") == (new[0], 4, again.chunks)
