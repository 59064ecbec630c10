"""What a plugin's code sees: the tool decorator and the per-process ToolContext.

A plugin is a Python package with a ``PLUGIN.md`` manifest beside its ``__init__.py``,
registered in the ``maxy.plugins`` entry-point group (first-party plugins the same way as
third-party ones). Its modules call :func:`tool` on plain functions (a tool declared in any
submodule of the package belongs to the package):

    @tool("memory-get", title="Read nodes by id", description="...", output=GetResult, read_only=True)
    def memory_get(ctx: ToolContext, nodeIds: Annotated[list[str], Field(description="...")]) -> dict: ...

The platform builds the MCP server from the functions and the manifest (eager ``_meta``,
allow-lists, annotations), pins account/scope/agent/session from the environment, and
records an audit ToolCall for every admin call. A tool raises :class:`ToolError` (or a
``MaxyError``) for bad input; the client then gets ``isError`` with the message.

The contract an MCP client sees comes from the function: each parameter's type, with its
``Field(description=..., ge=..., le=...)`` and ``Literal`` enums, is the input schema (titles
are derived from the names when not given). ``output`` (a :class:`ToolOutput` model) is the
output schema: the tool returns the data (a dict), or :class:`Rendered` text carrying it, and
the client gets the text as a content block and the data as ``structuredContent``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from ..accounts import ValidatedAccount
from ..config import Settings
from ..db import Database
from ..embeddings.base import Embedder
from ..errors import MaxyError
from ..graph.guards import Caller
from ..graph.write import GraphWriter
from ..identifiers import unknown_member

Role = Literal["admin", "public"]
ROLES: tuple[Role, ...] = ("admin", "public")

# Tool arguments that would name an account, scope, agent or session: when the environment
# pins one, an argument trying to set it is refused (see ToolContext.refuse_widening).
PINNED_ARGUMENTS = {
    "account_id": "ACCOUNT_ID",
    "accountId": "ACCOUNT_ID",
    "allowed_scopes": "ALLOWED_SCOPES",
    "allowedScopes": "ALLOWED_SCOPES",
    "scopes": "ALLOWED_SCOPES",
    "agent_slug": "AGENT_SLUG",
    "agentSlug": "AGENT_SLUG",
    "session_id": "SESSION_ID",
    "sessionId": "SESSION_ID",
    "task_role": "TASK_ROLE",
    "taskRole": "TASK_ROLE",
}
# Tool arguments that name a community member: when MEMBER_ID pins one, any other is refused
# exactly as an unknown member is (maxy.identifiers.unknown_member), so no refusal tells
# a pinned member whether another member exists.
MEMBER_ARGUMENTS = ("memberId", "member_id")
# The plugin whose tools a member's server reaches without a memory view (ToolContext.reaches_memory).
COMMUNITY_PLUGIN = "community"


class ToolError(MaxyError):
    """A tool-level failure the agent can act on; becomes an ``isError`` result."""


_ACRONYMS = {"id": "ID", "ids": "IDs", "iso": "ISO", "url": "URL", "json": "JSON"}


def title_of(name: str, *_: object) -> str:
    """A title people read, from a tool or field name: ``expandHops`` -> "Expand hops",
    ``nodeIds`` -> "Node IDs", ``memory-search`` -> "Memory search"."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("-", " ").replace("_", " ")
    words = [_ACRONYMS.get(w.lower(), w.lower()) for w in spaced.split()]
    return " ".join(words)[:1].upper() + " ".join(words)[1:] if words else name


class ToolOutput(BaseModel):
    """Base of a tool's output model: its JSON schema is the tool's ``outputSchema``. Keys a
    model does not name are allowed (``additionalProperties: true``), so a result can grow."""

    model_config = ConfigDict(extra="allow", field_title_generator=title_of)


class Rendered(str):
    """A tool's answer as the text an agent reads, carrying the same answer as data (the
    ``structuredContent`` of the call). It is a ``str``: Python callers read the text."""

    data: dict[str, Any]

    def __new__(cls, text: str, data: dict[str, Any]) -> Rendered:
        rendered = super().__new__(cls, text)
        rendered.data = data
        return rendered


@dataclass(frozen=True)
class ToolSpec:
    name: str
    fn: Callable[..., Any]
    description: str
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    title: str | None = None  # shown to people; derived from the name when None
    output: type[BaseModel] | None = None  # the output schema; None: text only


_REGISTRY: dict[str, list[ToolSpec]] = {}
_lock = threading.Lock()


