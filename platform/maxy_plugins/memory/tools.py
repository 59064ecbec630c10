"""The memory plugin: search, write, ingest, delete, reindex, conversation search and reports.

Every read goes through the guard clauses with ``ctx.caller`` (pinned from the environment);
every write goes through the write primitive (``ctx.writer``), which refuses the public role
and keeps a pinned server's writes inside its view (``maxy.graph.confine``). A target the
caller may not read is refused exactly like one that does not exist.
Bad input raises ``ToolError("<field>: <reason>")`` before anything is written.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from maxy.config import config_dir
from maxy.conversations import search_messages
from maxy.graph.confine import id_root, not_writable, record_scope
from maxy.graph.guards import node_guard
from maxy.graph.write import Edge, NodeSpec
from maxy.plugins import (
    SYSTEM,
    ToolContext,
    ToolError,
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
)
from maxy.search import MESSAGE_SEARCH, SearchConfig, SearchRequest, hybrid
from maxy.search.config import subscribed_keywords
from maxy.search.format import OUTPUT_BUDGET, project, render

REPORT_BODY_LIMIT = 10_000
REPORT_TITLE_LIMIT = 500
MAX_KEYWORDS = 20
MAX_KEYWORD_CHARS = 100
MESSAGE_CONTENT_CHARS = 4_000


def _parse_edges(edges: object) -> list[Edge]:
    if edges is None:
        return []
    require(isinstance(edges, list), "edges", "a list of {type, target, direction} objects")
    out: list[Edge] = []
    for i, e in enumerate(edges):  # type: ignore[arg-type]
        where = f"edges[{i}]"
        require(isinstance(e, dict), where, "an object with type, target and optional direction")
        unknown = set(e) - {"type", "target", "direction", "properties"}
        require(not unknown, where, f"unknown key(s) {sorted(unknown)}; use type, target, direction, properties")
        require(isinstance(e.get("type"), str), f"{where}.type", "a relationship type is required")
        require(isinstance(e.get("target"), str), f"{where}.target", "the target's nodeId is required")
        direction = {"outgoing": "out", "incoming": "in"}.get(e.get("direction") or "out", e.get("direction") or "out")
        require(direction in ("out", "in"), f"{where}.direction", "'out' (this node -> target) or 'in' (target -> this node)")
        props = e.get("properties") or {}
        require(isinstance(props, dict), f"{where}.properties", "an object")
        out.append(Edge(e["type"], e["target"], direction, props))
    return out


# ---------------------------------------------------------------------------------------
# memory-search
@tool(
    "memory-search",
    description="""
Search the knowledge graph (hybrid: semantic vector search + BM25 keywords, one-hop graph
expansion). Returns text blocks `[Labels] (id: nodeId) (score: 0.xxx)` with properties and
related nodes, separated by `---`, within an 80,000-character budget.
Arguments: query (text); limit (1-500, default 10); labels (only these node labels);
fields (return only these property names; [] for none); expandHops (1: related nodes, 0: compact);
retrievalClass (entity | temporal | event | general | none: routes the search when routing is on;
omitted: the query classifier decides, or no routing).
""",
    read_only=True,
    idempotent=True,
)
@tool_errors
def memory_search(
    ctx: ToolContext,
    query: str,
    limit: int = 10,
    labels: list[str] | None = None,
    fields: list[str] | None = None,
    expandHops: int = 1,
    retrievalClass: str | None = None,
) -> str:
    if isinstance(labels, str):
        labels = [labels]
    require(labels is None or isinstance(labels, list), "labels", "a list of node labels")
    require(fields is None or isinstance(fields, list), "fields", "a list of property names")
    req = SearchRequest(
        query,
        limit=limit,
        labels=tuple(labels) if labels else None,
        fields=tuple(fields) if fields is not None else None,
        expand_hops=expandHops,
        retrieval_class=retrievalClass,
    )
    config = SearchConfig.from_settings(ctx.settings).with_(keywords=subscribed_keywords(ctx.knowledge_keywords))
    response = hybrid(ctx.db, ctx.caller, req, ctx.embedder, config)
    hits = response.hits
    project(hits, req.fields, ctx.caller.account_id)
    text = render(hits, OUTPUT_BUDGET)
    if response.warnings:
        text = "\n".join(f"(note: {w})" for w in response.warnings) + "\n" + text
    return text


# ---------------------------------------------------------------------------------------
# memory-write
@tool(
    "memory-write",
    description="""
