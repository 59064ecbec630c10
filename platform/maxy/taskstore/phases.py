"""The phases of a protocol task and the one table of moves between them.

Only the orchestrator moves a task (``task_transition``); what each move additionally requires
(a complete spec, an approved review, a failed attempt the policy retries ...) is checked by
:mod:`maxy.taskstore.transitions`. The existing Task ``status`` follows the phase, so the
console's Tasks page and ``maxy audit tasks`` read protocol tasks like any other.
"""

from __future__ import annotations

from ..errors import ValidationError

PHASES: tuple[str, ...] = (
    "spec_draft",
    "spec_review",
    "execution_ready",
    "executing",
    "retrying",
    "spec_gate",
    "quality_gate",
    "awaiting_approval",
    "ready_to_resume",
    "completed",
    "failed",
    "circuit_open",
)

TRANSITIONS: dict[str, tuple[str, ...]] = {
    "spec_draft": ("spec_review",),
    "spec_review": ("spec_draft", "execution_ready"),
    "execution_ready": ("executing",),
    "executing": ("spec_gate", "retrying", "circuit_open"),
    "retrying": ("executing",),
    "spec_gate": ("quality_gate", "execution_ready", "circuit_open"),
    "quality_gate": ("completed", "execution_ready", "awaiting_approval"),
    "awaiting_approval": ("ready_to_resume", "failed"),
    "ready_to_resume": ("completed",),
    "completed": (),
    "failed": (),
    "circuit_open": ("spec_draft", "failed"),
}

FINISHED: frozenset[str] = frozenset(p for p, targets in TRANSITIONS.items() if not targets)
# Phases a task reaches only with a complete spec: everything from execution_ready on.
EXECUTION_PHASES: frozenset[str] = frozenset(
    {"execution_ready", "executing", "retrying", "spec_gate", "quality_gate", "awaiting_approval", "ready_to_resume"}
)
# The spec may be replaced only before it is reviewed for execution.
SPEC_EDIT_PHASES: frozenset[str] = frozenset({"spec_draft", "spec_review"})

STATUS_OF_PHASE: dict[str, str] = {
    **{p: "running" for p in PHASES},
    "awaiting_approval": "waiting",
    "circuit_open": "blocked",
    "completed": "completed",
    "failed": "failed",
}


def allowed(from_phase: str, to_phase: str) -> bool:
    """True when the table has the move ``from_phase -> to_phase``."""
    return to_phase in TRANSITIONS.get(from_phase, ())


def check_phase(value: object, field: str = "phase") -> str:
    if not isinstance(value, str) or value not in TRANSITIONS:
        raise ValidationError(field, f"one of {', '.join(PHASES)} (got {value!r})")
    return value
