"""A large document written in bounded transactions, visible all at once.

A document of more nodes than the writer's ``batch_size`` is not written in one transaction
(its embeddings alone would make that transaction huge and slow, with no sign of progress).
Instead:

1. **Clean up.** What an interrupted earlier run left behind (a staged copy, or a retired
   version not yet deleted) is deleted, in batches.
2. **Stage.** The new version is cut, summarised and embedded one section at a time and
   written through the write primitive in transactions of ``batch_size`` nodes (each one
   committing while the next is embedded), each node stamped ``pendingWrite = <token>``: every read guard
   (``maxy.graph.guards``) hides such nodes, so readers still see the old version, whole.
   The staged document has a staging id; its sections and chunks have ids of their own
   (derived from the token), so they never collide with the old version's.
3. **Flip.** One transaction, with no embedding or content in it: the old hierarchy is
   retired (its document renamed to a retired id, every node of it marked pending, so it is
   hidden), the staged document takes the document's id and every staged node loses its
   mark. Readers see the old version up to that commit and the whole new one after it.
4. **Retire.** The old version's nodes are deleted in batches.

A crash before the flip leaves the old version visible and the staged nodes hidden; a crash
after it leaves the new version visible and the retired nodes hidden. Either way the next
ingest of the document starts by deleting what is hidden (step 1), or, when the staged nodes
were written from the same content with the same settings (the staged document's
``stagedKey``), **resumes**: the nodes already written are kept and the rest is written after
them. Transactions commit one after another in the order of the specs, so what a stopped
ingest left is a prefix of them; a delete (step 1) first clears the key, so a half-deleted
copy is never resumed.

The staged document also names who writes it (``stagedHost``, ``stagedPid``, ``stagedAt``),
so ``maxy status`` can tell a stopped ingest from a running one (``maxy.ingest.stopped``);
the flip removes these marks.
"""

from __future__ import annotations

import logging
import os
import socket
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import partial
from typing import Any

import neo4j

from ..errors import GraphWriteError
from ..graph.confine import not_writable
from ..graph.guards import domain_guard
from ..graph.write import PENDING_PROPERTY, GraphWriter, NodeSpec, PreparedWrite, WriteResult
from ..logs import log_line, short
from ..neo4j.processes import process_alive
from .commit_queue import CommitQueue

RETIRED = "retired"  # the pendingWrite mark of a replaced version awaiting deletion
DELETE_BATCH_ROWS = 1000
# On a staged (or retired) document only: whose write it is, and what it was written from.
STAGED_KEY, STAGED_HOST, STAGED_PID, STAGED_AT = "stagedKey", "stagedHost", "stagedPid", "stagedAt"
STAGED_MARKS = (STAGED_KEY, STAGED_HOST, STAGED_PID, STAGED_AT)

Progress = Callable[[int, int], None]  # characters of the document written so far, of all


def _suffix_id(node_id: str, suffix: str) -> str:
    return f"{node_id}-{suffix}"


def staged_document_id(document_id: str) -> str:
    return _suffix_id(document_id, "staged")


def retired_document_id(document_id: str) -> str:
    return _suffix_id(document_id, "retired")


def remove_tree(writer: GraphWriter, root_id: str, attachment_id: str) -> int:
    """Delete the hierarchy under the document node ``root_id`` (chunks, then sections, then
    the document, in batches, so an interrupted delete leaves a smaller tree behind)."""
    d = domain_guard(writer.caller, "d")
    # the key goes first, in its own transaction: a half-deleted copy is never resumed
    writer.db.autocommit(
        f"MATCH (d:Node {{nodeId: $root}}) WHERE d.attachmentId = $att AND d.{PENDING_PROPERTY} IS NOT NULL "
        f"AND {d.clause} REMOVE d.{STAGED_KEY}",
        root=root_id,
        att=attachment_id,
        **d.params,
    )
    rows = writer.db.autocommit(
        f"""
        MATCH (d:Node {{nodeId: $root}})
        WHERE d.attachmentId = $att AND d.{PENDING_PROPERTY} IS NOT NULL AND {d.clause}
        OPTIONAL MATCH (d)-[:HAS_SECTION]->(s:Section)
        OPTIONAL MATCH (s)-[:HAS_CHUNK]->(c:Chunk)
        WITH d, collect(DISTINCT c) AS chunks, collect(DISTINCT s) AS sections
        UNWIND chunks + sections + [d] AS n
        CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF $rows ROWS
        RETURN count(*) AS deleted
        """,
        root=root_id,
        att=attachment_id,
        rows=DELETE_BATCH_ROWS,
        **d.params,
    )
    return int(rows[0]["deleted"]) if rows else 0


