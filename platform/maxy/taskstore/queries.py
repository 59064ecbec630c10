"""The task store's Cypher, in one place. Every query reads through the caller's guards
(``node_guard``) and, unless the store keeps the community's tasks (``community``), never reaches a
community record (``generic_guard``: a negotiation's task is read only through the negotiation);
values travel as parameters; the labels and relationship types are the allow-listed constants below."""

from __future__ import annotations

from typing import Any

from ..graph.guards import Caller, Guard, generic_guard, node_guard

TASK = "Task"
EVENT = "TaskEvent"
# entity kind -> (label, relationship from the Task)
ENTITIES: dict[str, tuple[str, str]] = {
    "attempt": ("TaskAttempt", "HAS_ATTEMPT"),
    "artifact": ("TaskArtifact", "HAS_ARTIFACT"),
    "review": ("TaskReview", "HAS_REVIEW"),
    "approval": ("TaskApproval", "HAS_APPROVAL"),
    "effect": ("TaskSideEffect", "PLANS"),
}
HAS_EVENT = "HAS_EVENT"
LIST_FIELDS = (
    "taskId",
    "title",
    "kind",
    "priority",
    "phase",
    "status",
    "version",
    "attempts",
    "failedAttempts",
    "currentAttemptId",
    "createdAt",
    "updatedAt",
)


def _guard(caller: Caller, var: str, community: bool) -> Guard:
    return node_guard(caller, var) if community else generic_guard(caller, var)


def _guards(caller: Caller, community: bool) -> tuple[Guard, Guard]:
    return _guard(caller, "t", community), _guard(caller, "c", community)


def _children(kind: str, guard: Guard) -> str:
    label, rel = ENTITIES[kind]
    return f"COLLECT {{ MATCH (t)-[:{rel}]->(c:{label}) WHERE {guard.clause} RETURN properties(c) }}"


def load_task(caller: Caller, community: bool = False) -> tuple[str, dict[str, Any]]:
    """One protocol task with its attempts, artifacts, reviews, approvals and side effects, each
    related node guarded like the task."""
    gt, gc = _guards(caller, community)
    query = f"""
        MATCH (t:{TASK}:Node {{nodeId: $id}}) WHERE {gt.clause} AND t.protocol = true
        RETURN [k IN keys(t) WHERE k <> 'embedding' | [k, t[k]]] AS task,
               {_children("attempt", gc)} AS attempts,
               {_children("artifact", gc)} AS artifacts,
               {_children("review", gc)} AS reviews,
               {_children("approval", gc)} AS approvals,
               {_children("effect", gc)} AS effects
    """
    return query, {**gt.params, **gc.params}


def lock_task(caller: Caller, community: bool = False) -> tuple[str, dict[str, Any]]:
    """Take the task's write lock (setting a property to its own value) before anything is read."""
    gt = _guard(caller, "t", community)
    query = f"""
        MATCH (t:{TASK}:Node {{nodeId: $id}}) WHERE {gt.clause} AND t.protocol = true
        SET t.version = t.version
        RETURN t.nodeId AS id
    """
    return query, gt.params


# Read under the lock, in a statement of its own, so it sees what the last writer committed.
READ_LOCKED = f"MATCH (t:{TASK}:Node {{nodeId: $id}}) RETURN t.phase AS phase, t.version AS version, t.seq AS seq"

SET_TASK = f"MATCH (t:{TASK}:Node {{nodeId: $id}}) SET t += $props, t.updatedAt = $now"


def link_produced(caller: Caller, community: bool = False) -> tuple[str, dict[str, Any]]:
    """PRODUCED edges from the task to nodes the caller can read; the count says how many were found."""
    gp = _guard(caller, "p", community)
    query = f"""
        MATCH (t:{TASK}:Node {{nodeId: $id}})
        UNWIND $ids AS pid
        MATCH (p:Node {{nodeId: pid}}) WHERE {gp.clause}
        MERGE (t)-[:PRODUCED]->(p)
        RETURN count(p) AS n
    """
    return query, gp.params


def list_tasks(caller: Caller, community: bool = False) -> tuple[str, dict[str, Any]]:
    gt = _guard(caller, "t", community)
    fields = ", ".join(f".{f}" for f in LIST_FIELDS)
    query = f"""
        MATCH (t:{TASK}) WHERE {gt.clause} AND t.protocol = true AND ($phase IS NULL OR t.phase = $phase)
        WITH t ORDER BY t.updatedAt DESC, t.nodeId LIMIT $limit
        RETURN t {{{fields}}} AS task
    """
    return query, gt.params


def task_events(caller: Caller, community: bool = False) -> tuple[str, dict[str, Any]]:
    """The task's events (an empty list for a task without visible events; no row for no task)."""
    gt, gc = _guards(caller, community)
    query = f"""
        MATCH (t:{TASK}:Node {{nodeId: $id}}) WHERE {gt.clause} AND t.protocol = true
        RETURN COLLECT {{ MATCH (t)-[:{HAS_EVENT}]->(c:{EVENT}) WHERE {gc.clause} RETURN properties(c) }} AS events
    """
    return query, {**gt.params, **gc.params}
