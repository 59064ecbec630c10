"""The memory plugin: knowledge search and writes, ingest, conversation search and reports.

One module per tool family (importing them registers the tools; every submodule's tools
belong to this package):

- ``search_tools``: memory-search, conversation-search;
- ``conversation_tools``: conversation-append;
- ``write_tools``: memory-write;
- ``entity_tools``: memory-get, memory-forget, memory-remove-relation;
- ``document_tools``: memory-ingest, memory-delete, memory-reindex;
- ``report_tools``: memory-report-write, memory-report-read-latest, memory-report-list.

Every read goes through the guard clauses with ``ctx.caller`` (pinned from the environment);
every write goes through the write primitive (``ctx.writer``), which refuses the public role
and keeps a pinned server's writes inside its view. Bad input raises
``ToolError("<field>: <reason>")`` before anything is written.
"""

from .conversation_tools import conversation_append
from .document_tools import memory_delete, memory_ingest, memory_reindex
from .entity_tools import memory_forget, memory_get, memory_remove_relation
from .report_tools import memory_report_list, memory_report_read_latest, memory_report_write
from .search_tools import conversation_search, memory_search
from .write_tools import memory_write

__all__ = [
    "conversation_append",
    "conversation_search",
    "memory_delete",
    "memory_forget",
    "memory_get",
    "memory_ingest",
    "memory_reindex",
    "memory_remove_relation",
    "memory_report_list",
    "memory_report_read_latest",
    "memory_report_write",
    "memory_search",
    "memory_write",
]
