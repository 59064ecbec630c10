"""Write (or replace) the KnowledgeDocument -> Section -> Chunk hierarchy of documents: the entry
points of an ingest (a parsed document, records, files and folders).

Who the nodes are is :mod:`.identity`, what they hold :mod:`.specs`, which files are read
:mod:`.files`. A document is
written with ONE ``GraphWriter.write_many(atomic=True, before_write=...)`` call whose
``before_write`` DETACH DELETEs the previous hierarchy of the same attachmentId in the same
account inside the same transaction: re-ingesting replaces the hierarchy (and so clears
deletedAt), and a crash at any point leaves the old hierarchy or the new one, never a mix.

The KnowledgeDocument's nodeId depends only on (accountId, attachmentId) (plus the writer's
view when it is pinned, see ``maxy.graph.confine``), so finding the previous hierarchy is a
unique-index lookup plus two hops, whatever the account's size. Section and chunk ids also
depend on the content hash and their position. A writer reads, skips and replaces only the
hierarchy its caller's guards admit.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

import neo4j

from ..errors import GraphWriteError, ValidationError
from ..graph.confine import default_visibility, id_root
from ..graph.guards import domain_guard, node_guard
from ..graph.write import GraphWriter, NodeSpec, WriteResult
from ..logs import log_line, short
from .chunker import ChunkBounds
from .commit_queue import CommitQueue
from .estimate import Estimate, default_chars_per_chunk, estimate, remember
from .files import FileSet, collect_files
from .formats import ParsedDocument, ParsedSection, parse_file
from .identity import attachment_id_for_path, check_attachment_id, check_scope_agents, content_hash, document_node_id
from .specs import SIZE_ONLY, build_specs, stream_specs
from .staged import StagedRun, StreamCounts, write_staged
from .summarize import ExtractiveSummarizer, get_summarizer

Progress = Callable[[int, int, "IngestResult"], None]
BatchProgress = Callable[["IngestResult", int, int], None]  # a large document's nodes written, of all


@dataclass
class IngestResult:
    attachment_id: str
    title: str = ""
    document_id: str | None = None
    sections: int = 0
    chunks: int = 0
    skipped: bool = False
    # skipped: "unchanged" | "empty" | "outside-folder" | "protected-folder" | "unsupported" | "ignored" |
    # "template"; failed: "error"
    reason: str | None = None
    error: str | None = None
    note: str | None = None  # why a file was skipped, for people
    chunking: str | None = None  # written: "semantic", or SIZE_ONLY while the embedder was down
    rechunked: bool = False  # written again, unchanged, because its last ingest was size-only
    content_hash: str | None = None
    embedded: int = 0
    ms: int = 0
    path: str | None = None
    # a large document (written in bounded transactions): how long it was expected to take, what
    # a stopped earlier ingest of it left (deleted, or kept and resumed), chunks in the graph so far
    estimate: Estimate | None = None
    removed_leftover: int = 0
    resumed_chunks: int = 0
    chunks_done: int = 0

    @property
    def ok(self) -> bool:
        return self.error is None

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        return {
            "attachmentId": d["attachment_id"],
            "title": d["title"],
            "documentId": d["document_id"],
            "sections": d["sections"],
            "chunks": d["chunks"],
            "skipped": d["skipped"],
            "reason": d["reason"],
            "error": d["error"],
            "note": d["note"],
            "chunking": d["chunking"],
            "rechunked": d["rechunked"],
            "contentHash": d["content_hash"],
            "embedded": d["embedded"],
            "ms": d["ms"],
            "path": d["path"],
            "estimate": self.estimate.as_dict(self.resumed_chunks) if self.estimate else None,
            "removedLeftover": self.removed_leftover,
            "resumedChunks": self.resumed_chunks,
        }


@dataclass
class _Plan:
    parsed: ParsedDocument
    attachment_id: str
    doc_id: str
    chash: str
    result: IngestResult
    specs: list[NodeSpec] | None = None
    streamed: bool = False  # too large for one transaction: written by _stream


def _live_query(writer: GraphWriter) -> tuple[str, dict[str, Any]]:
    guard = node_guard(writer.caller, "d")
    query = f"""
    UNWIND $ids AS id
    MATCH (d:Node {{nodeId: id}})
    WHERE d:KnowledgeDocument AND {guard.clause}
    RETURN d.nodeId AS id, d.contentHash AS hash, d.scope AS scope, d.agents AS agents,
           d.sectionCount AS sections, d.chunkCount AS chunks, d.title AS title, d.chunking AS chunking
    """
    return query, guard.params


def _replace_previous(writer: GraphWriter, plans: list[_Plan]) -> Callable[[neo4j.ManagedTransaction], None]:
    """Delete the previous hierarchy of each document, live or soft-deleted, as far as the
    writer's view reaches; the write primitive then refuses any id still held outside it."""
    docs = [{"id": p.doc_id, "att": p.attachment_id} for p in plans]
    d, s, c = (domain_guard(writer.caller, v) for v in ("d", "s", "c"))
    query = f"""
    UNWIND $docs AS doc
    MATCH (d:Node {{nodeId: doc.id}})
    WHERE d.attachmentId = doc.att AND {d.clause}
    OPTIONAL MATCH (d)-[:HAS_SECTION]->(s:Section)
    WHERE s.attachmentId = doc.att AND {s.clause}
    OPTIONAL MATCH (s)-[:HAS_CHUNK]->(c:Chunk)
    WHERE c.attachmentId = doc.att AND {c.clause}
    WITH collect(DISTINCT d) + collect(DISTINCT s) + collect(DISTINCT c) AS doomed
    UNWIND doomed AS n
    DETACH DELETE n
    RETURN count(*) AS deleted
    """

    def before_write(tx: neo4j.ManagedTransaction) -> None:
        tx.run(query, docs=docs, **d.params).consume()

    return before_write


