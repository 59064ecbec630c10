"""``maxy export``: one account, whole, as JSON Lines (the format: ``maxy.dataops.jsonl``).

Nodes are read a page at a time in nodeId order, then the relationships among them; only the
ids are held in memory, however large the account. The header's counts are taken first and checked at the
end: an account written to during the export is reported, not silently exported half-changed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from ..db import Database
from ..errors import MaxyError
from ..graph.schema import recorded_embedder
from ..logs import log_line, short
from ..textcheck import printable
from . import account_files, jsonl

PAGE = 500


def export_account(
    db: Database, data_root: Path, account_id: str, out: TextIO, *, with_vectors: bool
) -> dict[str, Any]:
    """Write the account to ``out``; returns the header (with its counts)."""
    started = time.perf_counter()
    record = account_files.read_account_record(data_root, account_id)
    # ids first (one index read), then the nodes by id: every page costs the same however large the account
    node_ids = [
        r["id"] for r in db.read("MATCH (n:Node {accountId: $acc}) RETURN n.nodeId AS id ORDER BY id", acc=account_id)
    ]
    counted = db.read(
        "MATCH (n:Node {accountId: $acc})-[r]->(m:Node {accountId: $acc}) RETURN count(r) AS relationships",
        acc=account_id,
    )[0]
    model = recorded_embedder(db) or {}
    header = {
        "kind": "header",
        "format": jsonl.FORMAT,
        "version": jsonl.VERSION,
        "accountId": account_id,
        "model": model.get("model"),
        "dimensions": model.get("dimensions"),
        "withVectors": with_vectors,
        "exportedAt": datetime.now(UTC).isoformat(),
        "counts": {"nodes": len(node_ids), "relationships": int(counted["relationships"])},
    }
    account = {
        "kind": "account",
        "accountId": account_id,
        "name": record.get("name", ""),
        "createdAt": record.get("createdAt", ""),
    }
    _line(out, header)
    _line(out, account)
    nodes = 0
    for node in _nodes(db, account_id, node_ids, with_vectors):
        nodes += 1
        _line(out, node)
    relationships = 0
    for rel in _relationships(db, account_id, node_ids):
        relationships += 1
        _line(out, rel)
    out.flush()
    written = {"nodes": nodes, "relationships": relationships}
    log_line(
        "export",
        accountId=short(account_id),
        nodes=written["nodes"],
        relationships=relationships,
        vectors=with_vectors,
        ms=round((time.perf_counter() - started) * 1000),
    )
    if written != header["counts"]:
        raise MaxyError(
            f"account {account_id} changed while it was exported ({header['counts']} counted, {written} written): "
            "run the export again when nothing writes to it"
        )
    return header


def _line(out: TextIO, record: dict[str, Any]) -> None:
    out.write(json.dumps(printable(record), ensure_ascii=False, separators=(",", ":")) + "\n")


def _nodes(db: Database, account_id: str, node_ids: list[str], with_vectors: bool) -> Iterator[dict[str, Any]]:
    """The nodes a page of ids at a time, each page one lookup by the nodeId index."""
    props = "properties(n)" if with_vectors else f"n {{.*, {jsonl.VECTOR_PROPERTY}: null}}"
    for i in range(0, len(node_ids), PAGE):
        rows = db.read(
            f"""
            UNWIND $ids AS id
            MATCH (n:Node {{nodeId: id}}) WHERE n.accountId = $acc
            RETURN n.nodeId AS nodeId, [l IN labels(n) WHERE l <> 'Node'] AS labels, {props} AS properties
            ORDER BY nodeId
            """,
            ids=node_ids[i : i + PAGE],
            acc=account_id,
        )
        for row in rows:
            properties = {k: v for k, v in row["properties"].items() if v is not None}
            jsonl.check_properties(properties, f"node {row['nodeId']}")
            yield {"kind": "node", "nodeId": row["nodeId"], "labels": sorted(row["labels"]), "properties": properties}


def _relationships(db: Database, account_id: str, node_ids: list[str]) -> Iterator[dict[str, Any]]:
    for i in range(0, len(node_ids), PAGE):
        rows = db.read(
            """
            UNWIND $ids AS id
            MATCH (a:Node {nodeId: id})-[r]->(b:Node {accountId: $acc})
            RETURN a.nodeId AS start, type(r) AS type, b.nodeId AS end, properties(r) AS properties
            ORDER BY start, type, end
            """,
            ids=node_ids[i : i + PAGE],
            acc=account_id,
        )
        for row in rows:
            jsonl.check_properties(row["properties"], f"relationship {row['start']}-{row['type']}->{row['end']}")
            yield {"kind": "relationship", **row}