def _discard(writer: GraphWriter, root_id: str, attachment_id: str) -> None:
    """Best effort after a failed write: delete the staged nodes now (else the next run does)."""
    try:
        remove_tree(writer, root_id, attachment_id)
    except Exception as err:  # noqa: BLE001 - the write's own error is the one to raise
        log_line("ingest", "warn", level=logging.WARNING, reason="staged-cleanup-failed", error=str(err)[:160])


@dataclass
class StreamCounts:
    """What a streamed document turned out to hold, known once its specs are exhausted."""

    sections: int = 0
    chunks: int = 0


@dataclass
class StagedRun:
    """What one staged write found and has done so far, for its caller's messages."""

    removed: int = 0  # nodes a stopped earlier ingest of the document left, deleted first
    resumed_nodes: int = 0  # nodes a stopped earlier ingest of the same content wrote, kept
    resumed_chunks: int = 0
    chunks_done: int = 0  # chunks in the graph so far (the resumed ones included)
    writing_started: float = 0.0  # perf_counter once the leftovers are dealt with


def _staged_marks(key: str | None) -> dict[str, Any]:
    marks: dict[str, Any] = {STAGED_HOST: socket.gethostname(), STAGED_PID: os.getpid(), STAGED_AT: _now()}
    if key:
        marks[STAGED_KEY] = key
    return marks


def writer_alive(host: object, pid: object) -> bool:
    """Whether the process that stamped a staged document still runs on this machine (another
    process than this one)."""
    if host != socket.gethostname() or not isinstance(pid, int) or pid == os.getpid():
        return False
    return process_alive(pid)


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _restaged(spec: NodeSpec, document_id: str, token: str, marks: dict[str, Any]) -> NodeSpec:
    """``spec`` with a staging id: the document's staging id (and ``marks``), the token in a
    section's or a chunk's; its edges (all within the document) follow."""

    def staged(node_id: str) -> str:
        return staged_document_id(document_id) if node_id == document_id else _suffix_id(node_id, token)

    edges = [replace(e, target=staged(e.target)) for e in spec.edges]
    props = {**spec.properties, **marks} if spec.node_id == document_id else spec.properties
    return replace(spec, node_id=staged(str(spec.node_id)), edges=edges, properties=props)


def _leftover(writer: GraphWriter, document_id: str, attachment_id: str) -> dict[str, Any] | None:
    """The staged copy a stopped ingest left: its token, key, node ids, chunks and nodes
    without an embedding."""
    d = domain_guard(writer.caller, "d")
    rows = writer.db.read(
        f"""
        MATCH (d:Node {{nodeId: $staged}})
        WHERE d.attachmentId = $att AND d.{PENDING_PROPERTY} IS NOT NULL AND {d.clause}
        OPTIONAL MATCH (d)-[:HAS_SECTION]->(s:Section) WHERE s.{PENDING_PROPERTY} = d.{PENDING_PROPERTY}
        OPTIONAL MATCH (s)-[:HAS_CHUNK]->(c:Chunk) WHERE c.{PENDING_PROPERTY} = d.{PENDING_PROPERTY}
        WITH d, collect(DISTINCT s) AS sections, collect(DISTINCT c) AS chunks
        WITH d, chunks, [d] + sections + chunks AS nodes
        RETURN d.{PENDING_PROPERTY} AS token, d.{STAGED_KEY} AS key, [n IN nodes | n.nodeId] AS ids,
               d.{STAGED_HOST} AS host, d.{STAGED_PID} AS pid,
               size(chunks) AS chunks, size([n IN nodes WHERE n.embedding IS NULL]) AS bare
        """,
        staged=staged_document_id(document_id),
        att=attachment_id,
        **d.params,
    )
    return rows[0] if rows else None


def _resumable(writer: GraphWriter, leftover: dict[str, Any] | None, key: str | None) -> bool:
    if leftover is None or not key or leftover["key"] != key or leftover["token"] == RETIRED:
        return False
    if writer_alive(leftover["host"], leftover["pid"]):
        return False  # another process writes it now: the flip refuses one of the two
    return writer.embedder is None or leftover["bare"] == 0  # a node without its vector: write it again


def _after_prefix(
    specs: Iterator[NodeSpec], have: set[str], kept: Callable[[list[NodeSpec]], None]
) -> Iterator[NodeSpec]:
    """``specs`` from the first one not already in ``have``; ``kept(prefix)`` is called once
    with those before it."""
    prefix: list[NodeSpec] = []
    for spec in specs:
        if spec.node_id in have:
            prefix.append(spec)
            continue
        kept(prefix)
        yield spec
        break
    else:
        kept(prefix)
    yield from specs