def tool(
    name: str,
    *,
    description: str,
    title: str | None = None,
    output: type[BaseModel] | None = None,
    read_only: bool = False,
    destructive: bool = False,
    idempotent: bool = False,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a tool. ``fn(ctx, **arguments)`` returns text (str) or JSON-able data; with
    ``output`` it returns that data (or :class:`Rendered` text carrying it).

    The hints follow MCP's meaning: ``read_only`` never changes anything; ``destructive`` may
    overwrite or remove what is stored (not only add); ``idempotent`` a repeat of the same call
    changes nothing more."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        spec = ToolSpec(name, fn, description.strip(), read_only, destructive, idempotent, title, output)
        module = fn.__module__
        with _lock:
            bucket = _REGISTRY.setdefault(module, [])
            bucket[:] = [s for s in bucket if s.name != name] + [spec]
        fn.__maxy_tool__ = spec  # type: ignore[attr-defined]
        return fn

    return decorate


def tools_of(module_name: str) -> list[ToolSpec]:
    """Tools declared by a plugin package: in the package itself or in any of its submodules
    (``tools``, ``search_tools`` ...), in the order the modules registered them."""
    prefix = module_name + "."
    with _lock:
        return [
            spec
            for module, specs in _REGISTRY.items()
            if module == module_name or module.startswith(prefix)
            for spec in specs
        ]


@dataclass
class ToolContext:
    """Everything a tool needs, fixed at server start from the environment."""

    settings: Settings
    role: Role
    caller: Caller  # account + pinned scopes + pinned agent: use for every read
    account: ValidatedAccount | None  # validated ACCOUNT_ID; writers need it
    embedder: Embedder | None
    session_id: str | None = None  # SESSION_ID: conversation-search is limited to it when set
    session_node_id: str | None = None  # SESSION_NODE_ID: the active Conversation (provenance fallback)
    knowledge_keywords: tuple[str, ...] = ()
    task_role: str | None = None  # TASK_ROLE: what the task store lets this server change; None: reads only
    member_id: str | None = None  # MEMBER_ID: the community member this server acts for; None: every member
    plugin: str = ""
    _db: Database | None = field(default=None, repr=False)

    @classmethod
    def pinned_by(
        cls,
        settings: Settings,
        account: ValidatedAccount,
        *,
        role: Role,
        embedder: Embedder | None,
        db: Database | None = None,
        plugin: str = "",
    ) -> ToolContext:
        """The context the environment's pins give a validated account (what a server builds)."""
        return cls(
            settings=settings,
            role=role,
            caller=Caller.from_settings(settings, account.account_id),
            account=account,
            embedder=embedder,
            session_id=settings.SESSION_ID,
            session_node_id=settings.SESSION_NODE_ID,
            knowledge_keywords=tuple(settings.KNOWLEDGE_KEYWORDS or ()),
            task_role=settings.TASK_ROLE,
            member_id=settings.MEMBER_ID,
            plugin=plugin,
            _db=db,
        )

    @property
    def db(self) -> Database:
        if self._db is None:
            self._db = Database(self.settings)
        return self._db

    @property
    def pinned(self) -> dict[str, object]:
        """The environment's pins (only the ones that are set)."""
        s = self.settings
        pins: dict[str, object] = {"ACCOUNT_ID": self.caller.account_id}
        if s.ALLOWED_SCOPES:
            pins["ALLOWED_SCOPES"] = list(s.ALLOWED_SCOPES)
        if s.AGENT_SLUG:
            pins["AGENT_SLUG"] = s.AGENT_SLUG
        if s.SESSION_ID:
            pins["SESSION_ID"] = s.SESSION_ID
        if self.task_role:
            pins["TASK_ROLE"] = self.task_role
        if self.member_id:
            pins["MEMBER_ID"] = self.member_id
        return pins

    @property
    def reaches_memory(self) -> bool:
        """A member's server is least-privilege: it acts in the community as that member, and
        reaches the account's memory only through the view (scopes, agent) pinned with it."""
        return self.member_id is None or self.caller.pinned

    def refuse_outside_reach(self, plugin: str) -> None:
        """Refuse a tool of another plugin than the community's to a member without a view."""
        if plugin != COMMUNITY_PLUGIN and not self.reaches_memory:
            raise ToolError(
                f"this server acts for community member {self.member_id!r} and holds no memory view: only the "
                f"community tools answer it; give it a view when it is made (maxy mcp key create --member "
                f"{self.member_id} --scopes shared, or ALLOWED_SCOPES beside MEMBER_ID)"
            )

    def refuse_widening(self, arguments: dict[str, Any]) -> None:
        """Refuse any argument that tries to name another account, scope, agent, session, task role
        or member."""
        for arg in MEMBER_ARGUMENTS:
            value = arguments.get(arg)
            if self.member_id is not None and value is not None and value != self.member_id:
                raise unknown_member(value)
        pins = self.pinned
        for arg, env in PINNED_ARGUMENTS.items():
            if arg not in arguments or arguments[arg] is None:
                continue
            value = arguments[arg]
            pinned = pins.get(env)
            if pinned is None and env == "TASK_ROLE":  # no role is a pin too: the one that writes nothing
                raise ToolError(
                    f"{arg}: this server has no task role (TASK_ROLE, or a key's --task-role); "
                    "a tool argument cannot give it one"
                )
            if pinned is None:
                continue
            same = (
                sorted(value) == sorted(pinned)
                if isinstance(pinned, list) and isinstance(value, list)
                else value == pinned
            )
            if not same:
                raise ToolError(f"{arg}: {env} is pinned for this server; a tool argument cannot change it")

    def writer(self, created_by: str | None = None) -> GraphWriter:
        if self.role != "admin":
            raise ToolError("this server is read-only (public role): writes are not available")
        if self.account is None:
            raise ToolError("ACCOUNT_ID was not validated at start: writes are not available")
        return GraphWriter(
            self.db,
            self.account,
            self.embedder,
            caller=self.caller,  # writes stay inside the view the pins give this server
            created_by=created_by or f"agent:{self.plugin or 'mcp'}",
        )