def _unchanged(writer: GraphWriter, plans: list[_Plan], scope: str | None, agents: list[str] | None) -> set[str]:
    """Doc ids whose live hierarchy already has this content, scope and agents, and was chunked
    with the embedder (a size-only hierarchy is re-chunked while an embedder is configured)."""
    if not plans:
        return set()
    query, params = _live_query(writer)
    rows = writer.db.read(query, ids=[p.doc_id for p in plans], **params)
    by_id = {p.doc_id: p for p in plans}
    same = set()
    for row in rows:
        plan = by_id.get(row["id"])
        if plan is None:
            continue
        if row["hash"] == plan.chash and row["scope"] == scope and row["agents"] == agents:
            if row["chunking"] == SIZE_ONLY and writer.embedder is not None:
                plan.result.rechunked = True
                continue
            plan.result.sections = row["sections"] or 0
            plan.result.chunks = row["chunks"] or 0
            same.add(row["id"])
    return same


def _log_result(account_id: str, r: IngestResult) -> None:
    fields: dict[str, Any] = {
        "accountId": short(account_id),
        "attachmentId": r.attachment_id,
        "sections": r.sections,
        "chunks": r.chunks,
        "skipped": r.skipped,
    }
    if r.reason:
        fields["reason"] = r.reason
    if r.chunking == SIZE_ONLY or r.rechunked:
        fields["chunking"] = r.chunking
        fields["rechunked"] = r.rechunked
    if r.estimate is not None:
        fields["estChunks"] = r.estimate.chunks
        fields["estS"] = r.estimate.as_dict()["seconds"]
    if r.removed_leftover:
        fields["removedLeftover"] = r.removed_leftover
    if r.resumed_chunks:
        fields["resumedChunks"] = r.resumed_chunks
    if r.error:
        fields["error"] = r.error[:200]
    fields["ms"] = r.ms
    log_line("ingest", op="document", level=logging.WARNING if r.error else logging.INFO, **fields)


