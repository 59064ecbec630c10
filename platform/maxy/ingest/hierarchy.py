"""Build and write the KnowledgeDocument -> Section -> Chunk hierarchy of a document.

    (:KnowledgeDocument {attachmentId, title, summary, source, mediaType, contentHash,
                         sectionCount, chunkCount, sourcePath?})
      -[:HAS_SECTION]-> (:Section {attachmentId, title, summary, position, documentTitle})
        -[:HAS_CHUNK]-> (:Chunk {attachmentId, title, content, summary, position, documentTitle})
    (:Chunk)-[:NEXT]->(:Chunk)   consecutive chunks of one section

Every level is embedded by its title plus its summary (maxy.graph.text). A document is
written with ONE ``GraphWriter.write_many(atomic=True, before_write=...)`` call whose
``before_write`` DETACH DELETEs the previous hierarchy of the same attachmentId in the same
account inside the same transaction: re-ingesting replaces the hierarchy (and so clears
deletedAt), and a crash at any point leaves the old hierarchy or the new one, never a mix.

The KnowledgeDocument's nodeId depends only on (accountId, attachmentId) (plus the writer's
view when it is pinned, see ``maxy.graph.confine``), so finding the previous hierarchy is a
unique-index lookup plus two hops, whatever the account's size. Section and chunk ids also
depend on the content hash and their position. A writer reads, skips and replaces only the
hierarchy its caller's guards admit.

Folders are walked without following directory symlinks; a file whose real path leaves the
folder being ingested, or lies in Maxy's own configuration or data folder, is skipped and
listed with its reason, so a link planted in a shared folder cannot carry the Neo4j password
or the key files into the graph.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import neo4j

from ..config import SCOPE_VALUES, config_dir, get_settings
from ..embeddings.base import EmbeddingError
from ..errors import GraphWriteError, ValidationError
from ..graph.allowlist import check_agent_slug
from ..graph.confine import default_visibility, id_root
from ..graph.guards import domain_guard, node_guard
from ..graph.write import Edge, GraphWriter, NodeSpec
from ..logs import log_line, short
from .chunker import ChunkBounds, chunk_text
from .parse import SUPPORTED_EXTENSIONS, ParsedDocument, ParsedSection, parse_file
from .summarize import ExtractiveSummarizer, SummaryJob, get_summarizer

HIERARCHY_VERSION = "1"  # part of the content hash: bump it to re-ingest everything
# KnowledgeDocument.chunking when a section was cut by size because the embedder was down
SIZE_ONLY = "size-only"
MAX_ATTACHMENT_ID = 512
TITLE_SEPARATOR = " › "

Progress = Callable[[int, int, "IngestResult"], None]


@dataclass
class IngestResult:
    attachment_id: str
    title: str = ""
    document_id: str | None = None
    sections: int = 0
    chunks: int = 0
    skipped: bool = False
    # skipped: "unchanged" | "empty" | "outside-folder" | "protected-folder" | "unsupported"; failed: "error"
    reason: str | None = None
    error: str | None = None
    note: str | None = None  # why a file was skipped, for people
    chunking: str | None = None  # written: "semantic", or SIZE_ONLY while the embedder was down
    rechunked: bool = False  # written again, unchanged, because its last ingest was size-only
    content_hash: str | None = None
    embedded: int = 0
    ms: int = 0
    path: str | None = None

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
        }


# ---------------------------------------------------------------------------------------
# Identity
def _h(*parts: object, n: int = 40) -> str:
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).hexdigest()[:n]


def attachment_id_for_path(path: str | Path) -> str:
    """A stable attachmentId for a file: ``file:`` + sha1 of its absolute resolved path (24 hex)."""
    return "file:" + hashlib.sha1(str(Path(path).resolve()).encode("utf-8")).hexdigest()[:24]


# ``root`` below is the writer's id root: the account id, plus its view when pinned (confine.id_root).
def document_node_id(root: str, attachment_id: str) -> str:
    return "kdoc-" + _h(root, attachment_id)


def section_node_id(root: str, attachment_id: str, chash: str, position: int) -> str:
    return "ksec-" + _h(root, attachment_id, chash, position)


def chunk_node_id(root: str, attachment_id: str, chash: str, section: int, position: int) -> str:
    return "kchk-" + _h(root, attachment_id, chash, section, position)


def content_hash(parsed: ParsedDocument) -> str:
    payload = json.dumps(
        [HIERARCHY_VERSION, parsed.title, parsed.media_type, [[s.heading, s.text] for s in parsed.sections]],
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def check_attachment_id(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError("attachmentId", "a non-empty string is required")
    if len(value) > MAX_ATTACHMENT_ID or any(ord(c) < 32 for c in value):
        raise ValidationError("attachmentId", f"at most {MAX_ATTACHMENT_ID} printable characters")
    return value


def _check_scope_agents(scope: str | None, agents: Sequence[str] | None) -> list[str] | None:
    if scope is not None and scope not in SCOPE_VALUES:
        raise ValidationError("scope", f"must be one of {list(SCOPE_VALUES)} or omitted")
    if agents is None:
        return None
    if isinstance(agents, str):
        raise ValidationError("agents", "must be a list of agent slugs")
    return sorted({check_agent_slug(a) for a in agents})


# ---------------------------------------------------------------------------------------
# Building
@dataclass
class _Plan:
    parsed: ParsedDocument
    attachment_id: str
    doc_id: str
    chash: str
    result: IngestResult
    specs: list[NodeSpec] | None = None


def _chunk_embed_fn(writer: GraphWriter) -> Callable[[list[str]], Any] | None:
    embedder = writer.embedder
    if embedder is None:
        return None

    def embed(texts: list[str]) -> Any:
        return embedder.embed(texts)

    return embed


def _chunks_of(text: str, embed: Callable[[list[str]], Any] | None, bounds: ChunkBounds) -> tuple[list[str], bool]:
    """The chunks of a section, and whether they were cut by size only because the embedder failed."""
    try:
        return chunk_text(text, embed, bounds), False
    except EmbeddingError as err:
        log_line(
            "ingest",
            "warn",
            level=logging.WARNING,
            reason="chunk-embed-failed",
            error=str(err)[:160],
            fallback=SIZE_ONLY,
        )
        return chunk_text(text, None, bounds), True


def _summary_source(title: str, sections: Sequence[ParsedSection]) -> str:
    """The document's text for its summary: headings become sentences of their own."""
    parts = []
    for s in sections:
        heading = s.heading.strip()
        if heading and heading != title:
            parts.append(heading if heading[-1] in ".!?:" else heading + ".")
        parts.append(s.text)
    return "\n\n".join(parts)


