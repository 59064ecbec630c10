"""``create_mcp_server(plugins, role, ctx_factory)``: an MCP SDK ``MCPServer`` for plugins.

- role ``admin`` registers every tool whose manifest says ``adminAllowlist``; role ``public``
  only ``publicAllowlist`` tools, and refuses to start if one of them is not read-only;
- eager tools carry ``_meta: {"anthropic/alwaysLoad": true}`` in tools/list; every tool
  carries a title and readOnly/destructive/idempotent annotations; the input schema is the
  function's signature without its ``ctx`` parameter (the SDK builds it; field titles are
  derived from the names when the tool gives none);
- a tool that declares an ``output`` model lists it as its ``outputSchema`` and answers with a
  text block plus the same answer as ``structuredContent`` (checked against the schema); the
  trace events an answer carries (its ``trace`` list) are in the result's ``_meta`` under
  ``maxy/trace`` as well;
- the prompts a plugin's manifest lists are served as MCP prompts (prompts/list, prompts/get
  returning the file's text) by every role's server that registers one of its tools;
- the server's ``instructions`` say which tool is for what, how search relevance reads and
  what the pins mean (:func:`server_instructions`);
- each call gets the pinned ToolContext from ``ctx_factory(plugin, headers)``, is refused if
  an argument tries to widen a pin, runs the sync tool function in a worker thread, and maps
  ToolError/MaxyError/validation errors to an ``isError`` result with the message (never a
  traceback); admin calls are audited as ToolCall nodes;
- the boot gate: an allow-listed tool whose plugin declares no ``mcp`` server refuses the
  start with ``boot-failed reason=mcp-allowlist-without-server plugin=<p> tool=<t>``; an admin
  stdio server then runs the specialist tool-drift gate (``maxy.specialists.gate``).
"""

from __future__ import annotations

import contextvars
import inspect
import json
import logging
import re
import sys
import time
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError as SDKToolError
from mcp.server.mcpserver.exceptions import UnexpectedToolError
from mcp.server.mcpserver.prompts import Prompt
from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field
from pydantic import ValidationError as PydanticValidationError
from pydantic.fields import FieldInfo

from .. import __version__
from ..accounts import ValidatedAccount, validate_account_id_env
from ..config import Settings, load_settings
from ..db import Database
from ..errors import ConfigError, MaxyError
from ..logs import log_line, short
from ..plugins.api import PINNED_ARGUMENTS, ROLES, Rendered, Role, ToolContext, ToolError, ToolSpec, title_of
from ..plugins.discovery import LoadedPlugin, PluginPrompt, PluginTool
from ..plugins.manifest import EAGER_META_KEY
from ..spelling import did_you_mean
from ..textcheck import check_clean, printable
from .audit import ToolCallRecord, record_tool_call
from .audit_retention import finish_prunes
from .profiles import ALL, in_profiles, not_served, profile_to_add, split_tools
from .schemas import compact

# (plugin name, request headers or None on stdio) -> the pinned ToolContext for this call
ContextFactory = Callable[[str, Mapping[str, str] | None], ToolContext]
# request headers -> the tool profiles this caller is served (HTTP: its API key's)
RequestProfiles = Callable[[Mapping[str, str] | None], Sequence[str]]

_current_ctx: contextvars.ContextVar[ToolContext | None] = contextvars.ContextVar("maxy_tool_ctx", default=None)
_log = logging.getLogger("maxy.mcp")
TRACE_META_KEY = "maxy/trace"


class BootGateError(MaxyError):
    """An allow-listed tool has no MCP server to be served by: the server must not start."""

    def __init__(self, plugin: str, tool: str, message: str):
        self.plugin = plugin
        self.tool = tool
        super().__init__(message)


class PublicToolNotReadOnly(MaxyError):
    """A publicAllowlist tool that may write: the public server must not start."""


