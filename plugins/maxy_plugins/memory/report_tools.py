"""The memory plugin's report tools: memory-report-write, memory-report-read-latest and
memory-report-list (durable workflow output, found again by keyword; the report domain,
its ids and queries, is ``maxy.reports``).

A report is one node per (title, minute of occurredAt): writing it again with the same body
changes nothing and answers ``idempotent: true``; a changed body (or keywords, workflow)
updates that report and answers ``updated: true``.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Annotated, Any

from maxy.graph.confine import id_root, record_scope
from maxy.graph.write import Edge, NodeSpec
from maxy.plugins import (
    SYSTEM,
    ToolContext,
    ToolError,
    ToolOutput,
    active_conversation,
    check_int,
    check_string_list,
    check_text,
    load_node,
    log_line,
    require,
    short,
    tool,
    tool_errors,
    update_node,
)
from maxy.reports import account_admin_user, latest_reports, list_reports, report_node_id
from pydantic import Field

REPORT_BODY_LIMIT = 10_000
REPORT_TITLE_LIMIT = 500
MAX_KEYWORDS = 20
MAX_KEYWORD_CHARS = 100
MAX_WORKFLOW_CHARS = 200

Keyword = Annotated[
    str,
    Field(description='A keyword the reports are tagged with, e.g. "daily-briefing".', max_length=MAX_KEYWORD_CHARS),
]
Workflow = Annotated[
    str | None,
    Field(description='The workflow that wrote the report, e.g. "daily-briefing".', max_length=MAX_WORKFLOW_CHARS),
]


class ReportWritten(ToolOutput):
    reportId: str
    title: str
    occurredAt: str | None = Field(
        description="When the report happened (ISO 8601); the first write's for a rewrite (none when a report "
        "stored by other means has no date)."
    )
    created: bool = Field(description="True when this call created the report.")
    updated: bool = Field(description="True when this call changed an existing report (a new body, keywords ...).")
    idempotent: bool = Field(description="True when the report already said exactly this: nothing changed.")


class ReportMeta(ToolOutput):
    reportId: str
    title: str | None
    keywords: list[str] | None
    sourceWorkflow: str | None
    occurredAt: str | None
    createdAt: str | None
    bodyChars: int | None


class Report(ReportMeta):
    body: str | None


class LatestReports(ToolOutput):
    keyword: str
    reports: list[Report] = Field(description="Newest first.")


class ReportList(ToolOutput):
    total: int = Field(description="How many reports match, over all pages.")
    offset: int
    limit: int
    reports: list[ReportMeta] = Field(description="This page, newest first, without bodies.")


def _parse_when(value: object) -> datetime:
    if value is None:
        return datetime.now(UTC)
    require(
        isinstance(value, str) and bool(value.strip()), "occurredAt", "an ISO 8601 date-time, e.g. 2026-05-07T06:00:00Z"
    )
    text = value.strip()  # type: ignore[attr-defined]
    try:
        when = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
    except ValueError:
        raise ToolError("occurredAt: an ISO 8601 date-time, e.g. 2026-05-07T06:00:00Z") from None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).astimezone(UTC)


@tool(
    "memory-report-write",
    description="""