@dataclass
class _Options:
    """What one ingest call writes with: the view it stores, how it chunks and summarises."""

    root: str
    scope: str | None
    agents: list[str] | None
    source: str | None
    force: bool
    summarizer: ExtractiveSummarizer
    bounds: ChunkBounds
    batch_progress: BatchProgress | None = None


@dataclass(frozen=True)
class IngestOptions:
    """How an ingest writes, as its caller asked: the view its nodes take (``scope``, ``agents``;
    a pinned writer's own by default), ``source``, ``force`` (write even unchanged documents),
    the summariser and chunk bounds (the configured ones by default), and ``batch_progress``."""

    scope: str | None = None
    agents: Sequence[str] | None = None
    source: str | None = None
    force: bool = False
    summarizer: ExtractiveSummarizer | None = None
    bounds: ChunkBounds | None = None
    batch_progress: BatchProgress | None = None


def _options(writer: GraphWriter, asked: IngestOptions) -> _Options:
    # What the primitive will store (a pinned writer's own view by default): the skip check compares it.
    scope, agent_list = default_visibility(writer.caller, asked.scope, check_scope_agents(asked.scope, asked.agents))
    return _Options(
        id_root(writer.caller),
        scope,
        agent_list,
        asked.source,
        asked.force,
        asked.summarizer or get_summarizer(),
        asked.bounds or ChunkBounds.from_env(),
        asked.batch_progress,
    )


def _plan(
    writer: GraphWriter, docs: Sequence[tuple[ParsedDocument, str]], opts: _Options
) -> tuple[list[IngestResult], list[_Plan]]:
    """Results for ``docs`` and the plans of those to write (skip check, chunks, summaries)."""
    plans: list[_Plan] = []
    results: list[IngestResult] = []
    for parsed, attachment_id in docs:
        attachment_id = check_attachment_id(attachment_id)
        result = IngestResult(attachment_id, title=parsed.title, path=parsed.source_path)
        results.append(result)
        result.document_id = document_node_id(opts.root, attachment_id)
        if parsed.is_empty:
            result.skipped, result.reason = True, "empty"
            continue
        chash = content_hash(parsed)
        result.content_hash = chash
        plans.append(_Plan(parsed, attachment_id, result.document_id, chash, result))
    if len({p.doc_id for p in plans}) != len(plans):
        raise ValidationError("attachmentId", "the same attachmentId appears twice in one ingest batch")

    same = set() if opts.force else _unchanged(writer, plans, opts.scope, opts.agents)
    todo = []
    for plan in plans:
        if plan.doc_id in same:
            plan.result.skipped, plan.result.reason = True, "unchanged"
            continue
        if _estimated_nodes(plan.parsed, opts.bounds) > writer.batch_size:
            plan.streamed = True
            todo.append(plan)
            continue
        plan.specs, plan.result.sections, plan.result.chunks = build_specs(
            plan.parsed,
            plan.attachment_id,
            opts.root,
            chash=plan.chash,
            summarizer=opts.summarizer,
            bounds=opts.bounds,
            scope=opts.scope,
            agents=opts.agents,
            source=opts.source,
        )
        todo.append(plan)
    return results, todo


def _written(plans: list[_Plan], written: list[WriteResult]) -> None:
    embedded = {w.node_id for w in written if w.embedded}
    for plan in plans:
        plan.result.embedded = sum(1 for s in plan.specs or [] if s.node_id in embedded)
        plan.result.chunking = (plan.specs[0].properties.get("chunking") if plan.specs else None) or "semantic"


def _finish(account_id: str, results: list[IngestResult], started: float) -> None:
    ms = round((time.perf_counter() - started) * 1000)
    for r in results:
        r.ms = ms
        _log_result(account_id, r)


