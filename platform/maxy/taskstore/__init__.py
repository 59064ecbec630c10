"""The task store: protocol tasks with one phase table, least-privilege roles, a retry policy
with a circuit breaker, approvals with replayable side effects, and an event log that rebuilds
every task's state (``docs/tasks.md``)."""

from .events import ReplayError, TaskState, apply, replay
from .phases import PHASES, STATUS_OF_PHASE, TRANSITIONS
from .policy import Decision, RetryPolicy, decide
from .roles import ALL_ROLES, NO_ROLE, OPERATOR, TASK_ROLES, check_role
from .spec import SPEC_FIELDS, Problem, check_spec
from .store import TaskConflict, TaskStore, idempotency_key

__all__ = [
    "ALL_ROLES",
    "NO_ROLE",
    "OPERATOR",
    "PHASES",
    "SPEC_FIELDS",
    "STATUS_OF_PHASE",
    "TASK_ROLES",
    "TRANSITIONS",
    "Decision",
    "Problem",
    "ReplayError",
    "RetryPolicy",
    "TaskConflict",
    "TaskState",
    "TaskStore",
    "apply",
    "check_role",
    "check_spec",
    "decide",
    "idempotency_key",
    "replay",
]
