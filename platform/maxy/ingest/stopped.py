"""Ingests of large documents that stopped before they finished (Ctrl-C, a killed process, a
crash): the hidden nodes they left, found for ``maxy status`` and removed by
``maxy purge --stopped``.

Such nodes are the staged copy of a document (``maxy.ingest.staged``), or the retired old
version a finished flip had not deleted yet. Their document node says which document they
are (attachmentId, title, sourcePath) and who wrote them (``stagedHost``, ``stagedPid``,
``stagedAt``): an ingest whose process still runs on this machine is *running*, not stopped;
one from another machine counts as stopped once nothing has been written for ``STALE_S``.
The next ingest of the same document resumes or removes them by itself.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..db import Database
from ..graph.guards import Caller, domain_guard
from ..graph.write import PENDING_PROPERTY, GraphWriter
from ..logs import log_line, short
from .staged import RETIRED, STAGED_AT, STAGED_HOST, STAGED_PID, remove_tree, writer_alive

STALE_S = 900.0

_LEFTOVERS = f"""
MATCH (d:KnowledgeDocument)
WHERE d.{PENDING_PROPERTY} IS NOT NULL AND {{guard}}
OPTIONAL MATCH (d)-[:HAS_SECTION]->(s:Section) WHERE s.{PENDING_PROPERTY} = d.{PENDING_PROPERTY}
OPTIONAL MATCH (s)-[:HAS_CHUNK]->(c:Chunk) WHERE c.{PENDING_PROPERTY} = d.{PENDING_PROPERTY}
WITH d, collect(DISTINCT s) AS sections, collect(DISTINCT c) AS chunks
WITH d, chunks, [d] + sections + chunks AS nodes
RETURN d.nodeId AS nodeId, d.attachmentId AS attachmentId, d.title AS title,
       coalesce(d.sourcePath, d.relativePath) AS path, d.{PENDING_PROPERTY} = '{RETIRED}' AS retired,
       size(nodes) AS nodes, size(chunks) AS chunks, d.{STAGED_AT} AS startedAt, d.{STAGED_HOST} AS host,
       d.{STAGED_PID} AS pid,
       reduce(last = '', n IN nodes | CASE WHEN n.updatedAt > last THEN n.updatedAt ELSE last END) AS lastWriteAt
ORDER BY startedAt, attachmentId
"""


@dataclass(frozen=True)
class LeftIngest:
    """The hidden nodes one unfinished ingest of a document left."""

    node_id: str  # its document node's (staging or retired) id
    attachment_id: str
    title: str | None
    path: str | None
    nodes: int
    chunks: int
    started_at: str | None
    last_write_at: str | None
    host: str | None
    pid: int | None
    retired: bool  # the old version a finished ingest had not deleted yet
    running: bool

    @property
    def name(self) -> str:
        return os.path.basename(self.path) if self.path else self.title or self.attachment_id

    def as_dict(self) -> dict[str, Any]:
        return {
            "attachmentId": self.attachment_id,
            "title": self.title,
            "path": self.path,
            "nodes": self.nodes,
            "chunks": self.chunks,
            "startedAt": self.started_at,
            "lastWriteAt": self.last_write_at,
            "host": self.host,
            "pid": self.pid,
            "replacedVersion": self.retired,
            "state": "running" if self.running else "stopped",
        }


def _running(row: dict[str, Any], now: datetime) -> bool:
    host, pid = row["host"], row["pid"]
    if host == socket.gethostname() and isinstance(pid, int):
        return writer_alive(host, pid)
    try:
        last = datetime.fromisoformat(row["lastWriteAt"] or row["startedAt"] or "")
    except ValueError:
        return False
    return (now - last).total_seconds() < STALE_S


def find_left_ingests(db: Database, caller: Caller, now: datetime | None = None) -> list[LeftIngest]:
    """Every unfinished ingest of ``caller``'s view, running or stopped, oldest first."""
    guard = domain_guard(caller, "d")
    rows = db.read(_LEFTOVERS.replace("{guard}", guard.clause), **guard.params)
    at = now or datetime.now(UTC)
    return [
        LeftIngest(
            r["nodeId"],
            r["attachmentId"],
            r["title"],
            r["path"],
            int(r["nodes"]),
            int(r["chunks"]),
            r["startedAt"],
            r["lastWriteAt"] or None,
            r["host"],
            r["pid"],
            bool(r["retired"]),
            _running(r, at),
        )
        for r in rows
    ]


def remove_stopped(writer: GraphWriter, found: list[LeftIngest] | None = None) -> list[LeftIngest]:
    """Delete what the stopped ingests of the writer's view left (a running one is left alone);
    the ones removed, with the nodes each had."""
    found = found if found is not None else find_left_ingests(writer.db, writer.caller)
    removed = []
    for left in found:
        if left.running:
            continue
        nodes = remove_tree(writer, left.node_id, left.attachment_id)
        log_line(
            "ingest",
            op="remove-stopped",
            accountId=short(writer.account.account_id),
            attachmentId=left.attachment_id,
            removed=nodes,
        )
        removed.append(left)
    return removed


def status_line(left: list[dict[str, Any]]) -> str | None:
    """``maxy status``'s warning about the stopped ones of ``left`` (``LeftIngest.as_dict()``s),
    None when there are none."""
    stopped = [x for x in left if x["state"] == "stopped"]
    if not stopped:
        return None
    shown = "; ".join(_describe(x) for x in stopped[:5])
    more = f"; {len(stopped) - 5} more" if len(stopped) > 5 else ""
    staged = [x for x in stopped if not x["replacedVersion"]]
    if not staged:  # the new version is live: an ingest of the unchanged file skips it
        return (
            f"{len(stopped)} stopped ingest(s) left hidden nodes — {shown}{more}; 'maxy purge --stopped' removes them"
        )
    first = staged[0]["path"] or "<file>"
    return (
        f"{len(stopped)} stopped ingest(s) left hidden nodes — {shown}{more}; the next "
        f"'maxy ingest {first}' of the same file resumes or removes them, or 'maxy purge --stopped' "
        "removes them now"
    )


def running_note(left: list[dict[str, Any]]) -> str | None:
    running = [x for x in left if x["state"] == "running"]
    if not running:
        return None
    return f"{len(running)} ingest(s) being written — " + "; ".join(_describe(x) for x in running[:5])


def _describe(left: dict[str, Any]) -> str:
    stopped = left["state"] == "stopped"
    when = left["lastWriteAt"] if stopped else left["startedAt"]
    at = f", {'stopped' if stopped else 'started'} {when[:16].replace('T', ' ')} UTC" if when else ""
    what = " (the replaced version, not yet deleted)" if left["replacedVersion"] else ""
    name = os.path.basename(left["path"]) if left["path"] else left["title"] or left["attachmentId"]
    count = f"{left['nodes']:,} nodes{'' if stopped else ' so far'}"
    return f"{name}{what} (attachment {left['attachmentId']}, {count}{at})"