Create or update one node in the knowledge graph. labels: allowed node labels (e.g. ["Person"]);
properties: flat key/values (no nested objects); edges: [{type, target (nodeId), direction
"out"|"in"}] to existing nodes of this account; producedByTaskId: the Task (from work-create)
this write belongs to (adds Task-[:PRODUCED]->node); scope: public|shared|admin; agents: agent
slugs the node is visible to; nodeId: update that existing node instead of creating one (a
node you cannot read is refused like one that does not exist). A server pinned to scopes or an
agent writes inside its view: new nodes default to its most private pinned scope and its agent.
Returns {"nodeId", "created", "embedded", "provenance"} as JSON.
""",
)
@tool_errors
def memory_write(
    ctx: ToolContext,
    labels: list[str],
    properties: dict[str, Any],
    edges: list[dict[str, Any]] | None = None,
    producedByTaskId: str | None = None,
    scope: str | None = None,
    agents: list[str] | None = None,
    nodeId: str | None = None,
) -> dict[str, Any]:
    w = ctx.writer()  # refuses the public role before anything else
    require(isinstance(properties, dict), "properties", "an object of property names to values")
    parsed = _parse_edges(edges)
    if nodeId is not None:
        existing = load_node(ctx, nodeId)
        if existing is None:  # absent, deleted, hidden or foreign: one answer, so no id is confirmed
            raise ToolError(f"{not_writable('nodeId', nodeId)} (omit nodeId to create a node)")
        # An update keeps the node's visibility unless told otherwise (the primitive sets
        # scope and agents on every write: omitting them must not widen the node).
        scope = existing["scope"] if scope is None else scope
        agents = existing["agents"] if agents is None else agents
        properties = {**existing["properties"], **properties}
    source = None
    if producedByTaskId is not None:
        task = load_node(ctx, producedByTaskId, "Task", field="producedByTaskId")
        if task is None:
            log_line(
                "graph-write",
                "reject",
                reason="not-writable",
                field="producedByTaskId",
                taskId=short(str(producedByTaskId)),
                accountId=short(ctx.caller.account_id),
            )
            raise not_writable("producedByTaskId", producedByTaskId, "Task")
        source = task["nodeId"]
    else:
        conv = active_conversation(ctx)
        if conv is not None:
            source = conv["nodeId"]
    if source == nodeId:
        source = None  # never a self-loop when the conversation (or task) itself is updated
    if source is not None and not any(e.type == "PRODUCED" and e.direction == "in" and e.target == source for e in parsed):
        parsed.insert(0, Edge("PRODUCED", source, "in"))  # before the write: the provenance check sees it
    result = w.write(NodeSpec(labels, properties, edges=parsed, node_id=nodeId, scope=scope, agents=agents))
    return {
        "nodeId": result.node_id,
        "labels": list(result.labels),
        "created": result.created,
        "embedded": result.embedded,
        "provenance": result.provenance,
    }


# ---------------------------------------------------------------------------------------
# memory-ingest / memory-delete / memory-reindex
def _check_paths(paths: object) -> list[str]:
    if isinstance(paths, str):
        paths = [paths]
    require(isinstance(paths, list) and bool(paths), "paths", "a non-empty list of file or folder paths")
    protected = config_dir().expanduser().resolve()
    out = []
    for i, p in enumerate(paths):  # type: ignore[arg-type]
        require(isinstance(p, str) and bool(p.strip()), f"paths[{i}]", "a file or folder path")
        resolved = Path(p).expanduser().resolve()
        require(
            resolved != protected and protected not in resolved.parents,
            f"paths[{i}]",
            "the Maxy configuration folder (credentials, database files) cannot be ingested",
        )
        require(resolved.exists(), f"paths[{i}]", f"no such file or folder: {p}")
        out.append(str(resolved))
    return out


@tool(
    "memory-ingest",
    description="""