# ---------------------------------------------------------------------------------------
def check_boot_gate(plugins: Sequence[LoadedPlugin]) -> tuple[int, int]:
    """Refuse a plugin set in which an allow-listed tool has no MCP server; (admin-tools, admin-registered)."""
    for plugin in plugins:
        for t in plugin.tools:
            if (t.admin_allowlist or t.public_allowlist) and plugin.mcp_server is None:
                log_line(
                    "mcp",
                    "boot-failed",
                    level=logging.ERROR,
                    reason="mcp-allowlist-without-server",
                    plugin=plugin.name,
                    tool=t.name,
                )
                where = plugin.manifest.path or f"{plugin.module}/PLUGIN.md"
                raise BootGateError(
                    plugin.name,
                    t.name,
                    f"tool {t.name!r} of plugin {plugin.name!r} is allow-listed but the plugin declares no MCP "
                    f"server: add `mcp: {{server: {plugin.name}}}` to {where}",
                )
    admin = [t for p in plugins for t in p.tools if t.admin_allowlist]
    return len(admin), sum(1 for t in admin if _plugin_of(plugins, t).mcp_server is not None)


def _plugin_of(plugins: Sequence[LoadedPlugin], tool: PluginTool) -> LoadedPlugin:
    return next(p for p in plugins if p.name == tool.plugin)


def tools_for_role(plugins: Sequence[LoadedPlugin], role: Role) -> list[PluginTool]:
    if role not in ROLES:
        raise ConfigError(f"role must be one of {list(ROLES)}, got {role!r}")
    if role == "admin":
        return [t for p in plugins for t in p.tools if t.admin_allowlist]
    chosen = []
    for p in plugins:
        for t in p.tools:
            if not t.public_allowlist:
                continue
            if not t.read_only:
                log_line(
                    "mcp",
                    "boot-failed",
                    level=logging.ERROR,
                    reason="public-tool-not-read-only",
                    plugin=p.name,
                    tool=t.name,
                )
                raise PublicToolNotReadOnly(
                    f"tool {t.name!r} of plugin {p.name!r} is on the publicAllowlist but is not read-only: "
                    "public agents never write; remove it from the publicAllowlist or make it readOnly"
                )
            chosen.append(t)
    return chosen


