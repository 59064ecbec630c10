"""Audit: the tool calls agents made (and the console's own writes), newest first, filtered by
tool, outcome, session and time. Tool calls are admin-scoped: a pinned view sees none."""

from __future__ import annotations

from typing import Any

from ...provenance.audit_trail import list_tool_calls
from ..paging import PAGE_SIZE, page_of, pager
from ..views import Console, View


def audit(console: Console, request: Any, view: View) -> Any:
    params = request.query_params
    form = {k: (params.get(k) or "").strip() for k in ("tool", "session", "after", "before", "outcome")}
    outcome = {"error": True, "ok": False}.get(form["outcome"])
    page, offset = page_of(params)
    total, rows = list_tool_calls(
        console.db,
        view.ctx.caller,
        tool=form["tool"] or None,
        is_error=outcome,
        session_id=form["session"] or None,
        after=form["after"] or None,
        before=form["before"] or None,
        offset=offset,
        limit=PAGE_SIZE,
    )
    return console.page(request, view, "audit.html", form=form, rows=rows, pager=pager(request, total, page))


ROUTES = [("/audit", audit, ["GET"])]
