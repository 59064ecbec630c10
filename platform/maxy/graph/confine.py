"""What a writer may change: its own view, and nothing outside it.

A caller pinned to scopes and/or an agent slug (a public agent's slug, an admin key limited to
some scopes) writes only inside the view it reads:

- a node it updates, links to, deletes or replaces must be one it can read (the guard
  clauses); a node that does not exist and one it may not see get the same refusal, so no
  answer tells it that a hidden id exists;
- a node it creates, or whose scope or agents it changes, stays confined: the scope is one of
  the pinned scopes and, under an agent pin, the agents are exactly that slug. It can neither
  push a node out of its view nor plant one in a view it does not hold;
- ids derived from natural keys (a document's attachmentId, a report's title and minute, a
  session) include the view, so a pinned writer never lands on a node of a wider view.

An unpinned caller sees the whole account, and writes there as before.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import GraphWriteError, ValidationError
from .guards import Caller

# The most private scope first: a pinned writer's new node defaults to the most private scope it holds.
SCOPE_PRIVACY = ("admin", "shared", "public")

Visibility = tuple[str | None, list[str] | None]


def not_writable(field: str, node_id: object, what: str = "node") -> GraphWriteError:
    """The one refusal for a target that is absent, deleted, hidden or in another account."""
    return GraphWriteError("not-writable", f"{field}: no {what} {node_id!r} that you can write; nothing was written")


def id_root(caller: Caller) -> str:
    """The prefix of ids derived from natural keys: the account, plus the view when pinned."""
    key = caller.view_key
    return caller.account_id if key is None else f"{caller.account_id}\x1f{key}"


def _agents(agents: Sequence[str] | None) -> list[str] | None:
    return None if agents is None else sorted(set(agents))


def default_visibility(caller: Caller, scope: str | None, agents: Sequence[str] | None) -> Visibility:
    """Scope and agents of a node being created: a pinned caller's own view unless it says otherwise."""
    if scope is None and caller.allowed_scopes is not None:
        scope = next(s for s in SCOPE_PRIVACY if s in caller.allowed_scopes)
    if agents is None and caller.agent_slug is not None:
        agents = [caller.agent_slug]
    return scope, _agents(agents)


def record_scope(caller: Caller) -> str | None:
    """The scope of the admin's own records (reports, tasks, session conversations): ``admin``,
    or a pinned view's default scope so the record stays in that view."""
    return default_visibility(caller, None, None)[0] if caller.pinned else "admin"


def _breach(caller: Caller, scope: str | None, agents: Sequence[str] | None) -> ValidationError | None:
    """Why a node with this scope and these agents would be seen by a view the caller does not hold."""
    if caller.allowed_scopes is not None and scope not in caller.allowed_scopes:
        return ValidationError(
            "scope",
            f"{scope!r} is outside this server's pinned scopes {list(caller.allowed_scopes)}; "
            "use one of them (or omit scope); nothing was written",
        )
    if caller.agent_slug is not None and _agents(agents) != [caller.agent_slug]:
        return ValidationError(
            "agents",
            f"this server is pinned to agent {caller.agent_slug!r}: a node it writes is tagged "
            f"[{caller.agent_slug!r}] only (omit agents); nothing was written",
        )
    return None


def is_confined(caller: Caller, scope: str | None, agents: Sequence[str] | None) -> bool:
    """True when a node with this scope and these agents is seen by no view the caller does not hold."""
    return _breach(caller, scope, agents) is None


def check_confined(caller: Caller, scope: str | None, agents: Sequence[str] | None, at: str = "") -> None:
    breach = _breach(caller, scope, agents)
    if breach is not None:
        raise ValidationError(f"{at}{breach.field}", breach.reason)


def resolve_update(
    caller: Caller, old: Visibility, scope: str | None, agents: Sequence[str] | None, at: str = ""
) -> None:
    """Refuse an update whose scope or agents (None: keep) would move a node across the view's border."""
    old_scope, old_agents = old[0], _agents(old[1])
    new_scope = old_scope if scope is None else scope
    new_agents = old_agents if agents is None else _agents(agents)
    if (new_scope, new_agents) == (old_scope, old_agents) or not caller.pinned:
        return
    if not is_confined(caller, old_scope, old_agents):
        raise ValidationError(
            f"{at}scope" if new_scope != old_scope else f"{at}agents",
            "this node is also visible outside this server's pinned view, so its scope and agents "
            "cannot be changed from here (an unpinned admin can); nothing was written",
        )
    check_confined(caller, new_scope, new_agents, at)