def build_specs(
    parsed: ParsedDocument,
    attachment_id: str,
    root: str,
    *,
    chash: str | None = None,
    summarizer: ExtractiveSummarizer | None = None,
    embed: Callable[[list[str]], Any] | None = None,
    bounds: ChunkBounds | None = None,
    scope: str | None = None,
    agents: Sequence[str] | None = None,
    source: str | None = None,
) -> tuple[list[NodeSpec], int, int]:
    """The node specs of one document (document, then each section and its chunks); ``root`` is
    the writer's id root (the account id for an unpinned writer)."""
    bounds = bounds or ChunkBounds()
    summarizer = summarizer or ExtractiveSummarizer()
    chash = chash or content_hash(parsed)
    title = parsed.title
    doc_id = document_node_id(root, attachment_id)
    agent_list = list(agents) if agents is not None else None

    sections = [s for s in parsed.sections if s.text.strip()]
    cut = [_chunks_of(s.text, embed, bounds) for s in sections]
    chunked = [chunks for chunks, _ in cut]
    degraded = any(size_only for _, size_only in cut)
    jobs = [SummaryJob("document", _summary_source(title, sections), title)]
    if len(sections) > 1:
        jobs += [SummaryJob("section", s.text, s.heading) for s in sections]
    chunk_titles = [
        title if not s.heading or s.heading == title else f"{title}{TITLE_SEPARATOR}{s.heading}" for s in sections
    ]
    # A chunk's content starts with its heading path: the one field BM25 scores then carries the
    # context too (a separate title field lowered scifact-dev BM25 nDCG@10 from 0.700 to 0.673),
    # and the embedding sees it. The rest is the raw slice of the source text.
    chunked = [[f"{chunk_titles[s_i]}\n\n{c}" for c in chunks] for s_i, chunks in enumerate(chunked)]
    for s_i, chunks in enumerate(chunked):
        jobs += [SummaryJob("chunk", c, chunk_titles[s_i]) for c in chunks]
    summaries = iter(summarizer.summarize_many(jobs))
    doc_summary = next(summaries)
    section_summaries = [next(summaries) for _ in sections] if len(sections) > 1 else [doc_summary]

    n_chunks = sum(len(c) for c in chunked)
    doc_props: dict[str, Any] = {
        "attachmentId": attachment_id,
        "title": title,
        "summary": doc_summary,
        "source": source or ("file" if parsed.source_path else "api"),
        "mediaType": parsed.media_type,
        "contentHash": chash,
        "sectionCount": len(sections),
        "chunkCount": n_chunks,
    }
    if parsed.source_path:
        doc_props["sourcePath"] = parsed.source_path
    if degraded:  # the next ingest of this document re-chunks it, even unchanged (see _unchanged)
        doc_props["chunking"] = SIZE_ONLY
    specs = [NodeSpec(["KnowledgeDocument"], doc_props, node_id=doc_id, scope=scope, agents=agent_list)]
    for s_i, (section, chunks) in enumerate(zip(sections, chunked, strict=True)):
        sec_id = section_node_id(root, attachment_id, chash, s_i)
        specs.append(
            NodeSpec(
                ["Section"],
                {
                    "attachmentId": attachment_id,
                    "title": section.heading or title,
                    "summary": section_summaries[s_i],
                    "position": s_i,
                    "documentTitle": title,
                },
                edges=[Edge("HAS_SECTION", doc_id, "in")],
                node_id=sec_id,
                scope=scope,
                agents=agent_list,
            )
        )
        prev: str | None = None
        for c_i, content in enumerate(chunks):
            chunk_id = chunk_node_id(root, attachment_id, chash, s_i, c_i)
            edges = [Edge("HAS_CHUNK", sec_id, "in")]
            if prev is not None:
                edges.append(Edge("NEXT", prev, "in"))
            chunk_props: dict[str, Any] = {
                "attachmentId": attachment_id,
                "content": content,
                "position": c_i,
                "documentTitle": title,
                "sectionTitle": section.heading or title,
            }
            summary = next(summaries)
            if summary.strip() != content.strip():  # a chunk short enough is its own summary
                chunk_props["summary"] = summary
            specs.append(
                NodeSpec(
                    ["Chunk"],
                    chunk_props,
                    edges=edges,
                    node_id=chunk_id,
                    scope=scope,
                    agents=agent_list,
                )
            )
            prev = chunk_id
    return specs, len(sections), n_chunks