def _flip(
    writer: GraphWriter, document_id: str, attachment_id: str, token: str, counts: StreamCounts
) -> Callable[[neo4j.ManagedTransaction], None]:
    """The transaction that retires the old version and publishes the staged one."""
    old_d, old_s, old_c = (domain_guard(writer.caller, v) for v in ("d", "s", "c"))
    retire = f"""
    MATCH (d:Node {{nodeId: $final}})
    WHERE d.attachmentId = $att AND {old_d.clause}
    OPTIONAL MATCH (d)-[:HAS_SECTION]->(s:Section)
    WHERE s.attachmentId = $att AND {old_s.clause}
    OPTIONAL MATCH (s)-[:HAS_CHUNK]->(c:Chunk)
    WHERE c.attachmentId = $att AND {old_c.clause}
    WITH d, collect(DISTINCT s) + collect(DISTINCT c) AS parts
    SET d.nodeId = $retired, d.{PENDING_PROPERTY} = $mark, d += $marks
    FOREACH (n IN parts | SET n.{PENDING_PROPERTY} = $mark)
    RETURN size(parts) AS parts
    """
    publish = f"""
    MATCH (d:Node {{nodeId: $staged}})
    WHERE d.{PENDING_PROPERTY} = $token AND d.accountId = $g_accountId
    OPTIONAL MATCH (d)-[:HAS_SECTION]->(s:Section)
    WHERE s.{PENDING_PROPERTY} = $token
    OPTIONAL MATCH (s)-[:HAS_CHUNK]->(c:Chunk)
    WHERE c.{PENDING_PROPERTY} = $token
    WITH d, collect(DISTINCT s) AS sections, collect(DISTINCT c) AS chunks
    SET d.nodeId = $final, d.sectionCount = $sections, d.chunkCount = $chunks
    REMOVE d.{PENDING_PROPERTY}, {", ".join(f"d.{m}" for m in STAGED_MARKS)}
    FOREACH (n IN sections + chunks | REMOVE n.{PENDING_PROPERTY})
    RETURN size(sections) AS sections, size(chunks) AS chunks
    """

    def work(tx: neo4j.ManagedTransaction) -> None:
        ids: dict[str, Any] = {"final": document_id, "att": attachment_id}
        marks = _staged_marks(None)  # a crash before the retired copy is gone: status says whose it was
        retired = retired_document_id(document_id)
        tx.run(retire, retired=retired, mark=RETIRED, marks=marks, **ids, **old_d.params).consume()
        if tx.run("MATCH (d:Node {nodeId: $final}) RETURN count(d) AS n", final=document_id).single(strict=True)["n"]:
            raise not_writable("attachmentId", attachment_id)  # held outside the writer's view
        expected: dict[str, Any] = {"sections": counts.sections, "chunks": counts.chunks}
        staged = staged_document_id(document_id)
        row = tx.run(publish, staged=staged, token=token, **ids, **expected, **old_d.params).single()
        if row is None or (row["sections"], row["chunks"]) != (counts.sections, counts.chunks):
            raise GraphWriteError(
                "staged-write-lost",
                f"attachmentId: the staged copy of {attachment_id!r} changed while it was written "
                "(another ingest of the same document?); nothing was replaced: ingest it again",
            )

    return work