def _estimated_nodes(parsed: ParsedDocument, bounds: ChunkBounds) -> int:
    """About how many nodes a document makes: one, plus one per section and per chunk (chunks
    average between the minimum and the target size: topic breaks end most of them early)."""
    per_chunk = default_chars_per_chunk(bounds)
    sizes = [len(s.text.strip()) for s in parsed.sections if s.text.strip()]
    return 1 + sum(1 + (1 if size <= bounds.max_chars else math.ceil(size / per_chunk)) for size in sizes)


def _stream(writer: GraphWriter, plan: _Plan, opts: _Options) -> None:
    """One large document, built and written a section at a time in bounded transactions
    (``maxy.ingest.staged``)."""
    counts = StreamCounts()
    specs = stream_specs(
        plan.parsed,
        plan.attachment_id,
        opts.root,
        counts,
        chash=plan.chash,
        summarizer=opts.summarizer,
        bounds=opts.bounds,
        scope=opts.scope,
        agents=opts.agents,
        source=opts.source,
    )
    report = opts.batch_progress
    result = plan.result
    sections = [s for s in plan.parsed.sections if s.text.strip()]
    text_chars = sum(len(s.text.strip()) for s in sections)
    embedder_name = getattr(writer.embedder, "name", None)
    sample = "\n\n".join(s.text for s in sections)
    result.estimate = estimate(
        text_chars, opts.bounds, writer.embedder, opts.summarizer.name, sample, plan.parsed.title
    )
    run = StagedRun()

    def progress(done: int, total: int) -> None:
        result.removed_leftover, result.resumed_chunks = run.removed, run.resumed_chunks
        result.chunks_done = run.chunks_done
        if report is not None:
            report(result, done, total)

    written = write_staged(
        writer,
        specs,
        plan.doc_id,
        plan.attachment_id,
        counts,
        text_chars=text_chars,
        progress=progress,
        key=_resume_key(plan, opts, embedder_name),
        run=run,
    )
    result.sections, result.chunks = counts.sections, counts.chunks
    result.embedded = sum(1 for w in written if w.embedded)
    result.chunking = "semantic"
    seconds = time.perf_counter() - run.writing_started
    remember(embedder_name, opts.summarizer.name, counts.chunks - run.resumed_chunks, text_chars, seconds)


def _resume_key(plan: _Plan, opts: _Options, embedder_name: str | None) -> str:
    """What a staged copy is made from: a stopped ingest with the same key is resumed."""
    made_from = [
        plan.chash,
        asdict(opts.bounds),
        opts.summarizer.name,
        embedder_name,
        opts.root,
        opts.scope,
        opts.agents,
        opts.source,
        plan.parsed.relative_path,
        plan.parsed.source_path,
    ]
    return hashlib.sha256(json.dumps(made_from, sort_keys=True, default=str).encode()).hexdigest()[:32]


def _submit(
    writer: GraphWriter,
    queue: CommitQueue,
    docs: Sequence[tuple[ParsedDocument, str]],
    opts: _Options,
    then: Callable[[list[IngestResult]], None],
    on_error: Callable[[Exception], None] | None = None,
) -> None:
    """Plan ``docs``, embed them here and queue their transaction; ``then(results)`` once written.

    Documents of at most ``batch_size`` nodes go into one transaction together, which also
    deletes their previous hierarchies; a larger one is streamed (after what is queued)."""
    started = time.perf_counter()
    account_id = writer.account.account_id
    results, todo = _plan(writer, docs, opts)
    small = [p for p in todo if not p.streamed]
    for plan in (p for p in todo if p.streamed):
        queue.drain()
        _stream(writer, plan, opts)

    def done(written: list[WriteResult]) -> None:
        _written(small, written)
        _finish(account_id, results, started)
        then(results)

    if not small:
        queue.submit(None, lambda _: done([]), on_error)
        return
    prepared = writer.prepare([spec for p in small for spec in p.specs or []])
    before_write = _replace_previous(writer, small)
    queue.submit(lambda: writer.commit(prepared, before_write=before_write), done, on_error)


