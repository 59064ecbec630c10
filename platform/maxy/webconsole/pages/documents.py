"""Documents: the ingested documents (and, for a view holding the admin scope, the deleted ones
awaiting purge), each with its sections and chunks; soft delete and restore, posted with the
session's CSRF token, written by the key's own writer (a public key is refused) and audited."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from ...errors import ValidationError
from ...graph.confine import not_writable
from ...graph.purge import DEFAULT_GRACE_DAYS
from ...ingest.identity import check_attachment_id
from ...ingest.lifecycle import restore_attachment, soft_delete_attachment
from ...ingest.listing import document_outline, list_documents
from ...logs import log_line, short
from ..paging import PAGE_SIZE, page_of, pager
from ..views import Console, NotFound, View, checked_form


def documents(console: Console, request: Any, view: View) -> Any:
    deleted = request.query_params.get("deleted") == "1"
    page, offset = page_of(request.query_params)
    total, rows = list_documents(console.db, view.ctx.caller, deleted=deleted, offset=offset, limit=PAGE_SIZE)
    return console.page(
        request,
        view,
        "documents.html",
        deleted=deleted,
        rows=rows,
        pager=pager(request, total, page),
        trash=view.ctx.caller.admin_view,
        grace_days=DEFAULT_GRACE_DAYS,
        done={"deleted": "deleted", "restored": "restored"}.get(request.query_params.get("done") or ""),
    )


def document(console: Console, request: Any, view: View) -> Any:
    deleted = request.query_params.get("deleted") == "1"
    outline = document_outline(console.db, view.ctx.caller, request.path_params["attachment_id"], deleted=deleted)
    if outline is None:
        raise NotFound("document with this attachment id")
    writable = view.key.role == "admin" and (not deleted or view.ctx.caller.admin_view)
    return console.page(request, view, "document.html", outline=outline, deleted=deleted, writable=writable)


async def change(console: Console, request: Any, view: View) -> Any:
    """POST /documents with attachmentId and action (delete or restore): one document, its
    sections and chunks."""
    from starlette.concurrency import run_in_threadpool
    from starlette.responses import RedirectResponse

    form = await checked_form(request, view)
    if form is None:
        return console.page(request, view, "error.html", code=403, message="the form is stale: reload the page")
    action, attachment = form.get("action", ""), form.get("attachmentId", "")
    if action not in ("delete", "restore"):
        raise ValidationError("action", "delete or restore")
    await run_in_threadpool(_change, view, action, attachment)
    listing = "/console/documents?deleted=1&" if action == "delete" else "/console/documents?"
    return RedirectResponse(f"{listing}done={action}d", status_code=303)


def _change(view: View, action: str, attachment: str) -> int:
    from ...mcp.audit import ToolCallRecord, record_tool_call

    ctx = view.ctx
    writer = ctx.writer("console")  # refuses the public role, confined to the key's view
    started = datetime.now(UTC)
    if action == "delete":
        # only a document this view can read: one it cannot (deleted, still being written) answers
        # exactly as one that does not exist
        if document_outline(writer.db, ctx.caller, attachment) is None:
            raise not_writable("attachmentId", check_attachment_id(attachment), "document")
        count = soft_delete_attachment(writer.db, ctx.caller.account_id, attachment, caller=ctx.caller)
    else:
        count = restore_attachment(writer.db, ctx.caller.account_id, attachment, caller=ctx.caller)
    log_line(
        "console", f"document-{action}", accountId=short(ctx.caller.account_id), attachmentId=attachment, nodes=count
    )
    record_tool_call(
        ctx,
        ToolCallRecord(
            f"console-document-{action}",
            "console",
            {"attachmentId": attachment},
            json.dumps({"nodes": count}),
            False,
            started,
            datetime.now(UTC),
        ),
    )
    return count


ROUTES = [
    ("/documents", documents, ["GET"]),
    ("/documents", change, ["POST"]),
    ("/documents/{attachment_id:path}", document, ["GET"]),  # an attachment id may hold "/"
]