# ---------------------------------------------------------------------------------------
def _error_result(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def _pydantic_text(err: PydanticValidationError, tool: str, schema: Mapping[str, Any] | None = None) -> str:
    """One line naming each bad field the way the tools do (``labels[0]: unknown value ...``);
    the alternatives of a union (``1-5 or a name``) are joined with "or"."""
    reasons: dict[str, list[str]] = {}
    for e in err.errors():
        path = [x for x in e.get("loc", ()) if not _is_union_tag(x)]
        where = "".join(f"[{x}]" if isinstance(x, int) else f".{x}" for x in path).lstrip(".") or "arguments"
        reason = _reason(e, _subschema(schema, path))
        if reason not in reasons.setdefault(where, []):
            reasons[where].append(reason)
    return f"invalid arguments for {tool}: " + "; ".join(f"{w}: {' or '.join(r)}" for w, r in reasons.items())


def _is_union_tag(part: object) -> bool:
    """pydantic names the branch of a union in an error's location (``constrained-int``,
    ``literal['a','b']``, ``list[str]``): not a field, so not shown."""
    return isinstance(part, str) and (bool(re.search(r"[\[\]'\-]", part)) or part in _TYPE_TAGS)


_TYPE_TAGS = {"int", "str", "float", "bool", "list", "dict", "none", "is-instance"}


def _subschema(schema: Mapping[str, Any] | None, path: Sequence[object]) -> Mapping[str, Any]:
    """The JSON schema of the value at ``path`` inside an input schema ({} when unknown)."""
    node: Any = schema or {}
    for part in path:
        branches = [b for b in node.get("anyOf", [node]) if b.get("type") != "null"]
        node = branches[0] if len(branches) == 1 else node
        if isinstance(part, int):
            node = node.get("items", {})
        else:
            node = node.get("properties", {}).get(part, {})
        ref = node.get("$ref") if isinstance(node, Mapping) else None
        if isinstance(ref, str) and schema is not None:
            node = schema.get("$defs", {}).get(ref.rsplit("/", 1)[-1], {})
    branches = [b for b in node.get("anyOf", [node]) if isinstance(b, Mapping) and b.get("type") != "null"]
    return branches[0] if len(branches) == 1 else node


def _got(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return f" (got {text})" if len(text) <= 80 else ""


def _reason(e: Mapping[str, Any], field: Mapping[str, Any]) -> str:
    """The house wording for the errors an input schema's enums and bounds raise; pydantic's
    own message for the rest (``Field required``, ``Input should be a valid integer`` ...)."""
    kind, ctx, value = e.get("type"), e.get("ctx") or {}, e.get("input")
    if kind == "literal_error":
        allowed = [v.strip("'") for v in re.split(r", | or ", str(ctx.get("expected", "")))]  # "'a', 'b' or 'c'"
        hint = did_you_mean(value, allowed) if isinstance(value, str) else ""
        return f"unknown value {value!r}; {hint + ' ' if hint else ''}allowed: {', '.join(allowed)}"
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        field = next((b for b in field.get("anyOf", [field]) if "minimum" in b or "maximum" in b), field)
        low, high = field.get("minimum"), field.get("maximum")
        if low is not None and high is not None and field.get("type") == "integer":
            return f"an integer from {low} to {high}{_got(value)}"
        return f"{e.get('msg', 'out of range')}{_got(value)}"
    if kind == "string_too_long":
        return f"at most {ctx.get('max_length', 0):,} characters (got {len(str(value)):,})"
    if kind == "string_too_short" and ctx.get("min_length") == 1:
        return "must not be empty"
    if kind == "too_long":
        return f"at most {ctx.get('max_length')} items (got {ctx.get('actual_length')})"
    if kind == "too_short":
        return f"at least {ctx.get('min_length')} item(s)"
    return str(e.get("msg", "invalid"))


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return "ok"
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _result_text(result: CallToolResult) -> str:
    return "\n".join(getattr(block, "text", f"[{getattr(block, 'type', 'content')}]") for block in result.content)


def _public_signature(spec: ToolSpec) -> inspect.Signature:
    """The tool function's signature without its leading ``ctx`` parameter, annotations resolved,
    each parameter titled (its own title, else one derived from its name), and the return
    annotation the SDK reads the output schema from."""
    if inspect.iscoroutinefunction(spec.fn):
        raise ConfigError(f"tool {spec.name!r}: {spec.fn.__qualname__} must be a plain (sync) function")
    try:
        hints = typing.get_type_hints(spec.fn, include_extras=True)
    except Exception as err:  # noqa: BLE001 - a name only imported under TYPE_CHECKING, a typo ...
        raise ConfigError(
            f"tool {spec.name!r}: cannot resolve the type annotations of {spec.fn.__qualname__} ({err})"
        ) from None
    params = list(inspect.signature(spec.fn).parameters.values())
    if not params or params[0].kind not in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
        raise ConfigError(
            f"tool {spec.name!r}: {spec.fn.__qualname__} must take the ToolContext as its first parameter"
        )
    public = []
    for p in params[1:]:
        if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise ConfigError(f"tool {spec.name!r}: *args/**kwargs cannot be described as an input schema")
        annotation = _titled(hints.get(p.name, p.annotation), p.name)
        public.append(p.replace(annotation=annotation, kind=inspect.Parameter.KEYWORD_ONLY))
    returns: Any = Annotated[CallToolResult, spec.output] if spec.output is not None else str
    return inspect.Signature(public, return_annotation=returns)


def _titled(annotation: Any, name: str) -> Any:
    """``annotation`` with a title, unless its own Field already has one."""
    if annotation is inspect.Parameter.empty:
        return annotation
    extras = typing.get_args(annotation)[1:] if typing.get_origin(annotation) is Annotated else ()
    if any(isinstance(x, FieldInfo) and x.title for x in extras):
        return annotation
    return Annotated[annotation, Field(title=title_of(name))]


def _structured(spec: ToolSpec, value: Any) -> CallToolResult:
    """A declared-output tool's answer: the text block (its Rendered text, else the data as
    JSON) and the data as structuredContent; the trace events the answer carries (a non-empty
    ``trace`` list) are in the result's ``_meta`` too, under ``maxy/trace``."""
    data: Mapping[str, Any]
    if isinstance(value, Rendered):
        text, data = str(value), value.data
    elif isinstance(value, Mapping):
        text, data = _as_text(value), value
    else:
        raise TypeError(f"{spec.name} declares an output schema but returned {type(value).__name__}")
    structured = json.loads(json.dumps(data, ensure_ascii=False, default=str))
    events = structured.get("trace")
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=structured,
        _meta={TRACE_META_KEY: events} if isinstance(events, list) and events else None,
    )


def _printable(result: CallToolResult) -> CallToolResult:
    """The result with every lone surrogate replaced (U+FFFD), so a string stored before the
    boundary checks, or read from a file, never breaks the reply or the audit record."""
    content = [
        block.model_copy(update={"text": printable(block.text)}) if isinstance(block, TextContent) else block
        for block in result.content
    ]
    structured = printable(result.structured_content) if result.structured_content is not None else None
    meta = printable(result.meta) if result.meta is not None else None
    return result.model_copy(update={"content": content, "structured_content": structured, "meta": meta})


def _handler(tool: PluginTool) -> Callable[..., Any]:
    """The function the SDK registers: sync (so the SDK runs it in a worker thread)."""
    spec = tool.spec

    def handler(**arguments: Any) -> Any:
        ctx = _current_ctx.get()
        if ctx is None:  # only reachable if someone calls the SDK's call path around ours
            return _error_result(f"{spec.name}: no pinned context for this call")
        try:
            value = spec.fn(ctx, **arguments)
        except MaxyError as err:
            return _error_result(str(err))
        except PydanticValidationError as err:
            return _error_result(_pydantic_text(err, spec.name))
        return _structured(spec, value) if spec.output is not None else _as_text(value)

    handler.__name__ = spec.fn.__name__
    handler.__qualname__ = spec.fn.__qualname__
    handler.__doc__ = spec.description
    handler.__signature__ = _public_signature(spec)  # type: ignore[attr-defined]
    return handler


def _sdk_tool(t: PluginTool) -> Tool:
    """The SDK's registration of one plugin tool: titled, annotated, typed both ways."""
    title = t.spec.title or title_of(t.name)
    registered = Tool.from_function(
        _handler(t),
        name=t.name,
        title=title,
        description=t.spec.description,
        annotations=ToolAnnotations(
            title=title,
            read_only_hint=t.read_only,
            destructive_hint=False if t.read_only else t.destructive,
            idempotent_hint=t.idempotent,
            open_world_hint=False,
        ),
        meta={EAGER_META_KEY: True} if t.eager else None,
        structured_output=t.spec.output is not None,
    )
    registered.parameters["title"] = f"{t.name} arguments"  # not the SDK's "<function>Arguments"
    return registered


def _sdk_prompt(p: PluginPrompt) -> Prompt:
    """The SDK's registration of one plugin prompt: no arguments, its file's text as one user message."""

    def text() -> str:
        return p.text

    return Prompt.from_function(text, name=p.name, title=p.title or title_of(p.name), description=p.description)


def prompts_for_tools(plugins: Sequence[LoadedPlugin], tools: Sequence[PluginTool]) -> list[PluginPrompt]:
    """The prompts of the plugins with at least one of ``tools`` registered."""
    served = {t.plugin for t in tools}
    return [prompt for p in plugins if p.name in served for prompt in p.prompts]


class MaxyMCPServer(MCPServer):
    """An MCPServer whose tool calls are pinned, widening-checked, error-mapped and audited."""

    def __init__(
        self,
        name: str,
        *,
        role: Role,
        ctx_factory: ContextFactory,
        tools: Sequence[PluginTool],
        audit: bool = True,
        instructions: str | None = None,
        prompts: Sequence[PluginPrompt] = (),
        profiles: Sequence[str] = (ALL,),
        elsewhere: Mapping[str, str] | None = None,
        request_profiles: RequestProfiles | None = None,
    ):
        _route_sdk_logging()
        registered = [_sdk_tool(t) for t in tools]
        super().__init__(
            name=name,
            title=title_of(name),
            instructions=instructions,
            version=__version__,
            log_level="WARNING",
            tools=registered,
        )
        self.role: Role = role
        self.ctx_factory = ctx_factory
        self.audit = audit and role == "admin"
        self.maxy_tools: dict[str, PluginTool] = {t.name: t for t in tools}
        self._arguments: dict[str, frozenset[str]] = {
            r.name: frozenset(r.parameters.get("properties", {})) for r in registered
        }
        self._schemas: dict[str, dict[str, Any]] = {r.name: r.parameters for r in registered}
        self.profiles = tuple(profiles)
        self.elsewhere: dict[str, str] = dict(elsewhere or {})  # installed, not served: tool -> profile
        self.request_profiles = request_profiles  # narrows what one caller is served (HTTP keys)
        for prompt in prompts:
            self.add_prompt(_sdk_prompt(prompt))

    async def list_tools(self) -> list[Any]:
        """The tools, their schemas compacted (:mod:`maxy.mcp.schemas`; an output schema without
        its descriptions) and the annotations' copy of the title left out (the tool's own title
        is beside it)."""
        listed = []
        for tool in await super().list_tools():
            annotations = tool.annotations.model_copy(update={"title": None}) if tool.annotations else None
            update: dict[str, Any] = {"input_schema": compact(tool.input_schema), "annotations": annotations}
            if tool.output_schema is not None:
                update["output_schema"] = compact(tool.output_schema, descriptions=False)
            listed.append(tool.model_copy(update=update))
        return listed

    async def _handle_list_tools(self, ctx: Any, params: Any) -> Any:
        """tools/list: the caller's profiles' tools, when the caller has its own (an API key's)."""
        listed = await super()._handle_list_tools(ctx, params)
        if self.request_profiles is None:
            return listed
        profiles = self.request_profiles(getattr(getattr(ctx, "request", None), "headers", None))
        tools = [
            t for t in listed.tools if t.name not in self.maxy_tools or in_profiles(self.maxy_tools[t.name], profiles)
        ]
        return listed.model_copy(update={"tools": tools})

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        tool = self.maxy_tools.get(name)
        refused = self._outside_profiles(name, tool, context)
        if refused is not None:
            profile, served = refused
            log_line("mcp", "tool-not-served", tool=name, profile=profile, served=",".join(served))
            return _error_result(not_served(name, profile, served))
        if tool is None:
            return await super().call_tool(name, arguments, context)
        started = datetime.now(UTC)
        t0 = time.perf_counter()
        ctx: ToolContext | None = None
        try:
            ctx = self.ctx_factory(tool.plugin, _headers(context))
            ctx.refuse_outside_reach(tool.plugin)
            ctx.refuse_widening(arguments)
            self._refuse_unknown(name, arguments)
            check_clean(arguments)
            token = _current_ctx.set(ctx)
            try:
                result = await super().call_tool(name, arguments, context)
            finally:
                _current_ctx.reset(token)
        except UnexpectedToolError as exc:
            cause = exc.__cause__ or exc
            log_line(
                "mcp", "tool-crash", level=logging.ERROR, tool=name, plugin=tool.plugin, error=type(cause).__name__
            )
            _log.error("[mcp] tool-crash traceback (not sent to the client)", exc_info=cause)
            result = _error_result(
                f"{name} failed unexpectedly ({type(cause).__name__}); the server log has the details"
            )
        except SDKToolError as exc:
            invalid = exc.__cause__
            text = (
                _pydantic_text(invalid, name, self._schemas.get(name))
                if isinstance(invalid, PydanticValidationError)
                else str(exc)
            )
            result = _error_result(text)
        except MaxyError as exc:
            result = _error_result(str(exc))
        if not isinstance(result, CallToolResult):  # e.g. an input-required round: pass through
            return result
        result = _printable(result)
        completed = datetime.now(UTC)
        log_line(
            "mcp",
            "tool-call",
            tool=name,
            plugin=tool.plugin,
            role=self.role,
            is_error=bool(result.is_error),
            ms=round((time.perf_counter() - t0) * 1000),
        )
        if self.audit and ctx is not None:
            record = ToolCallRecord(
                name,
                tool.plugin,
                printable(dict(arguments)),
                _result_text(result),
                bool(result.is_error),
                started,
                completed,
            )
            await anyio.to_thread.run_sync(record_tool_call, ctx, record)
        return result

    def _outside_profiles(self, name: str, tool: PluginTool | None, context: Any) -> tuple[str, tuple[str, ...]] | None:
        """(the profile that adds it, the profiles served) for an installed tool this caller is
        not served: one of another profile than the server's, or than the caller's key's."""
        if tool is None:
            return (self.elsewhere[name], self.profiles) if name in self.elsewhere else None
        if self.request_profiles is None:
            return None
        profiles = tuple(self.request_profiles(_headers(context)))
        return None if in_profiles(tool, profiles) else (profile_to_add(tool), profiles)

    def _refuse_unknown(self, name: str, arguments: dict[str, Any]) -> None:
        """An argument the tool does not take is a mistake the agent should hear about (a pinned
        name repeating its pinned value is tolerated: refuse_widening has already checked it)."""
        unknown = sorted(set(arguments) - self._arguments[name] - set(PINNED_ARGUMENTS))
        if unknown:
            expected = ", ".join(sorted(self._arguments[name])) or "none"
            raise ToolError(f"{unknown[0]}: unknown argument for {name} (arguments: {expected})")


def _headers(context: Any) -> Mapping[str, str] | None:
    if context is None:
        return None
    try:
        return context.headers
    except Exception:  # noqa: BLE001 - no request context (direct calls): treat as stdio
        return None


_RELEVANCE = """\
Each search hit carries `relevance`: the probability, from 0 to 1, that it is relevant to the \
query (of hits shown 0.6, about six in ten are), never higher than the hit above it. When \
nothing is close the answer is "No relevant results" with the nearest miss."""

_PINS = """\
This server acts for one account and may be pinned to scopes, an agent, a session and a task \
role; every read and write stays inside that view, an argument cannot widen it, and what you \
cannot see answers like what does not exist. Bad input is refused in one line, `field: reason`, \
before anything is written."""

_NEGOTIATION_GUIDE = """\
Negotiation turn mode: when you run in the background to take a member's turn in a negotiation \
(your session id starts with `negotiation:`, or you were started by the pickup of \
`POST /api/agents/<id>/negotiations/pickup`), read the negotiation with get_negotiation and your \
member's profile and intents, then answer once with respond_to_negotiation. Produce no output for \
a person (nobody is reading), ask no clarifying question (nobody can answer), and when the decision \
is unclear take the conservative action: counter naming the specific objections, or reject with \
clear reasoning. Accept only a match that genuinely serves your member."""

# (tools that must all be served, the sentence that names them)
_USES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("memory-search",), "memory-search finds people, facts, documents' passages and notes by meaning and by words."),
    (("memory-get",), "memory-get reads nodes by id (from the hits) with their neighbours."),
    (("conversation-search",), "conversation-search finds past conversation messages."),
    (
        ("memory-write",),
        "memory-write stores one entity or fact per call; a name you already have merges into that "
        "entity, and `supersede` replaces an earlier fact while keeping it as history.",
    ),
    (
        ("work-create", "work-complete", "memory-write"),
        "A durable action is a Task: work-create, then memory-write with producedByTaskId, then work-complete.",
    ),
    (("memory-report-write",), "memory-report-write keeps a workflow's output as a report."),
    (("session-compact",), "session-compact stores the briefing when the context is compacted."),
)