Ingest files or folders (.md .markdown .txt .html .htm) into the KnowledgeDocument -> Section ->
Chunk hierarchy. attachmentId: a stable id for a single file (re-ingesting the same id replaces
the document); scope and agents: visibility of every node written. Returns one result per file.
""",
    idempotent=True,
)
@tool_errors
def memory_ingest(
    ctx: ToolContext,
    paths: list[str],
    attachmentId: str | None = None,
    scope: str | None = None,
    agents: list[str] | None = None,
) -> dict[str, Any]:
    from maxy.ingest.hierarchy import ingest_paths

    w = ctx.writer(f"agent:{ctx.plugin or 'memory'}:ingest")
    files = _check_paths(paths)
    results = ingest_paths(files, w, attachment_id=attachmentId, scope=scope, agents=agents, source="mcp")
    return {
        "documents": [r.as_dict() for r in results],
        "written": sum(1 for r in results if r.ok and not r.skipped),
        "skipped": sum(1 for r in results if r.skipped),
        "failed": sum(1 for r in results if not r.ok),
    }


@tool(
    "memory-delete",
    description="""
Soft-delete an ingested document by attachmentId: the document, its sections and chunks get
deletedAt and disappear from every search at once; they are purged after a 7-day grace period.
Re-ingesting the same attachmentId restores it.
""",
    destructive=True,
    idempotent=True,
)
@tool_errors
def memory_delete(ctx: ToolContext, attachmentId: str) -> dict[str, Any]:
    from maxy.ingest.lifecycle import soft_delete_attachment

    w = ctx.writer()
    stamped = soft_delete_attachment(ctx.db, w.account.account_id, attachmentId, caller=ctx.caller)
    return {"attachmentId": attachmentId, "deleted": stamped, "alreadyDeleted": stamped == 0}


@tool(
    "memory-reindex",
    description="""
Backfill missing embeddings (after an embedder outage, a new vector index or a model change)
for all indexed labels or only `labels`. Resumable; returns counts.
""",
    idempotent=True,
)
@tool_errors
def memory_reindex(ctx: ToolContext, labels: list[str] | None = None) -> dict[str, Any]:
    from maxy.graph.allowlist import check_labels
    from maxy.search.reindex import reindex

    w = ctx.writer()
    if labels is not None:
        check_labels(labels, field="labels")
    if ctx.embedder is None:
        raise ToolError("embedder: no embedder is configured for this server; nothing to reindex with")
    return reindex(ctx.db, w.account, ctx.embedder, labels=labels, caller=ctx.caller)


# ---------------------------------------------------------------------------------------
# conversation-search
def _render_messages(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "No matching messages."
    blocks = []
    for r in rows:
        content = r.get("content") or ""
        if not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False, default=str)
        if len(content) > MESSAGE_CONTENT_CHARS:
            content = content[:MESSAGE_CONTENT_CHARS] + f"… [{len(content) - MESSAGE_CONTENT_CHARS} more chars]"
        speaker = f" speaker: {r['speaker']}" if r.get("speaker") else ""
        head = (
            f"[{r.get('role') or 'unknown'}] {r.get('timestamp') or '-'} "
            f"(session: {r.get('sessionId') or '-'}) (score: {r['score']:.3f}){speaker}"
        )
        blocks.append(head + "\n  " + content.replace("\n", "\n  "))
    text = "\n---\n".join(blocks)
    while len(text) > OUTPUT_BUDGET and len(blocks) > 1:
        blocks.pop()
        text = "\n---\n".join(blocks) + "\n--- [more messages left out to fit the output budget]"
    return text[:OUTPUT_BUDGET]


@tool(
    "conversation-search",
    description="""
