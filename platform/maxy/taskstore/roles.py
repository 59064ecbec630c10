"""Who may change what: one table, least privilege.

Every role reads. Only the orchestrator moves a task between phases; executors record their
attempts, artifacts, checkpoints and planned side effects; reviewers record findings and
verdicts (evidence, never a phase change); the approver decides approvals and replays
approved side effects. ``operator`` is the command line's role: the orchestrator's rights
plus the approver's, recorded as ``actorRole=operator``. A process without a task role
reads only.
"""

from __future__ import annotations

from ..errors import ValidationError

TASK_ROLES: tuple[str, ...] = ("orchestrator", "executor", "spec_reviewer", "quality_reviewer", "approver")
OPERATOR = "operator"
ALL_ROLES: tuple[str, ...] = (*TASK_ROLES, OPERATOR)
OPERATOR_RIGHTS: frozenset[str] = frozenset({"orchestrator", "approver"})

NO_ROLE = (
    "no task role: start the server with TASK_ROLE=<role> or use a key created with --task-role "
    f"(one of {', '.join(TASK_ROLES)}); without one the task tools only read"
)

# operation -> (the roles that may, the rule a refusal names)
PERMISSIONS: dict[str, tuple[tuple[str, ...], str]] = {
    "task_create": (("orchestrator",), "the orchestrator creates tasks"),
    "task_update_spec": (("orchestrator",), "the orchestrator owns the spec"),
    "task_transition": (
        ("orchestrator",),
        "only the orchestrator moves a task between phases; executors and reviewers record evidence",
    ),
    "task_link_produced": (("orchestrator",), "the orchestrator records what a task produced"),
    "task_heartbeat": (("executor",), "the executor running an attempt reports its progress"),
    "task_finish_attempt": (("executor",), "the executor running an attempt reports how it ended"),
    "task_add_artifact": (("executor",), "artifacts come from the executor's attempt"),
    "task_plan_side_effect": (("executor",), "the executor declares side effects before they happen"),
    "task_set_external_ref": (("executor",), "the executor records where its attempt runs"),
    "task_append_review:spec_review": (
        ("spec_reviewer",),
        "the spec reviewer judges the spec and the artifact against it; the quality reviewer the quality gate",
    ),
    "task_append_review:spec_gate": (
        ("spec_reviewer",),
        "the spec reviewer judges the spec and the artifact against it; the quality reviewer the quality gate",
    ),
    "task_append_review:quality_gate": (
        ("quality_reviewer",),
        "the quality reviewer judges the quality gate; the spec reviewer the spec gates",
    ),
    "task_decide_approval": (("approver",), "only the approver decides an approval"),
    "task_resume": (("approver", "orchestrator"), "the approver or the orchestrator replays an approved side effect"),
}


def check_role_name(role: object) -> str | None:
    """``role`` when it is a task role (or ``operator``), None for no role; anything else is refused."""
    if role is None:
        return None
    if not isinstance(role, str) or role not in ALL_ROLES:
        raise ValidationError("taskRole", f"one of {', '.join(ALL_ROLES)} (got {role!r}), or none to only read")
    return role


def may(role: str | None, operation: str) -> bool:
    """True when ``role`` may perform ``operation`` (a key of :data:`PERMISSIONS`)."""
    roles = PERMISSIONS[operation][0]
    if role == OPERATOR:
        return bool(OPERATOR_RIGHTS.intersection(roles))
    return role in roles


def allowed_roles(operation: str) -> tuple[str, ...]:
    roles = PERMISSIONS[operation][0]
    return (*roles, OPERATOR) if OPERATOR_RIGHTS.intersection(roles) else roles


def check_role(role: str | None, operation: str) -> None:
    """Refuse ``operation`` for ``role`` with one line naming the role and the rule."""
    if role is None:
        raise ValidationError("taskRole", NO_ROLE)
    if may(role, operation):
        return
    tool, _, gate = operation.partition(":")
    what = f"{tool} with gate {gate}" if gate else tool
    rule = PERMISSIONS[operation][1]
    raise ValidationError("taskRole", f"{role} may not {what}: only {', '.join(allowed_roles(operation))} may; {rule}")