# ---------------------------------------------------------------------------------------
# Writing
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
    if r.error:
        fields["error"] = r.error[:200]
    fields["ms"] = r.ms
    log_line("ingest", op="document", level=logging.WARNING if r.error else logging.INFO, **fields)


def _ingest_parsed(
    writer: GraphWriter,
    docs: Sequence[tuple[ParsedDocument, str]],
    *,
    scope: str | None,
    agents: Sequence[str] | None,
    source: str | None,
    force: bool,
    summarizer: ExtractiveSummarizer | None,
    bounds: ChunkBounds | None,
) -> list[IngestResult]:
    """Ingest documents together: one skip check, one atomic write for all that changed."""
    started = time.perf_counter()
    account_id = writer.account.account_id
    root = id_root(writer.caller)
    # What the primitive will store (a pinned writer's own view by default): the skip check compares it.
    scope, agent_list = default_visibility(writer.caller, scope, _check_scope_agents(scope, agents))
    bounds = bounds or ChunkBounds.from_env()
    plans: list[_Plan] = []
    results: list[IngestResult] = []
    for parsed, attachment_id in docs:
        attachment_id = check_attachment_id(attachment_id)
        result = IngestResult(attachment_id, title=parsed.title, path=parsed.source_path)
        results.append(result)
        result.document_id = document_node_id(root, attachment_id)
        if parsed.is_empty:
            result.skipped, result.reason = True, "empty"
            continue
        chash = content_hash(parsed)
        result.content_hash = chash
        plans.append(_Plan(parsed, attachment_id, result.document_id, chash, result))
    if len({p.doc_id for p in plans}) != len(plans):
        raise ValidationError("attachmentId", "the same attachmentId appears twice in one ingest batch")

    same = set() if force else _unchanged(writer, plans, scope, agent_list)
    todo = []
    for plan in plans:
        if plan.doc_id in same:
            plan.result.skipped, plan.result.reason = True, "unchanged"
        else:
            todo.append(plan)

    if todo:
        summarizer = summarizer or get_summarizer()
        embed = _chunk_embed_fn(writer)
        specs: list[NodeSpec] = []
        for plan in todo:
            plan.specs, plan.result.sections, plan.result.chunks = build_specs(
                plan.parsed,
                plan.attachment_id,
                root,
                chash=plan.chash,
                summarizer=summarizer,
                embed=embed,
                bounds=bounds,
                scope=scope,
                agents=agent_list,
                source=source,
            )
            specs.extend(plan.specs)
        written = writer.write_many(specs, atomic=True, before_write=_replace_previous(writer, todo))
        embedded = {w.node_id for w in written if w.embedded}
        for plan in todo:
            plan.result.embedded = sum(1 for s in plan.specs or [] if s.node_id in embedded)
            plan.result.chunking = (plan.specs[0].properties.get("chunking") if plan.specs else None) or "semantic"

    ms = round((time.perf_counter() - started) * 1000)
    for r in results:
        r.ms = ms
        _log_result(account_id, r)
    return results


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
) -> IngestResult:
    """Write (or replace) the hierarchy of one parsed document in one transaction.

    Skipped (``result.skipped``, ``reason="unchanged"``) when a live document with this
    attachmentId already has the same content hash, scope and agents, unless ``force``.
    An empty document is skipped with ``reason="empty"`` and leaves the graph untouched.
    """
    return _ingest_parsed(
        writer,
        [(parsed, attachment_id)],
        scope=scope,
        agents=agents,
        source=source,
        force=force,
        summarizer=summarizer,
        bounds=bounds,
    )[0]


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
    return ingest_document(
        writer,
        _record_document(title, text, media_type),
        attachment_id,
        scope=scope,
        agents=agents,
        source=source,
        force=force,
        summarizer=summarizer,
        bounds=bounds,
    )


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
) -> list[IngestResult]:
    """Many records, ``batch_size`` documents per transaction (a batch is all or nothing).

    A record is ``(attachment_id, title, text)`` or a mapping with ``attachment_id`` (or
    ``attachmentId``/``id``/``_id``), ``title`` and ``text``.
    """
    items = [_record_fields(r) for r in records]
    out: list[IngestResult] = []
    for i in range(0, len(items), max(1, batch_size)):
        batch = items[i : i + batch_size]
        docs = [(_record_document(t, x, "text/plain"), a) for a, t, x in batch]
        results = _ingest_parsed(
            writer,
            docs,
            scope=scope,
            agents=agents,
            source=source,
            force=force,
            summarizer=summarizer,
            bounds=bounds,
        )
        out.extend(results)
        if progress is not None:
            for r in results:
                progress(len(out), len(items), r)
    return out