def server_instructions(tools: Sequence[PluginTool], role: Role) -> str:
    """The server's ``instructions``, short: what it is, what its tools are for (naming only
    the tools it serves), how relevance reads, what the pins mean."""
    names = {t.name for t in tools}
    first = (
        "Maxy is a knowledge-graph memory: people, organisations, facts, documents, conversations "
        "and reports, searched by meaning and by words."
    )
    if role == "public":
        first += " This server is read-only (public role): it searches and reads, never writes."
    uses = " ".join(sentence for needs, sentence in _USES if names.issuperset(needs))
    parts = [first + (" " + uses if uses else "")]
    if names & {"memory-search", "conversation-search"}:
        parts.append(_RELEVANCE)
    if "respond_to_negotiation" in names:
        parts.append(_NEGOTIATION_GUIDE)
    parts.append(_PINS)
    return "\n\n".join(parts)


def create_mcp_server(
    plugins: Sequence[LoadedPlugin],
    role: Role,
    ctx_factory: ContextFactory,
    *,
    name: str | None = None,
    audit: bool = True,
    profiles: Sequence[str] = (ALL,),
    request_profiles: RequestProfiles | None = None,
) -> MaxyMCPServer:
    """The MCP server for ``plugins`` in ``role``, listing the tools of ``profiles``
    (:mod:`maxy.mcp.profiles`; the role's other tools answer with the profile that adds them);
    raises BootGateError / PublicToolNotReadOnly."""
    admin_tools, admin_registrable = check_boot_gate(plugins)
    tools, elsewhere = split_tools(tools_for_role(plugins, role), profiles)
    servers = sorted({p.mcp_server for p in plugins if p.mcp_server})
    server_name = name or ("maxy-" + "-".join(servers) if servers else "maxy")
    prompts = prompts_for_tools(plugins, tools)
    server = MaxyMCPServer(
        server_name,
        role=role,
        ctx_factory=ctx_factory,
        tools=tools,
        audit=audit,
        instructions=server_instructions(tools, role),
        prompts=prompts,
        profiles=profiles,
        elsewhere=elsewhere,
        request_profiles=request_profiles,
    )
    admin_registered = sum(1 for t in tools if t.admin_allowlist) if role == "admin" else admin_registrable
    log_line(
        "mcp",
        "mcp-config-allowlist-coverage",
        admin_tools=admin_tools,
        admin_registered=admin_registered,
        role=role,
        registered=len(tools),
        profiles=",".join(profiles),
        eager=sum(1 for t in tools if t.eager),
        prompts=len(prompts),
    )
    return server


