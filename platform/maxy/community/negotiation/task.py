"""A negotiation's task in the task store (``maxy.taskstore``): created with a complete spec and
run as one attempt while the negotiation lasts; its outcome is that attempt's artifact, and the
task then passes its gates to ``completed``.

The task and its records are the community's (``TaskStore(community=True)``): only the negotiation
reads them; every other task-store, task or search read answers as if they did not exist.

The negotiation acts in each of the store's roles in turn (orchestrator, executor, the two
reviewers), each through the store's own rules and event log. Every step reads the task first
and does only what is still missing, so a run stopped half-way is finished by the next one and
nothing is recorded twice.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ...accounts import ValidatedAccount
from ...db import Database
from ...graph.allowlist import COMMUNITY_RECORD
from ...graph.guards import Caller, node_guard
from ...taskstore import TaskConflict, TaskStore
from ...taskstore.events import dumps
from .turns import Outcome

KIND = "negotiation"
RUNTIME = "negotiation"
ACTOR = "negotiation"
ARTIFACT_KIND = "negotiation-outcome"
ARTIFACT_NAME = "negotiation outcome"


def _spec(opportunity_id: str, source: str, candidate: str) -> dict[str, Any]:
    return {
        "goal": f"Decide whether the match between members {source} and {candidate} serves both "
        f"(opportunity {opportunity_id})",
        "scope_in": ["the turns of the two members' negotiators"],
        "scope_out": ["re-scoring the opportunity"],
        "inputs": ["the evaluator's seed assessment", "both members' profiles"],
        "outputs": [ARTIFACT_NAME],
        "acceptance_criteria": [f"the {ARTIFACT_NAME} names hasOpportunity, agreedRoles, reasoning and turnCount"],
        "risks": ["a personal agent never answers: the system negotiator takes its turn after 24 hours"],
    }


class NegotiationTask:
    def __init__(self, db: Database, caller: Caller, account: ValidatedAccount):
        self._stores = {
            role: TaskStore(db, caller, account, role, actor=ACTOR, community=True)
            for role in ("orchestrator", "executor", "spec_reviewer", "quality_reviewer")
        }

    def _move(self, task: dict[str, Any], to: str, **extra: Any) -> dict[str, Any]:
        orchestrator = self._stores["orchestrator"]
        try:
            orchestrator.transition(
                task["taskId"], to, expected_phase=task["phase"], expected_version=task["version"], **extra
            )
        except TaskConflict:
            pass  # another run made this move: read the task again
        return orchestrator.get(task["taskId"])

    def _existing(self, negotiation_id: str) -> str | None:
        """The task already made for this negotiation (a start stopped half-way), if any."""
        store = self._stores["orchestrator"]
        guard = node_guard(store.caller, "t")
        rows = store.db.read(
            f"MATCH (t:Task:{COMMUNITY_RECORD} {{kind: $kind, externalRef: $ref}}) WHERE {guard.clause} "
            "RETURN t.nodeId AS id ORDER BY t.createdAt LIMIT 1",
            kind=KIND,
            ref=dumps({"negotiation": negotiation_id}),
            **guard.params,
        )
        return rows[0]["id"] if rows else None

    def start(self, negotiation_id: str, opportunity_id: str, source: str, candidate: str) -> tuple[str, str]:
        """The negotiation's task, moved to executing: (taskId, attemptId). A task already made
        for the negotiation is taken up where it stopped, so a retried start leaves no orphan."""
        store = self._stores["orchestrator"]
        task_id = self._existing(negotiation_id)
        if task_id is None:
            task_id = store.create(
                _spec(opportunity_id, source, candidate),
                title=f"Negotiation {negotiation_id[:8]}: {source} and {candidate}",
                kind=KIND,
                external_ref={"negotiation": negotiation_id},
            )["taskId"]
        task = store.get(task_id)
        if task["phase"] == "spec_draft":
            task = self._move(task, "spec_review")
        if task["phase"] == "spec_review":
            if not any(r["gate"] == "spec_review" and r["verdict"] == "approved" for r in task["reviews"]):
                self._stores["spec_reviewer"].append_review(task_id, "spec_review", "approved", [], [])
            task = self._move(store.get(task_id), "execution_ready")
        if task["phase"] == "execution_ready":
            task = self._move(task, "executing", runtime=RUNTIME)
        return task["taskId"], str(task["currentAttemptId"])

    def progress(self, task_id: str, attempt_id: str, checkpoint: dict[str, Any]) -> None:
        """Record where the negotiation is (a heartbeat with a checkpoint of the running attempt)."""
        self._stores["executor"].heartbeat(task_id, attempt_id, checkpoint)

    def finish(self, task_id: str, attempt_id: str, negotiation_node_id: str, outcome: Outcome) -> dict[str, Any]:
        """The outcome as the attempt's artifact, then the gates to ``completed`` (each step once)."""
        store = self._stores["orchestrator"]
        task = store.get(task_id)
        digest = "sha256:" + hashlib.sha256(json.dumps(outcome.as_dict(), sort_keys=True).encode()).hexdigest()
        if task["phase"] == "executing":
            if not any(a["kind"] == ARTIFACT_KIND for a in task["artifacts"]):
                self._stores["executor"].add_artifact(
                    task_id, attempt_id, ARTIFACT_NAME, negotiation_node_id, kind=ARTIFACT_KIND, digest=digest
                )
            attempt = next(a for a in task["attempts"] if a["attemptId"] == attempt_id)
            if attempt["status"] == "running":
                self._stores["executor"].finish_attempt(task_id, attempt_id, "succeeded")
            task = self._move(store.get(task_id), "spec_gate")
        for gate, reviewer, after in (
            ("spec_gate", "spec_reviewer", "quality_gate"),
            ("quality_gate", "quality_reviewer", "completed"),
        ):
            if task["phase"] == gate:
                if not any(r["gate"] == gate and r["verdict"] == "approved" for r in task["reviews"]):
                    refs = [a["artifactId"] for a in task["artifacts"] if a["kind"] == ARTIFACT_KIND]
                    self._stores[reviewer].append_review(task_id, gate, "approved", [], refs)
                task = self._move(store.get(task_id), after)
        return task