# ---------------------------------------------------------------------------------------
# Files and folders
def _hidden(path: Path, root: Path) -> bool:
    try:
        rel = path.relative_to(root)
    except ValueError:
        rel = path
    return any(part.startswith(".") for part in rel.parts)


@dataclass(frozen=True)
class SkippedFile:
    """A file found but not ingested, and why (``reason`` is a slug, ``note`` a sentence)."""

    path: Path
    reason: str
    note: str


@dataclass
class FileSet:
    files: list[Path]
    skipped: list[SkippedFile]


def protected_folders() -> tuple[Path, ...]:
    """Maxy's configuration folder (.env with the Neo4j password, the local server) and data
    folder (accounts and their API key files): never ingested."""
    folders = {config_dir().expanduser().resolve()}
    try:
        folders.add(get_settings().data_root.expanduser().resolve())
    except Exception:  # noqa: BLE001 - unreadable settings: the config folder is still protected
        pass
    return tuple(sorted(folders))


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _walk(root: Path) -> tuple[list[Path], list[Path]]:
    """Supported and unsupported non-hidden files under ``root``; directory symlinks are not followed."""
    supported: list[Path] = []
    unsupported: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in filenames:
            f = Path(dirpath) / name
            if _hidden(f, root) or not f.is_file():
                continue
            (supported if f.suffix.lower() in SUPPORTED_EXTENSIONS else unsupported).append(f)
    return sorted(supported), sorted(unsupported)


