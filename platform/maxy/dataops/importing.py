"""``maxy import``: an export file back into its account, exactly.

The whole file is checked first (format, every label, relationship type and property name
against the allow-lists, every value storable, every relationship's ends in the file, the
header's counts), so bad input writes nothing. Then nodes and relationships are written in
batches, one transaction each, values as parameters: ``MERGE`` on nodeId and on the
(start, type, end) of a relationship, so an interrupted import is simply run again (the
account folder's ``import-pending.json`` says one is under way). Last, the graph's counts are
compared with the header's.

The target is the file's own account id: a new id, a deleted one (its leftovers are purged
first) or a live account with no nodes; a live account with nodes only with ``replace``.
Without vectors in the file (or with ``reembed``) the nodes are embedded again afterwards,
exactly as ``maxy reindex`` does (and it finishes the job if the embedder was down).
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..accounts import validate_account
from ..db import Database
from ..embeddings.base import Embedder
from ..errors import GraphWriteError, MaxyError, ValidationError
from ..graph.allowlist import quote
from ..graph.schema import recorded_embedder
from ..logs import log_line, short
from ..textcheck import check_clean
from . import account_files, jsonl

BATCH = 500
CLEAR_BATCH_ROWS = 1000


@dataclass
class ImportPlan:
    """What the checked file holds."""

    path: Path
    header: dict[str, Any]
    account: dict[str, Any]
    nodes: int = 0
    relationships: int = 0
    vectors: int = 0

    @property
    def account_id(self) -> str:
        return str(self.header["accountId"])


@dataclass
class ImportResult:
    accountId: str
    nodes: int
    relationships: int
    vectors: str
    cleared: int = 0
    resumed: bool = False
    reindex: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _records(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    try:
        with open(path, encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                where = f"{path.name} line {number}"
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as err:
                    raise ValidationError(
                        where, f"not a JSON record ({err.msg}): is this a `maxy export` file?"
                    ) from None
                if not isinstance(record, dict):
                    raise ValidationError(where, "not a JSON object: is this a `maxy export` file?")
                check_clean(record, where, nul=False)  # an export restores what was stored, NUL included
                yield where, record
    except OSError as err:
        raise ValidationError("FILE", f"cannot read {path} ({err.strerror or err})") from None
    except UnicodeDecodeError:
        raise ValidationError("FILE", f"{path} is not UTF-8 text: is this a `maxy export` file?") from None


def check_file(path: Path) -> ImportPlan:
    """Read the whole file once and refuse it, naming the line, unless all of it can be imported."""
    records = _records(path)
    plan = _read_head(path, records)
    seen: set[str] = set()
    for where, record in records:
        kind = record.get("kind")
        if kind == "node":
            _check_node(plan, where, record, seen)
        elif kind == "relationship":
            jsonl.check_relationship(record, where)
            for end in ("start", "end"):
                if record[end] not in seen:
                    raise ValidationError(f"{where}.{end}", f"{record[end]} is not a node of the file")
            plan.relationships += 1
        else:
            raise ValidationError(f"{where}.kind", f"{kind!r}: expected node or relationship")
    counts = {"nodes": plan.nodes, "relationships": plan.relationships}
    if plan.header.get("counts") != counts:
        raise ValidationError(
            f"{path.name} counts",
            f"header says {plan.header.get('counts')}, the file holds {counts}: the file is incomplete",
        )
    return plan


def _read_head(path: Path, records: Iterator[tuple[str, dict[str, Any]]]) -> ImportPlan:
    """The header and the account record (the first two lines)."""
    first = next(records, None)
    if first is None:
        raise ValidationError("FILE", f"{path} is empty: is this a `maxy export` file?")
    where, header = first
    if header.get("kind") != "header" or header.get("format") != jsonl.FORMAT:
        raise ValidationError(where, "no maxy-account header: is this a `maxy export` file?")
    if header.get("version") != jsonl.VERSION:
        raise ValidationError(
            where, f"format version {header.get('version')!r}; this maxy reads version {jsonl.VERSION}"
        )
    account_id = account_files.canonical_id(str(header.get("accountId")), field=f"{where}.accountId")
    header["accountId"] = account_id
    second = next(records, None)
    if second is None or second[1].get("kind") != "account" or second[1].get("accountId") != account_id:
        raise ValidationError(f"{path.name} line 2", "the account record of the header's account is missing")
    name = second[1].get("name")
    if not isinstance(name, str) or not name.strip():
        raise ValidationError(f"{path.name} line 2.name", "the account needs a name")
    return ImportPlan(path, header, second[1])


def _check_node(plan: ImportPlan, where: str, record: dict[str, Any], seen: set[str]) -> None:
    if plan.relationships:
        raise ValidationError(where, "a node after the relationships: nodes come first")
    jsonl.check_node(record, where, plan.account_id)
    if record["nodeId"] in seen:
        raise ValidationError(f"{where}.nodeId", f"{record['nodeId']} appears twice")
    seen.add(record["nodeId"])
    plan.nodes += 1
    plan.vectors += jsonl.VECTOR_PROPERTY in record["properties"]


def count_graph(db: Database, account_id: str) -> dict[str, int]:
    row = db.read(
        """
        MATCH (n:Node {accountId: $acc})
        OPTIONAL MATCH (n)-[r]->(m:Node {accountId: $acc})
        RETURN count(DISTINCT n) AS nodes, count(r) AS relationships
        """,
        acc=account_id,
    )[0]
    return {"nodes": int(row["nodes"]), "relationships": int(row["relationships"])}


def import_account(
    db: Database,
    data_root: Path,
    path: Path,
    *,
    replace: bool = False,
    reembed: bool = False,
    embedder: Embedder | None = None,
    plan: ImportPlan | None = None,
) -> ImportResult:
    """Import an export file (``plan``: its :func:`check_file`, if already made); ``embedder``
    None leaves missing vectors for ``maxy reindex``."""
    started = time.perf_counter()
    plan = plan if plan is not None and plan.path == path else check_file(path)
    account_id = plan.account_id
    keep_vectors = plan.vectors > 0 and not reembed
    if keep_vectors:
        _check_model(db, plan)
    resumed = account_files.import_pending(data_root, account_id)
    deleted = account_files.deleted_at(data_root, account_id) is not None
    existing = count_graph(db, account_id)["nodes"]
    if existing and not (resumed or deleted or replace):
        raise GraphWriteError(
            "account-not-empty",
            f"account {account_id} already has {existing} node(s): import with --replace to overwrite them "
            "with the file's",
        )
    cleared = 0 if resumed and not replace else _clear(db, account_id)
    account_files.set_import_pending(data_root, account_id, plan.header)
    account_files.remove_deleted(data_root, account_id)
    account_files.write_account_record(
        data_root,
        {"accountId": account_id, "name": plan.account["name"], "createdAt": plan.account.get("createdAt", "")},
    )
    _write(db, plan, keep_vectors)
    found = count_graph(db, account_id)
    if found != plan.header["counts"]:
        raise MaxyError(
            f"account {account_id} holds {found} after the import, the file {plan.header['counts']}: "
            "was something writing to it? Run the import again with --replace"
        )
    account_files.clear_import_pending(data_root, account_id)
    vectors = "from-file" if keep_vectors else "left for `maxy reindex`"
    summary: dict[str, int] = {}
    if not keep_vectors and embedder is not None:
        from ..search.reindex import reindex

        summary = reindex(db, validate_account(data_root, account_id), embedder)
        vectors = "re-embedded" if not summary.get("remaining") else "partly re-embedded: run `maxy reindex`"
    result = ImportResult(account_id, plan.nodes, plan.relationships, vectors, cleared, resumed, summary)
    log_line(
        "import",
        accountId=short(account_id),
        nodes=plan.nodes,
        relationships=plan.relationships,
        vectors=vectors,
        cleared=cleared,
        resumed=resumed,
        ms=round((time.perf_counter() - started) * 1000),
    )
    return result


def _check_model(db: Database, plan: ImportPlan) -> None:
    recorded = recorded_embedder(db)
    header = plan.header
    if recorded and (recorded.get("model"), recorded.get("dimensions")) != (
        header.get("model"),
        header.get("dimensions"),
    ):
        raise ValidationError(
            "--with-vectors",
            f"the file's vectors come from {header.get('model')} ({header.get('dimensions')} dimensions) but this "
            f"database's from {recorded.get('model')} ({recorded.get('dimensions')}): import with --reembed",
        )


def _clear(db: Database, account_id: str) -> int:
    """Hard-delete what the account holds now (a deleted account's leftovers, or --replace)."""
    rows = db.autocommit(
        """
        MATCH (n:Node {accountId: $acc})
        CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF $rows ROWS
        RETURN count(n) AS cleared
        """,
        acc=account_id,
        rows=CLEAR_BATCH_ROWS,
    )
    return int(rows[0]["cleared"]) if rows else 0


def _write(db: Database, plan: ImportPlan, keep_vectors: bool) -> None:
    nodes: list[dict[str, Any]] = []
    rels: list[dict[str, Any]] = []
    records = _records(plan.path)
    next(records)
    next(records)
    for _, record in records:
        if record["kind"] == "node":
            props = dict(record["properties"])
            if not keep_vectors:
                props.pop(jsonl.VECTOR_PROPERTY, None)
            nodes.append({"nodeId": record["nodeId"], "labels": record["labels"], "props": props})
            if len(nodes) >= BATCH:
                _write_nodes(db, plan.account_id, nodes)
                nodes = []
        else:
            rels.append(
                {
                    "start": record["start"],
                    "type": record["type"],
                    "end": record["end"],
                    "props": record.get("properties", {}),
                }
            )
            if len(rels) >= BATCH:
                _write_nodes(db, plan.account_id, nodes)  # the ends of these relationships first
                nodes = []
                _write_relationships(db, plan.account_id, rels)
                rels = []
    _write_nodes(db, plan.account_id, nodes)
    _write_relationships(db, plan.account_id, rels)


def _write_nodes(db: Database, account_id: str, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[tuple(label for label in row["labels"] if label != "Node")].append(row)

    def work(tx: Any) -> None:
        taken = tx.run(
            "MATCH (x:Node) WHERE x.nodeId IN $ids AND x.accountId <> $acc RETURN x.nodeId AS id LIMIT 1",
            ids=[r["nodeId"] for r in rows],
            acc=account_id,
        ).single()
        if taken is not None:
            raise GraphWriteError(
                "node-id-taken", f"nodeId {taken['id']} belongs to another account: nothing of this batch was written"
            )
        for labels, group in groups.items():
            # labels were checked against the allow-list by check_file
            extra = f" SET n:{':'.join(quote(label) for label in labels)}" if labels else ""
            tx.run(
                f"UNWIND $rows AS row MERGE (n:Node {{nodeId: row.nodeId}}) SET n = row.props{extra}",
                rows=group,
            ).consume()

    db.write_tx(work)


def _write_relationships(db: Database, account_id: str, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[row["type"]].append(row)

    def work(tx: Any) -> None:
        for rel_type, group in groups.items():
            record = tx.run(
                f"""
                UNWIND $rows AS row
                MATCH (a:Node {{nodeId: row.start}}) WHERE a.accountId = $acc
                MATCH (b:Node {{nodeId: row.end}}) WHERE b.accountId = $acc
                MERGE (a)-[r:{quote(rel_type)}]->(b) SET r = row.props
                RETURN count(r) AS written
                """,
                rows=group,
                acc=account_id,
            ).single()
            if record is None or record["written"] != len(group):
                raise GraphWriteError("missing-node", f"a {rel_type} relationship's end is missing from the graph")

    db.write_tx(work)