Semantic search over past conversation messages. Returns each message's role, content,
timestamp, session and relevance score, best first. When this server is pinned to a session
(SESSION_ID), only that conversation is searched; admin servers search all conversations, or
one session with sessionId.
""",
    read_only=True,
    idempotent=True,
)
@tool_errors
def conversation_search(ctx: ToolContext, query: str, limit: int = 10, sessionId: str | None = None) -> str:
    ctx.refuse_widening({"sessionId": sessionId})
    if ctx.session_id and sessionId is not None and sessionId != ctx.session_id:
        raise ToolError("sessionId: SESSION_ID is pinned for this server; a tool argument cannot change it")
    session = ctx.session_id or sessionId
    rows = search_messages(
        ctx.db, ctx.caller, ctx.embedder, query, session_id=session, limit=limit,
        config=SearchConfig.from_settings(ctx.settings, base=MESSAGE_SEARCH),
    )
    return _render_messages(rows)


# ---------------------------------------------------------------------------------------
# Reports
def _parse_when(value: object) -> datetime:
    if value is None:
        return datetime.now(UTC)
    require(isinstance(value, str) and bool(value.strip()), "occurredAt", "an ISO 8601 date-time, e.g. 2026-05-07T06:00:00Z")
    text = value.strip()  # type: ignore[union-attr]
    try:
        when = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
    except ValueError:
        raise ToolError("occurredAt: an ISO 8601 date-time, e.g. 2026-05-07T06:00:00Z") from None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).astimezone(UTC)


def report_node_id(root: str, title: str, minute: str) -> str:
    """Deterministic per (account, title, minute), and per view when pinned (``root`` is
    ``confine.id_root``): the idempotency key is the node id itself, so even two concurrent
    writes of the same report end up as one node, and a pinned writer never meets a hidden one."""
    digest = hashlib.sha256("\x1f".join(["report", root, title, minute]).encode()).digest()
    return str(uuid.UUID(bytes=digest[:16]))


def admin_user_node_id(account_id: str) -> str:
    digest = hashlib.sha256("\x1f".join(["admin-user", account_id]).encode()).digest()
    return str(uuid.UUID(bytes=digest[:16]))


def account_admin_user(ctx: ToolContext) -> str | None:
    """The AdminUser nodeId the caller can see; an unpinned admin creates the account's (as the
    system agent) when there is none. A pinned view never creates one: None."""
    guard = node_guard(ctx.caller, "u")
    rows = ctx.db.read(
        f"MATCH (u:AdminUser) WHERE {guard.clause} RETURN u.nodeId AS id ORDER BY u.createdAt LIMIT 1",
        **guard.params,
    )
    if rows:
        return rows[0]["id"]
    if ctx.caller.pinned:
        return None
    result = ctx.writer(SYSTEM).write(
        NodeSpec(["AdminUser"], {"name": "Account admin"}, node_id=admin_user_node_id(ctx.caller.account_id), scope="admin")
    )
    return result.node_id


_REPORT_META = """
    r.nodeId AS reportId, r.title AS title, r.keywords AS keywords, r.sourceWorkflow AS sourceWorkflow,
    r.occurredAt AS occurredAt, r.createdAt AS createdAt, coalesce(r.bodyChars, size(r.body)) AS bodyChars
"""


@tool(
    "memory-report-write",
    description="""