def _unsupported(f: Path) -> SkippedFile:
    return SkippedFile(
        f,
        "unsupported",
        f"{f}: unsupported file type {f.suffix or '(none)'!r} (supported: {', '.join(SUPPORTED_EXTENSIONS)})",
    )


def collect_files(paths: Iterable[str | Path], *, protected: Sequence[Path] | None = None) -> FileSet:
    """Files to ingest: named files (which must have a supported extension) and every
    supported, non-hidden file under named folders, sorted, each real file once.

    Every file is judged by its real path (symlinks resolved): one that leaves the folder it
    was found in, or lies in a protected folder (default: :func:`protected_folders`), is
    skipped and listed in ``FileSet.skipped``."""
    guarded = tuple(Path(p).resolve() for p in (protected_folders() if protected is None else protected))
    found: list[Path] = []
    skipped: list[SkippedFile] = []
    seen: set[Path] = set()

    def take(f: Path, folder: Path | None) -> None:
        real = f.resolve()
        if any(_inside(real, g) for g in guarded):
            skipped.append(
                SkippedFile(
                    f, "protected-folder", f"{f} is in Maxy's configuration or data folder ({real}): never ingested"
                )
            )
        elif folder is not None and not _inside(real, folder):
            skipped.append(SkippedFile(f, "outside-folder", f"{f} links to {real}, outside the folder {folder}"))
        elif real not in seen:
            seen.add(real)
            found.append(real)

    for raw in paths:
        if not str(raw).strip():  # Path("") is ".": an empty argument must not mean this folder
            raise ValidationError("path", f"{str(raw)!r} is empty: name a file or a folder ('.' for this folder)")
        p = Path(raw).expanduser()
        if p.is_dir():
            folder = p.resolve()
            files, others = _walk(folder)
            for f in files:
                take(f, folder)
            skipped.extend(_unsupported(f) for f in others)
        elif p.is_file():
            if p.suffix.lower() not in SUPPORTED_EXTENSIONS:
                raise ValidationError(
                    str(p),
                    f"unsupported file type {p.suffix or '(none)'!r}; supported: {', '.join(SUPPORTED_EXTENSIONS)}",
                )
            take(p, None)
        else:
            raise ValidationError(str(p), "no such file or folder")
    return FileSet(found, skipped)


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
) -> list[IngestResult]:
    """Ingest files and folders, one transaction per document.

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
    _check_scope_agents(scope, agents)
    bounds = bounds or ChunkBounds.from_env()
    summarizer = summarizer or get_summarizer()
    results: list[IngestResult] = []
    for skip in collected.skipped:
        result = IngestResult("", skipped=True, reason=skip.reason, note=skip.note, path=str(skip.path))
        log_line(
            "ingest",
            "skip",
            level=logging.INFO if skip.reason == "unsupported" else logging.WARNING,
            reason=skip.reason,
            path=str(skip.path),
            accountId=short(writer.account.account_id),
        )
        results.append(result)
    for i, f in enumerate(files):
        att = attachment_id or attachment_id_for_path(f)
        started = time.perf_counter()
        try:
            parsed = parse_file(f)
            result = ingest_document(
                writer,
                parsed,
                att,
                scope=scope,
                agents=agents,
                source=source,
                force=force,
                summarizer=summarizer,
                bounds=bounds,
            )
        except (ValidationError, GraphWriteError) as err:
            result = IngestResult(att, path=str(f), reason="error", error=str(err))
            result.ms = round((time.perf_counter() - started) * 1000)
            _log_result(writer.account.account_id, result)
        result.path = str(f)
        results.append(result)
        if progress is not None:
            progress(i + 1, len(files), result)
    return results