def ingest_document(
    writer: GraphWriter,
    parsed: ParsedDocument,
    attachment_id: str,
    *,
    scope: str | None = None,
    agents: Sequence[str] | None = None,
    source: str | None = None,
    force: bool = False,
    summarizer: ExtractiveSummarizer | None = None,
    bounds: ChunkBounds | None = None,
    batch_progress: BatchProgress | None = None,
) -> IngestResult:
    """Write (or replace) the hierarchy of one parsed document: in one transaction, or, for a
    document of more than the writer's ``batch_size`` nodes, in bounded transactions made
    visible by a final one (``maxy.ingest.staged``); readers see the old version or the new.

    Skipped (``result.skipped``, ``reason="unchanged"``) when a live document with this
    attachmentId already has the same content hash, scope and agents, unless ``force``.
    An empty document is skipped with ``reason="empty"`` and leaves the graph untouched.
    ``batch_progress(result, done, total)`` follows a large document's transactions (nodes).
    """
    return _ingest_one(
        writer, parsed, attachment_id, IngestOptions(scope, agents, source, force, summarizer, bounds, batch_progress)
    )


def _ingest_one(writer: GraphWriter, parsed: ParsedDocument, attachment_id: str, asked: IngestOptions) -> IngestResult:
    out: list[IngestResult] = []
    with CommitQueue() as queue:
        _submit(writer, queue, [(parsed, attachment_id)], _options(writer, asked), out.extend)
    return out[0]


def _record_document(title: str | None, text: str, media_type: str) -> ParsedDocument:
    body = text or ""
    heading = (title or "").strip()
    if not heading:
        first = next((line.strip() for line in body.splitlines() if line.strip()), "")
        heading = first if len(first) <= 80 else first[:79].rsplit(" ", 1)[0] + "…"
    return ParsedDocument(heading, [ParsedSection(heading, body.strip())] if body.strip() else [], None, media_type)


def ingest_record(
    writer: GraphWriter,
    attachment_id: str,
    title: str | None,
    text: str,
    *,
    scope: str | None = None,
    agents: Sequence[str] | None = None,
    source: str = "record",
    force: bool = False,
    summarizer: ExtractiveSummarizer | None = None,
    bounds: ChunkBounds | None = None,
    media_type: str = "text/plain",
) -> IngestResult:
    """An already-structured record (title + text) as a document with one section."""
    asked = IngestOptions(scope, agents, source, force, summarizer, bounds)
    return _ingest_one(writer, _record_document(title, text, media_type), attachment_id, asked)


def _record_fields(record: Any) -> tuple[str, str | None, str]:
    if isinstance(record, Mapping):
        att = record.get("attachment_id") or record.get("attachmentId") or record.get("id") or record.get("_id")
        return str(att) if att is not None else "", record.get("title"), str(record.get("text") or "")
    att, title, text = record
    return str(att), title, str(text or "")


def ingest_records(
    writer: GraphWriter,
    records: Iterable[Any],
    *,
    batch_size: int = 32,
    scope: str | None = None,
    agents: Sequence[str] | None = None,
    source: str = "record",
    force: bool = False,
    summarizer: ExtractiveSummarizer | None = None,
    bounds: ChunkBounds | None = None,
    progress: Progress | None = None,
    batch_progress: BatchProgress | None = None,
) -> list[IngestResult]:
    """Many records, ``batch_size`` documents per transaction (a batch is all or nothing; a
    record of more than the writer's ``batch_size`` nodes is streamed on its own, as
    :func:`ingest_document` does). The transaction of one batch runs while the next is embedded.

    A record is ``(attachment_id, title, text)`` or a mapping with ``attachment_id`` (or
    ``attachmentId``/``id``/``_id``), ``title`` and ``text``.
    """
    items = [_record_fields(r) for r in records]
    opts = _options(writer, IngestOptions(scope, agents, source, force, summarizer, bounds, batch_progress))
    out: list[IngestResult] = []

    def done(results: list[IngestResult]) -> None:
        out.extend(results)
        if progress is not None:
            for r in results:
                progress(len(out), len(items), r)

    with CommitQueue() as queue:
        for i in range(0, len(items), max(1, batch_size)):
            batch = items[i : i + batch_size]
            docs = [(_record_document(t, x, "text/plain"), a) for a, t, x in batch]
            _submit(writer, queue, docs, opts, done)
    return out


