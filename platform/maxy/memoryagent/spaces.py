"""Memory spaces: a named memory inside the caller's account (the "vault").

    (:MemorySpace {memory})-[:HAS_ENTRY]->(:MemoryEntry)
    (:MemorySpace {memory})-[:HAS_CONTEXT]->(:MemoryContext)

A space's nodeId derives from ``confine.id_root`` and its name, so each pinned view has spaces
of its own: two views writing to the memory ``ada`` never see each other's entries. Spaces are
the admin's own records (``confine.record_scope``), like session conversations.

An entry's ``seq`` and a context's ``version`` are the next after the space's highest. Within a
process, :func:`space_lock` keeps writers in line; across processes, :func:`commit_next` takes
the space's write lock in the writing transaction and numbers the record there, so two
processes never take the same number and neither has to read and try again.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

import neo4j

from ..errors import ValidationError
from ..graph.confine import id_root, record_scope
from ..graph.guards import Caller, node_guard
from ..graph.write import GraphWriter, NodeSpec, PreparedWrite, WriteResult

MAX_MEMORY = 128
MEMORY_RE = re.compile(r"[A-Za-z0-9._:@-]{1,128}")
SPACE_LABEL = "MemorySpace"
ENTRY_LABEL = "MemoryEntry"
CONTEXT_LABEL = "MemoryContext"

_LOCKS = tuple(threading.Lock() for _ in range(64))
MAX_TRIES = 3  # writes of a space that another process keeps removing


class SpaceMoved(Exception):
    """The space was not there when the writing transaction locked it: nothing was written."""


def kept_changing(memory: str) -> ValidationError:
    """The refusal of a write whose every try (:data:`MAX_TRIES`) found its space removed."""
    return ValidationError(
        "memory", f"{memory!r} kept being removed while this call ran ({MAX_TRIES} tries); call again"
    )


def check_memory(value: object, field: str = "memory") -> str:
    """A memory's name: 1-128 letters, digits and ``. _ : @ -`` (a user id, a thread id, an e-mail)."""
    if not isinstance(value, str) or not value:
        raise ValidationError(field, f"a memory name is required: 1-{MAX_MEMORY} letters, digits or . _ : @ -")
    if len(value) > MAX_MEMORY:
        raise ValidationError(field, f"at most {MAX_MEMORY} characters (got {len(value)}); use a shorter memory name")
    if not MEMORY_RE.fullmatch(value):
        bad = next(ch for ch in value if not MEMORY_RE.fullmatch(ch))
        raise ValidationError(
            field, f"{bad!r} is not allowed in a memory name; use letters, digits or . _ : @ - (got {value!r})"
        )
    return value


def derived_id(kind: str, root: str, *parts: str) -> str:
    """A nodeId per (kind, id root, natural key): the same key lands on the same node."""
    digest = hashlib.sha1("\x1f".join((kind, root, *parts)).encode()).hexdigest()[:24]
    return f"{kind}-{digest}"


def space_node_id(caller: Caller, memory: str) -> str:
    return derived_id("memspace", id_root(caller), memory)


def space_spec(writer: GraphWriter, memory: str) -> NodeSpec:
    """The space's node, written (or touched) with each entry or context put into it."""
    return NodeSpec(
        [SPACE_LABEL],
        {"memory": memory},
        node_id=space_node_id(writer.caller, memory),
        scope=record_scope(writer.caller),
    )


@contextmanager
def space_lock(caller: Caller, memory: str) -> Iterator[None]:
    """Serialises writes to one space within a process (its next seq or version)."""
    with _LOCKS[hash((id_root(caller), memory)) % len(_LOCKS)]:
        yield


def commit_next(
    writer: GraphWriter,
    memory: str,
    prepared: PreparedWrite,
    *,
    records: Literal["HAS_ENTRY", "HAS_CONTEXT"],
    number: Literal["seq", "version"],
    node_id: str,
    first: int,
) -> tuple[list[WriteResult], int]:
    """Write ``prepared`` in one transaction that first takes the space's write lock, then gives
    the record ``node_id`` the next ``number`` after the highest of the space's ``records`` (the
    relationship to them: ``HAS_ENTRY`` or ``HAS_CONTEXT``), ``first`` when it has none; a record
    written again keeps its number. Returns
    the results and the number taken. Writers of one space take the lock in turn, so none ever
    takes a number another holds, however many write at once. The space must exist already
    (:func:`space_spec`); else :class:`SpaceMoved` and nothing is written."""
    space_id = space_node_id(writer.caller, memory)
    space, record = node_guard(writer.caller, "s"), node_guard(writer.caller, "c")
    lock = f"MATCH (s:{SPACE_LABEL}:Node {{nodeId: $id}}) WHERE {space.clause} SET s.memory = s.memory RETURN s.nodeId AS id"
    # read under the lock, in a statement of its own, so it sees what the last writer committed
    highest = (
        f"MATCH (s:Node {{nodeId: $id}})-[:{records}]->(c) WHERE {record.clause} "
        f"RETURN max(c.{number}) AS top, head(collect(CASE WHEN c.nodeId = $node THEN c.{number} END)) AS own"
    )
    node = next(n for n in prepared.nodes if n.node_id == node_id)
    taken = first

    def locked(tx: neo4j.ManagedTransaction) -> None:
        nonlocal taken
        if tx.run(lock, id=space_id, **space.params).single() is None:
            raise SpaceMoved()  # not there yet
        row = tx.run(highest, id=space_id, node=node_id, **record.params).single()
        top, own = (None, None) if row is None else (row["top"], row["own"])
        taken = int(own) if own is not None else first if top is None else int(top) + 1
        node.props[number] = taken

    return writer.commit(prepared, before_write=locked), taken