Save durable workflow output (a daily briefing, an analysis) as a Report: title, body (at most
10,000 characters), keywords (tags used to find it again, e.g. ["daily-briefing", "2026-05-07"]),
sourceWorkflow, occurredAt (ISO date-time, default now). Writing the same title again within the
same minute returns the existing report. Returns {"reportId", "idempotent"}.
""",
    idempotent=True,
)
@tool_errors
def memory_report_write(
    ctx: ToolContext,
    title: str,
    body: str,
    keywords: list[str] | None = None,
    sourceWorkflow: str | None = None,
    occurredAt: str | None = None,
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
    workflow = check_text(sourceWorkflow, "sourceWorkflow", limit=200, required=False)
    when = _parse_when(occurredAt)
    w = ctx.writer()
    assert title_ is not None
    minute = when.strftime("%Y-%m-%dT%H:%M")
    rid = report_node_id(id_root(ctx.caller), title_, minute)

    existing = load_node(ctx, rid, "Report")
    if existing is not None:
        props = existing["properties"]
        log_line(
            "reports",
            op="write",
            reportId=short(rid),
            keywords=props.get("keywords") or [],
            ms=round((time.perf_counter() - started) * 1000),
            idempotent=1,
        )
        return {"reportId": rid, "title": props.get("title"), "occurredAt": props.get("occurredAt"), "idempotent": True}

    conv = active_conversation(ctx)
    source = conv["nodeId"] if conv is not None else account_admin_user(ctx)
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
    return {"reportId": rid, "title": title_, "occurredAt": props["occurredAt"], "idempotent": False}


@tool(
    "memory-report-read-latest",
    description="""
Read the newest Report(s) tagged with a keyword (default limit 1): the route for "latest <X>",
"last night's <X>", "show me <X> report". Returns title, body, keywords, sourceWorkflow, occurredAt.
""",
    read_only=True,
    idempotent=True,
)
@tool_errors
def memory_report_read_latest(ctx: ToolContext, keyword: str, limit: int = 1) -> dict[str, Any]:
    started = time.perf_counter()
    kw = check_text(keyword, "keyword", limit=MAX_KEYWORD_CHARS)
    n = check_int(limit, "limit", 1, 20)
    guard = node_guard(ctx.caller, "r")
    rows = ctx.db.read(
        f"""
        MATCH (r:Report) WHERE {guard.clause}
          AND any(k IN coalesce(r.keywords, []) WHERE toLower(toString(k)) = toLower($kw))
        RETURN {_REPORT_META}, r.body AS body
        ORDER BY datetime(coalesce(r.occurredAt, r.createdAt)) DESC, r.createdAt DESC
        LIMIT $n
        """,
        kw=kw,
        n=n,
        **guard.params,
    )
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
List Reports newest first, metadata only (no bodies): optional keyword and sourceWorkflow filters,
limit (1-100, default 20) and offset for paging. Returns {"total", "reports": [...]}.
""",
    read_only=True,
    idempotent=True,
)
@tool_errors
def memory_report_list(
    ctx: ToolContext,
    keyword: str | None = None,
    sourceWorkflow: str | None = None,
    limit: int = 20,
    offset: int = 0,
) -> dict[str, Any]:
    started = time.perf_counter()
    kw = check_text(keyword, "keyword", limit=MAX_KEYWORD_CHARS, required=False)
    wf = check_text(sourceWorkflow, "sourceWorkflow", limit=200, required=False)
    n = check_int(limit, "limit", 1, 100)
    skip = check_int(offset, "offset", 0, 1_000_000)
    guard = node_guard(ctx.caller, "r")
    rows = ctx.db.read(
        f"""
        MATCH (r:Report) WHERE {guard.clause}
          AND ($kw IS NULL OR any(k IN coalesce(r.keywords, []) WHERE toLower(toString(k)) = toLower($kw)))
          AND ($wf IS NULL OR r.sourceWorkflow = $wf)
        WITH r ORDER BY datetime(coalesce(r.occurredAt, r.createdAt)) DESC, r.createdAt DESC
        WITH collect(r) AS all_reports
        RETURN size(all_reports) AS total,
               [r IN all_reports[$skip..($skip + $n)] | r {{
                   reportId: r.nodeId, .title, .keywords, .sourceWorkflow, .occurredAt, .createdAt,
                   bodyChars: coalesce(r.bodyChars, size(r.body))
               }}] AS reports
        """,
        kw=kw,
        wf=wf,
        skip=skip,
        n=n,
        **guard.params,
    )
    total = int(rows[0]["total"]) if rows else 0
    reports = rows[0]["reports"] if rows else []
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