def _record_first(record: Callable[[Path, IngestResult], None], f: Path, results: list[IngestResult]) -> None:
    record(f, results[0])


def _report(on_error: Callable[[Exception], None], err: Exception, _: object) -> None:
    on_error(err)


def ingest_paths(
    paths: Iterable[str | Path] | FileSet,
    writer: GraphWriter,
    *,
    attachment_id: str | None = None,
    scope: str | None = None,
    agents: Sequence[str] | None = None,
    source: str = "file",
    force: bool = False,
    progress: Progress | None = None,
    summarizer: ExtractiveSummarizer | None = None,
    bounds: ChunkBounds | None = None,
    batch_progress: BatchProgress | None = None,
) -> list[IngestResult]:
    """Ingest files and folders, one transaction per document (bounded transactions for a
    large one, see :func:`ingest_document`); a file's transaction runs while the next is embedded.

    A file that cannot be parsed (binary, unreadable) gives a result with ``error`` and
    the walk goes on; an unreachable database aborts. ``attachment_id`` is only allowed
    for a single file; otherwise each file's id is :func:`attachment_id_for_path`.
    ``paths`` may be the :class:`FileSet` a caller already collected.
    """
    collected = paths if isinstance(paths, FileSet) else collect_files(paths)
    files = collected.files
    if attachment_id is not None:
        check_attachment_id(attachment_id)
        if len(files) != 1:
            raise ValidationError("attachmentId", f"--attachment-id needs exactly one file, got {len(files)}")
    check_scope_agents(scope, agents)
    bounds = bounds or ChunkBounds.from_env()
    summarizer = summarizer or get_summarizer()
    results: list[IngestResult] = []
    for skip in collected.skipped:
        result = IngestResult("", skipped=True, reason=skip.reason, note=skip.note, path=str(skip.path))
        log_line(
            "ingest",
            "skip",
            level=skip.level,
            reason=skip.reason,
            path=str(skip.path),
            accountId=short(writer.account.account_id),
        )
        results.append(result)
    opts = _options(writer, IngestOptions(scope, agents, source, force, summarizer, bounds, batch_progress))
    done_files = 0

    def record(f: Path, result: IngestResult) -> None:
        nonlocal done_files
        result.path = str(f)
        results.append(result)
        done_files += 1
        if progress is not None:
            progress(done_files, len(files), result)

    def failed(f: Path, att: str, started: float) -> Callable[[Exception], None]:
        def on_error(err: Exception) -> None:
            result = IngestResult(att, path=str(f), reason="error", error=str(err))
            result.ms = round((time.perf_counter() - started) * 1000)
            _log_result(writer.account.account_id, result)
            record(f, result)

        return on_error

    with CommitQueue() as queue:  # the transaction of one file runs while the next is embedded
        for f in files:
            att = attachment_id or attachment_id_for_path(f)
            on_error = failed(f, att, time.perf_counter())
            try:
                parsed = parse_file(f, as_text=collected.as_text)
                parsed.relative_path = collected.relative_path(f)
                _submit(writer, queue, [(parsed, att)], opts, partial(_record_first, record, f), on_error)
            except (ValidationError, GraphWriteError) as err:
                queue.submit(None, partial(_report, on_error, err))
    return results
