"""Reports: durable workflow output, newest first, by keyword; a report's body is its node page."""

from __future__ import annotations

from typing import Any

from ...reports import list_reports
from ..paging import PAGE_SIZE, page_of, pager
from ..views import Console, View


def reports(console: Console, request: Any, view: View) -> Any:
    keyword = (request.query_params.get("keyword") or "").strip() or None
    page, offset = page_of(request.query_params)
    total, rows = list_reports(
        console.db, view.ctx.caller, keyword=keyword, source_workflow=None, offset=offset, limit=PAGE_SIZE
    )
    return console.page(
        request, view, "reports.html", keyword=keyword or "", rows=rows, pager=pager(request, total, page)
    )


ROUTES = [("/reports", reports, ["GET"])]
