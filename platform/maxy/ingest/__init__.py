"""Document ingestion: parse files, chunk them semantically, summarise each level and write
the KnowledgeDocument -> Section -> Chunk hierarchy atomically; soft delete, restore and purge;
the operator's listing of documents and their outline.

    from maxy.ingest import ingest_paths, ingest_record, soft_delete_attachment, restore_attachment, purge
"""

from __future__ import annotations

from ..graph.purge import DEFAULT_GRACE_DAYS, purge
from .chunker import ChunkBounds, chunk_text, split_sentences, split_units
from .files import FileSet, SkippedFile, collect_files, protected_folders
from .formats import (
    SUPPORTED_EXTENSIONS,
    ParsedDocument,
    ParsedSection,
    parse_content,
    parse_file,
    parse_html,
    parse_markdown,
    parse_text,
)
from .hierarchy import IngestResult, ingest_document, ingest_paths, ingest_record, ingest_records
from .identity import attachment_id_for_path, content_hash, document_node_id
from .lifecycle import restore_attachment, soft_delete_attachment
from .listing import document_outline, list_documents
from .specs import build_specs
from .summarize import ClaudeSummarizer, ExtractiveSummarizer, extractive_summary, get_summarizer

__all__ = [
    "DEFAULT_GRACE_DAYS",
    "SUPPORTED_EXTENSIONS",
    "ChunkBounds",
    "ClaudeSummarizer",
    "ExtractiveSummarizer",
    "FileSet",
    "IngestResult",
    "ParsedDocument",
    "ParsedSection",
    "SkippedFile",
    "attachment_id_for_path",
    "build_specs",
    "chunk_text",
    "collect_files",
    "content_hash",
    "document_node_id",
    "document_outline",
    "extractive_summary",
    "get_summarizer",
    "ingest_document",
    "ingest_paths",
    "ingest_record",
    "ingest_records",
    "list_documents",
    "parse_content",
    "parse_file",
    "parse_html",
    "parse_markdown",
    "parse_text",
    "protected_folders",
    "purge",
    "restore_attachment",
    "soft_delete_attachment",
    "split_sentences",
    "split_units",
]