# ---------------------------------------------------------------------------------------
def check_public_pins(settings: Settings) -> None:
    """A public server needs its scope and agent pinned, and never the admin scope."""
    scopes = settings.ALLOWED_SCOPES or []
    if not scopes:
        raise ConfigError("the public role needs ALLOWED_SCOPES pinned (public, or public,shared)")
    if "admin" in scopes:
        raise ConfigError("the public role cannot be pinned to the admin scope: ALLOWED_SCOPES=public or public,shared")
    if not settings.AGENT_SLUG:
        raise ConfigError("the public role needs AGENT_SLUG pinned: the public agent's slug")
    if settings.TASK_ROLE:
        raise ConfigError(
            f"the public role cannot carry a task role (TASK_ROLE={settings.TASK_ROLE}): public agents never write; "
            "unset TASK_ROLE or use the admin role"
        )
    if settings.MEMBER_ID:
        raise ConfigError(
            f"the public role cannot act for a member (MEMBER_ID={settings.MEMBER_ID}): public agents never write; "
            "unset MEMBER_ID or use the admin role"
        )


def _embedder(settings: Settings) -> Any:
    from ..embeddings import get_embedder

    try:
        return get_embedder(settings)
    except ValueError as err:
        log_line("mcp", "warn", level=logging.WARNING, reason="no-embedder", error=str(err)[:200])
        return None