def write_staged(
    writer: GraphWriter,
    specs: Iterator[NodeSpec],
    document_id: str,
    attachment_id: str,
    counts: StreamCounts,
    *,
    text_chars: int,
    progress: Progress | None = None,
    key: str | None = None,
    run: StagedRun | None = None,
) -> list[WriteResult]:
    """Write one document's ``specs`` (the document node first; ``counts`` complete once they
    are exhausted) in transactions of ``batch_size`` nodes, each embedded while the previous one
    commits, and make them visible in one final transaction that replaces the previous version
    (see the module docstring). ``progress(done, total)`` follows the characters of the
    document's ``text_chars`` written so far: once the leftovers of a stopped earlier ingest are
    dealt with (``run`` says how), then after each transaction (from the thread that commits
    it). ``key`` names what the specs were made from (content and settings): a stopped earlier
    ingest with the same key is resumed."""
    run = run if run is not None else StagedRun()
    account = short(writer.account.account_id)
    token, have = _clear_or_resume(writer, document_id, attachment_id, key, run)
    marks = _staged_marks(key)
    started = time.perf_counter()
    results: list[WriteResult] = []
    chars = 0

    def covered(group: list[NodeSpec]) -> int:
        return sum(len(str(s.properties.get("content", ""))) for s in group)

    def chunks_of(group: list[NodeSpec]) -> int:
        return sum(1 for s in group if "Chunk" in s.labels)

    def kept(prefix: list[NodeSpec]) -> None:
        nonlocal chars
        run.resumed_nodes, run.resumed_chunks = len(prefix), chunks_of(prefix)
        run.chunks_done = run.resumed_chunks
        chars = min(text_chars, covered(prefix))
        beyond = have - {str(s.node_id) for s in prefix}
        if beyond:  # not a prefix after all: what follows the gap is written again
            _delete_nodes(writer, sorted(beyond), attachment_id)
        if run.resumed_nodes:
            _remark(writer, document_id, attachment_id, marks)  # this process writes it now
            log_line("ingest", op="resume", accountId=account, attachmentId=attachment_id, kept=run.resumed_nodes)
        run.writing_started = time.perf_counter()
        if progress is not None:
            progress(chars, text_chars)

    def committed(written: list[WriteResult], group_chars: int, group_chunks: int) -> None:
        nonlocal chars
        results.extend(written)
        chars = min(text_chars, chars + group_chars)
        run.chunks_done += group_chunks
        log_line(
            "ingest",
            op="batch",
            accountId=account,
            attachmentId=attachment_id,
            nodes=run.resumed_nodes + len(results),
            chars=f"{chars}/{text_chars}",
            ms=round((time.perf_counter() - started) * 1000),
        )
        if progress is not None:
            progress(chars, text_chars)

    restaged = (_restaged(s, document_id, token, marks) for s in specs)
    todo = _after_prefix(restaged, have, kept)
    try:
        with CommitQueue() as queue:
            for group in _groups(todo, writer.batch_size):
                prepared = writer.prepare(group, pending_write=token)
                # reported from the commit thread as soon as the transaction is in
                work = partial(_commit, writer, prepared, committed, covered(group), chunks_of(group))
                queue.submit(work, _ignore)
        flip_started = time.perf_counter()
        writer.db.write_tx(_flip(writer, document_id, attachment_id, token, counts))
    except Exception:
        _discard(writer, staged_document_id(document_id), attachment_id)
        raise
    retired = remove_tree(writer, retired_document_id(document_id), attachment_id)
    log_line(
        "ingest",
        op="flip",
        accountId=account,
        attachmentId=attachment_id,
        nodes=run.resumed_nodes + len(results),
        retired=retired,
        ms=round((time.perf_counter() - flip_started) * 1000),
    )
    if progress is not None and chars < text_chars:
        progress(text_chars, text_chars)
    staged_id = staged_document_id(document_id)  # sections and chunks keep their staging ids
    return [replace(r, node_id=document_id) if r.node_id == staged_id else r for r in results]


def _clear_or_resume(
    writer: GraphWriter, document_id: str, attachment_id: str, key: str | None, run: StagedRun
) -> tuple[str, set[str]]:
    """Delete what a stopped earlier ingest left, or keep its staged copy to resume it: the
    token to write with and the ids already written."""
    leftover = _leftover(writer, document_id, attachment_id)
    resume = leftover is not None and _resumable(writer, leftover, key)
    if not resume:
        run.removed = remove_tree(writer, staged_document_id(document_id), attachment_id)
    run.removed += remove_tree(writer, retired_document_id(document_id), attachment_id)
    if run.removed:
        account = short(writer.account.account_id)
        log_line("ingest", "cleanup", accountId=account, attachmentId=attachment_id, removed=run.removed)
    if resume and leftover is not None:
        return str(leftover["token"]), set(leftover["ids"])
    return uuid.uuid4().hex[:16], set()


def _remark(writer: GraphWriter, document_id: str, attachment_id: str, marks: dict[str, Any]) -> None:
    d = domain_guard(writer.caller, "d")
    writer.db.autocommit(
        f"MATCH (d:Node {{nodeId: $staged}}) WHERE d.attachmentId = $att AND d.{PENDING_PROPERTY} IS NOT NULL "
        f"AND {d.clause} SET d += $marks",
        staged=staged_document_id(document_id),
        att=attachment_id,
        marks=marks,
        **d.params,
    )


def _delete_nodes(writer: GraphWriter, node_ids: list[str], attachment_id: str) -> None:
    n = domain_guard(writer.caller, "n")
    writer.db.autocommit(
        f"""
        UNWIND $ids AS id
        MATCH (n:Node {{nodeId: id}})
        WHERE n.attachmentId = $att AND n.{PENDING_PROPERTY} IS NOT NULL AND {n.clause}
        CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF $rows ROWS
        """,
        ids=node_ids,
        att=attachment_id,
        rows=DELETE_BATCH_ROWS,
        **n.params,
    )


def _commit(
    writer: GraphWriter,
    prepared: PreparedWrite,
    committed: Callable[[list[WriteResult], int, int], None],
    chars: int,
    chunks: int,
) -> None:
    committed(writer.commit(prepared), chars, chunks)


def _ignore(_: object) -> None:
    pass


def _groups(specs: Iterator[NodeSpec], size: int) -> Iterator[list[NodeSpec]]:
    group: list[NodeSpec] = []
    for spec in specs:
        group.append(spec)
        if len(group) >= size:
            yield group
            group = []
    if group:
        yield group