Save a workflow's output (a daily briefing, an analysis) as a report, tagged with keywords to
find it again. The same title within a minute updates that report.
""",
    title="Save a report",
    output=ReportWritten,
    destructive=True,  # a changed body replaces the stored one
    idempotent=True,  # the same report again changes nothing
)
@tool_errors
def memory_report_write(
    ctx: ToolContext,
    title: Annotated[str, Field(description="The report's title.", min_length=1, max_length=REPORT_TITLE_LIMIT)],
    body: Annotated[str, Field(description="The report's text.", min_length=1, max_length=REPORT_BODY_LIMIT)],
    keywords: Annotated[
        list[str] | None,
        Field(
            description='Tags to find it again by (memory-report-read-latest), e.g. ["daily-briefing", '
            '"2026-05-07"]. Omitted on a rewrite: the stored ones stay.',
            max_length=MAX_KEYWORDS,
        ),
    ] = None,
    sourceWorkflow: Workflow = None,
    occurredAt: Annotated[
        str | None, Field(description="When it happened (default now), ISO 8601 date-time, e.g. 2026-05-07T06:00:00Z.")
    ] = None,
) -> dict[str, Any]:
    started = time.perf_counter()
    title_ = check_text(title, "title", limit=REPORT_TITLE_LIMIT)
    require(isinstance(body, str) and bool(body.strip()), "body", "a non-empty string is required")
    require(
        len(body) <= REPORT_BODY_LIMIT,
        "body",
        f"at most {REPORT_BODY_LIMIT:,} characters (got {len(body):,}); shorten it or split the report",
    )
    kws = check_string_list(keywords or [], "keywords", max_items=MAX_KEYWORDS, max_chars=MAX_KEYWORD_CHARS)
    workflow = check_text(sourceWorkflow, "sourceWorkflow", limit=MAX_WORKFLOW_CHARS, required=False)
    when = _parse_when(occurredAt)
    w = ctx.writer()
    assert title_ is not None
    minute = when.strftime("%Y-%m-%dT%H:%M")
    rid = report_node_id(id_root(ctx.caller), title_, minute)

    existing = load_node(ctx, rid, "Report")
    if existing is not None:
        changes: dict[str, Any] = {"body": body, "bodyChars": len(body)}
        if keywords is not None:
            changes |= {"keywords": kws, "keywordsText": " ".join(kws) if kws else None}
        if workflow is not None:
            changes["sourceWorkflow"] = workflow
        stored = existing["properties"]
        changed = {k: v for k, v in changes.items() if stored.get(k) != v}
        if changed:
            update_node(ctx, existing, changed)
        log_line(
            "reports",
            op="write",
            reportId=short(rid),
            keywords=changes.get("keywords", stored.get("keywords")) or [],
            ms=round((time.perf_counter() - started) * 1000),
            idempotent=0 if changed else 1,
            updated=1 if changed else 0,
        )
        return {
            "reportId": rid,
            "title": stored.get("title"),
            "occurredAt": stored.get("occurredAt"),
            "created": False,
            "updated": bool(changed),
            "idempotent": not changed,
        }

    conv = active_conversation(ctx)
    source = conv["nodeId"] if conv is not None else account_admin_user(ctx.db, ctx.caller, lambda: ctx.writer(SYSTEM))
    props: dict[str, Any] = {
        "title": title_,
        "body": body,
        "keywords": kws,
        "keywordsText": " ".join(kws) if kws else None,
        "sourceWorkflow": workflow,
        "occurredAt": when.isoformat(),
        "occurredMinute": minute,
        "bodyChars": len(body),
    }
    w.write(
        NodeSpec(
            ["Report"],
            {k: v for k, v in props.items() if v is not None},
            edges=[Edge("PRODUCED", source, "in")] if source else [],
            node_id=rid,
            scope=record_scope(ctx.caller),
        )
    )
    log_line("reports", op="write", reportId=short(rid), keywords=kws, ms=round((time.perf_counter() - started) * 1000))
    return {
        "reportId": rid,
        "title": title_,
        "occurredAt": props["occurredAt"],
        "created": True,
        "updated": False,
        "idempotent": False,
    }


@tool(
    "memory-report-read-latest",
    description="""
Read the newest report(s) tagged with a keyword: the answer to "the latest <X> report".
""",
    title="Read the latest report",
    output=LatestReports,
    read_only=True,
    idempotent=True,
)
@tool_errors
def memory_report_read_latest(
    ctx: ToolContext,
    keyword: Keyword,
    limit: Annotated[int, Field(description="How many of the newest reports (default 1).", ge=1, le=20)] = 1,
) -> dict[str, Any]:
    started = time.perf_counter()
    kw = check_text(keyword, "keyword", limit=MAX_KEYWORD_CHARS)
    n = check_int(limit, "limit", 1, 20)
    assert kw is not None
    rows = latest_reports(ctx.db, ctx.caller, kw, n)
    log_line(
        "reports",
        op="read-latest",
        reportId=short(rows[0]["reportId"]) if rows else "none",
        keywords=[kw],
        ms=round((time.perf_counter() - started) * 1000),
        hits=len(rows),
    )
    return {"keyword": kw, "reports": rows}


@tool(
    "memory-report-list",
    description="""
List reports newest first, without their bodies, optionally by keyword or workflow.
""",
    title="List reports",
    output=ReportList,
    read_only=True,
    idempotent=True,
)
@tool_errors
def memory_report_list(
    ctx: ToolContext,
    keyword: Annotated[
        str | None, Field(description="Only reports tagged with this keyword.", max_length=MAX_KEYWORD_CHARS)
    ] = None,
    sourceWorkflow: Workflow = None,
    limit: Annotated[int, Field(description="Page size (default 20).", ge=1, le=100)] = 20,
    offset: Annotated[int, Field(description="How many reports to skip, for paging.", ge=0, le=1_000_000)] = 0,
) -> dict[str, Any]:
    started = time.perf_counter()
    kw = check_text(keyword, "keyword", limit=MAX_KEYWORD_CHARS, required=False)
    wf = check_text(sourceWorkflow, "sourceWorkflow", limit=MAX_WORKFLOW_CHARS, required=False)
    n = check_int(limit, "limit", 1, 100)
    skip = check_int(offset, "offset", 0, 1_000_000)
    total, reports = list_reports(ctx.db, ctx.caller, keyword=kw, source_workflow=wf, offset=skip, limit=n)
    log_line(
        "reports",
        op="list",
        reportId=short(reports[0]["reportId"]) if reports else "none",
        keywords=[kw] if kw else [],
        ms=round((time.perf_counter() - started) * 1000),
        hits=len(reports),
        total=total,
    )
    return {"total": total, "offset": skip, "limit": n, "reports": reports}