def pinned_context(
    settings: Settings,
    role: Role,
    account: ValidatedAccount,
    *,
    db: Database,
    embedder: Any,
) -> ToolContext:
    """The ToolContext for pins already checked (account validated, public pins present)."""
    return ToolContext.pinned_by(settings, account, role=role, embedder=embedder, db=db)


class EnvContexts:
    """Pins read from the environment once, at server start (stdio servers)."""

    def __init__(self, settings: Settings, role: Role):
        self.settings = settings
        self.role = role
        self._contexts: dict[str, ToolContext] = {}
        self.db: Database | None = None

    def open(self, plugins: Sequence[LoadedPlugin]) -> EnvContexts:
        """Validate ACCOUNT_ID (and the public pins) and build one context per plugin."""
        if self.role == "public":
            check_public_pins(self.settings)
        account = validate_account_id_env(self.settings)
        self.db = Database(self.settings)
        base = pinned_context(self.settings, self.role, account, db=self.db, embedder=_embedder(self.settings))
        self._contexts = {p.name: replace(base, plugin=p.name) for p in plugins}
        log_line(
            "mcp",
            "pinned",
            role=self.role,
            accountId=short(account.account_id),
            scopes=self.settings.ALLOWED_SCOPES or "all",
            agent=self.settings.AGENT_SLUG,
            session=short(self.settings.SESSION_ID) if self.settings.SESSION_ID else None,
            taskRole=self.settings.TASK_ROLE,
            member=self.settings.MEMBER_ID,
        )
        return self

    def __call__(self, plugin: str, headers: Mapping[str, str] | None = None) -> ToolContext:
        try:
            return self._contexts[plugin]
        except KeyError:
            raise ConfigError(f"no pinned context for plugin {plugin!r}: the server was not opened for it") from None

    def close(self) -> None:
        if self.db is not None:
            finish_prunes(self.db)
            self.db.close()


