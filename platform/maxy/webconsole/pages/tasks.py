"""Tasks: the actions agents recorded (work-create ... work-complete), by status and kind, each
with its last step and what it produced; a task's steps are the tool calls on its node page."""

from __future__ import annotations

from typing import Any

from ...memory.neighbourhood import get_nodes
from ...provenance.tasks import STATUSES, list_tasks
from ..paging import PAGE_SIZE, page_of, pager
from ..views import Console, View

PRODUCED_SHOWN = 500  # neighbours read for one page of tasks together


def tasks(console: Console, request: Any, view: View) -> Any:
    params = request.query_params
    status = (params.get("status") or "").strip() or None
    kind = (params.get("kind") or "").strip() or None
    page, offset = page_of(params)
    total, rows = list_tasks(console.db, view.ctx.caller, status=status, kind=kind, offset=offset, limit=PAGE_SIZE)
    produced = _produced(console, view, [r["nodeId"] for r in rows])
    for row in rows:
        row["produced"] = produced.get(row["nodeId"], [])
    return console.page(
        request,
        view,
        "tasks.html",
        rows=rows,
        status=status or "",
        kind=kind or "",
        statuses=STATUSES,
        pager=pager(request, total, page),
    )


def _produced(console: Console, view: View, node_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """What each task produced that this view can read (PRODUCED, out of the task)."""
    if not node_ids:
        return {}
    found = get_nodes(
        console.db, view.ctx.caller, node_ids, hops=1, types=["PRODUCED"], budget=PRODUCED_SHOWN, include_history=True
    )
    return {
        n["nodeId"]: [x for x in n["neighbours"] if x["path"] and x["path"][0]["direction"] == "out"]
        for n in found["nodes"]
    }


ROUTES = [("/tasks", tasks, ["GET"])]
