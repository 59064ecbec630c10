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
ingest of the document starts by deleting what is hidden (step 1).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import neo4j

from ..errors import GraphWriteError
from ..graph.confine import not_writable
from ..graph.guards import domain_guard
from ..graph.write import PENDING_PROPERTY, GraphWriter, NodeSpec, PreparedWrite, WriteResult
from ..logs import log_line, short
from .commit_queue import CommitQueue

RETIRED = "retired"  # the pendingWrite mark of a replaced version awaiting deletion
DELETE_BATCH_ROWS = 1000

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


def _restaged(spec: NodeSpec, document_id: str, token: str) -> NodeSpec:
    """``spec`` with a staging id: the document's staging id, the token in a section's or a
    chunk's; its edges (all within the document) follow."""

    def staged(node_id: str) -> str:
        return staged_document_id(document_id) if node_id == document_id else _suffix_id(node_id, token)

    edges = [replace(e, target=staged(e.target)) for e in spec.edges]
    return replace(spec, node_id=staged(str(spec.node_id)), edges=edges)


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
    SET d.nodeId = $retired, d.{PENDING_PROPERTY} = $mark
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
    REMOVE d.{PENDING_PROPERTY}
    FOREACH (n IN sections + chunks | REMOVE n.{PENDING_PROPERTY})
    RETURN size(sections) AS sections, size(chunks) AS chunks
    """

    def work(tx: neo4j.ManagedTransaction) -> None:
        ids: dict[str, Any] = {"final": document_id, "att": attachment_id}
        tx.run(retire, retired=retired_document_id(document_id), mark=RETIRED, **ids, **old_d.params).consume()
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
) -> list[WriteResult]:
    """Write one document's ``specs`` (the document node first; ``counts`` complete once they
    are exhausted) in transactions of ``batch_size`` nodes, each embedded while the previous one
    commits, and make them visible in one final transaction that replaces the previous version
    (see the module docstring). ``progress(done, total)`` follows the characters of the
    document's ``text_chars`` written so far, after each transaction (from the thread that
    commits it)."""
    account = short(writer.account.account_id)
    for leftover in (staged_document_id(document_id), retired_document_id(document_id)):
        removed = remove_tree(writer, leftover, attachment_id)
        if removed:
            log_line("ingest", "cleanup", accountId=account, attachmentId=attachment_id, removed=removed)
    token = uuid.uuid4().hex[:16]
    started = time.perf_counter()
    results: list[WriteResult] = []
    chars = 0

    def committed(written: list[WriteResult], covered: int) -> None:
        nonlocal chars
        results.extend(written)
        chars = min(text_chars, chars + covered)
        log_line(
            "ingest",
            op="batch",
            accountId=account,
            attachmentId=attachment_id,
            nodes=len(results),
            chars=f"{chars}/{text_chars}",
            ms=round((time.perf_counter() - started) * 1000),
        )
        if progress is not None:
            progress(chars, text_chars)

    try:
        with CommitQueue() as queue:
            for group in _groups(specs, writer.batch_size):
                prepared = writer.prepare([_restaged(s, document_id, token) for s in group], pending_write=token)
                covered = sum(len(str(s.properties.get("content", ""))) for s in group)
                # reported from the commit thread as soon as the transaction is in
                queue.submit(partial(_commit, writer, prepared, committed, covered), _ignore)
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
        nodes=len(results),
        retired=retired,
        ms=round((time.perf_counter() - flip_started) * 1000),
    )
    if progress is not None and chars < text_chars:
        progress(text_chars, text_chars)
    staged_id = staged_document_id(document_id)  # sections and chunks keep their staging ids
    return [replace(r, node_id=document_id) if r.node_id == staged_id else r for r in results]


def _commit(
    writer: GraphWriter, prepared: PreparedWrite, committed: Callable[[list[WriteResult], int], None], covered: int
) -> None:
    committed(writer.commit(prepared), covered)


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