@contextmanager
def stdio_server_for(
    plugins: Sequence[LoadedPlugin],
    role: Role,
    settings: Settings | None = None,
    profiles: Sequence[str] = (ALL,),
) -> Iterator[MCPServer]:
    """The server ``maxy mcp serve`` runs over stdio, its pins opened for as long as the block
    lasts. Raises BootGateError & co. before yielding."""
    settings = settings or load_settings()
    contexts = EnvContexts(settings, role)
    server = create_mcp_server(plugins, role, contexts, profiles=profiles)
    if role == "admin":  # public servers (one per visitor conversation) never start specialists
        from ..specialists.gate import check_specialists

        check_specialists(plugins, settings)
    contexts.open(plugins)
    log_line(
        "mcp",
        "serve",
        transport="stdio",
        role=role,
        plugins=[p.name for p in plugins],
        profiles=",".join(profiles),
        tools=len(server.maxy_tools),
    )
    try:
        yield server
    finally:
        contexts.close()


def run_stdio(
    plugins: Sequence[LoadedPlugin],
    role: Role,
    settings: Settings | None = None,
    profiles: Sequence[str] = (ALL,),
) -> None:
    """Serve the tools of ``profiles`` of ``plugins`` over stdio until stdin closes. Raises
    BootGateError & co. before serving."""
    from ..heap import settle
    from .stdio import serve_stdio

    with stdio_server_for(plugins, role, settings, profiles) as server:
        settle("mcp")  # everything loaded: later collections skip it
        anyio.run(serve_stdio, server)  # like server.run_stdio_async, but a line it cannot decode is answered


_sdk_logging_routed = False


def _route_sdk_logging() -> None:
    """Keep the SDK's logging.basicConfig from adding a second (rich) handler that would
    print every ``[component]`` line twice: give the root logger a plain stderr handler for
    warnings from other libraries, which skips records of the ``maxy`` logger (it has its own)."""
    global _sdk_logging_routed
    if _sdk_logging_routed:
        return
    _sdk_logging_routed = True
    root = logging.getLogger()
    if root.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    handler.addFilter(lambda record: not record.name.startswith("maxy"))
    root.addHandler(handler)
