"""``maxy memory write|search|get|forget|unlink`` (a feature module: ``register(app)``).

The commands run the same functions as the memory-write, memory-search, memory-get, memory-forget and
memory-remove-relation tools, as this process's caller: ACCOUNT_ID validated, and the
ALLOWED_SCOPES / AGENT_SLUG pins of the environment applied. Other ``maxy memory`` commands
join ``memory_app``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import typer

from ..console import emit_json, friendly, out, report

memory_app = typer.Typer(
    no_args_is_help=True, help="Entity memory: write and search it, read nodes back, forget them, unlink them."
)


def register(app: typer.Typer) -> None:
    app.add_typer(memory_app, name="memory")


@contextmanager
def _session(settings: Any = None) -> Iterator[tuple[Any, Any, Any]]:
    """(database, validated account, caller) for ``settings`` (default: the environment's);
    the database is closed afterwards."""
    from ..accounts import validate_account_id_env
    from ..config import load_settings
    from ..db import Database
    from ..graph.guards import Caller

    settings = settings or load_settings()
    account = validate_account_id_env(settings)  # exit 1 with a clear message when it is not valid
    caller = Caller.from_settings(settings, account.account_id)  # the pins of this process
    with Database(settings) as db:
        yield db, account, caller


def _writer(db: Any, account: Any, caller: Any) -> Any:
    from ..graph.write import GraphWriter

    return GraphWriter(db, account, None, caller=caller, created_by="cli")


@memory_app.command("get")
@friendly
def get_cmd(
    ids: list[str] = typer.Argument(..., help="Node ids."),
    hops: int = typer.Option(1, "--hops", min=0, max=3, help="Neighbours up to this many hops away (0: none)."),
    types: list[str] = typer.Option(None, "--type", help="Only follow this relationship type (repeatable)."),
    budget: int = typer.Option(50, "--budget", min=1, max=500, help="At most this many neighbours in all."),
    as_of: str = typer.Option(None, "--as-of", help="The neighbourhood as it was at this ISO 8601 instant."),
    history: bool = typer.Option(False, "--history", help="Include superseded and expired neighbours."),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Show nodes by id with every property, and their neighbourhood (the memory-get tool)."""
    from .neighbourhood import get_nodes

    with _session() as (db, _account, caller):
        result = get_nodes(
            db, caller, ids, hops=hops, types=types or None, budget=budget, as_of=as_of, include_history=history
        )
    if json_out:
        emit_json(result)
    elif result["nodes"]:
        for node in result["nodes"]:
            _print_node(node)
        for node_id in result["missing"]:
            out.print(f"missing: {node_id} (no node with this id that you can read)", markup=False, highlight=False)
        if result["truncated"]:
            out.print(f"(more neighbours left out: --budget {budget})", markup=False, highlight=False)
    if not result["nodes"]:  # nothing to show: a failure, as a script checking the exit code expects
        names = ", ".join(repr(i) for i in result["missing"])
        report(f"no node you can read has the id {names}: take ids from `maxy memory search` or `maxy search --json`")
        raise typer.Exit(1)


def _say(text: str) -> None:
    out.print(text, markup=False, highlight=False, soft_wrap=True)


def _print_node(node: dict[str, Any]) -> None:
    say = _say
    visibility = f"scope: {node['scope'] or '-'}, agents: {','.join(node['agents'] or []) or '-'}"
    say(f"[{':'.join(node['labels'])}] {node['nodeId']} ({visibility})")
    for key, value in {**node["properties"], **node["meta"]}.items():
        say(f"  {key}: {value}")
    for n in node["neighbours"]:
        path = "".join(f"-[{s['type']}]->" if s["direction"] == "out" else f"<-[{s['type']}]-" for s in n["path"])
        props = n["properties"]
        name = next((props[k] for k in ("name", "title", "text", "content") if props.get(k)), "")
        say(f"    {n['hops']} {path} [{':'.join(n['labels'])}] {str(name)[:120]} ({n['nodeId']})")


@memory_app.command("forget")
@friendly
def forget_cmd(
    node_id: str = typer.Argument(..., help="The node to forget."),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Soft-delete one node (hidden at once, purged after the grace period; documents: maxy delete)."""
    from .forget import forget_node

    with _session() as (db, account, caller):
        result = forget_node(_writer(db, account, caller), node_id)
    if json_out:
        emit_json(dict(result, account=account.ref()))
    else:
        out.print(
            f"forgot {result['nodeId']} ({':'.join(result['labels'])}) in {account.label()}; "
            "purged after the grace period",
            markup=False,
            highlight=False,
        )


@memory_app.command("unlink")
@friendly
def unlink_cmd(
    source: str = typer.Argument(..., help="The node the relationship starts from."),
    rel_type: str = typer.Argument(..., metavar="TYPE", help="The relationship type, e.g. RELATED_TO."),
    target: str = typer.Argument(..., help="The node it points to."),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Delete the TYPE relationship(s) from SOURCE to TARGET (the memory-remove-relation tool)."""
    from .forget import remove_relation

    with _session() as (db, account, caller):
        result = remove_relation(_writer(db, account, caller), source, rel_type, target)
    if json_out:
        emit_json(dict(result, account=account.ref()))
    else:
        out.print(
            f"removed {result['removed']} {result['type']} relation(s) from {result['source']} to {result['target']} "
            f"in {account.label()}",
            markup=False,
            highlight=False,
        )


def _value(raw: str) -> Any:
    """A --prop value: JSON when it parses as a number, list, true/false or quoted text, else the text."""
    import json

    try:
        value = json.loads(raw)
    except ValueError:
        return raw
    return value if not isinstance(value, dict) else raw


def _props(pairs: list[str]) -> dict[str, Any]:
    props: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"{pair!r}: use KEY=VALUE", param_hint="--prop")
        props[key.strip()] = _value(raw)
    return props


def _edges(specs: list[str]) -> list[dict[str, str]]:
    edges = []
    for spec in specs:
        parts = spec.split(":")
        if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] not in ("out", "in")):
            raise typer.BadParameter(f"{spec!r}: use TYPE:TARGET_ID or TYPE:TARGET_ID:in", param_hint="--edge")
        edges.append({"type": parts[0], "target": parts[1], "direction": parts[2] if len(parts) == 3 else "out"})
    return edges


@memory_app.command("write")
@friendly
def write_cmd(
    labels: list[str] = typer.Option(..., "--label", help="A node label, e.g. Person (repeatable)."),
    props: list[str] = typer.Option([], "--prop", help="KEY=VALUE (repeatable); JSON values are parsed."),
    edges: list[str] = typer.Option([], "--edge", help="TYPE:TARGET_ID[:in] (repeatable)."),
    node_id: str = typer.Option(None, "--node-id", help="Update this existing node."),
    no_resolve: bool = typer.Option(False, "--no-resolve", help="Always create, even when the name is known."),
    supersede: list[str] = typer.Option([], "--supersede", help="An earlier fact this one replaces (repeatable)."),
    valid_from: str = typer.Option(None, "--valid-from", help="When it became true (ISO 8601)."),
    valid_until: str = typer.Option(None, "--valid-until", help="When it stops being true (ISO 8601)."),
    scope: str = typer.Option(None, "--scope", help="public | shared | admin"),
    agents: list[str] = typer.Option(None, "--agent", help="An agent slug the node is for (repeatable)."),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Write one node as the memory-write tool does (entity resolution, supersede, validity)."""
    from ..config import load_settings
    from ..embeddings import get_embedder
    from ..graph.write import GraphWriter
    from .remember import MemoryWrite, parse_edges, remember

    properties = _props(props)
    settings = load_settings()
    with _session(settings) as (db, account, caller):
        writer = GraphWriter(db, account, get_embedder(settings), caller=caller, created_by="cli")
        memory = MemoryWrite(
            labels,
            properties,
            edges=parse_edges(_edges(edges)),
            node_id=node_id,
            scope=scope,
            agents=agents or None,
            resolve=not no_resolve,
            supersede=supersede,
            valid_from=valid_from,
            valid_until=valid_until,
        )
        result = remember(writer, memory)
    if json_out:
        emit_json(dict(result, account=account.ref()))
        return
    verb = "created" if result["created"] else f"merged into {result['resolved']}" if result["resolved"] else "updated"
    _say(f"{verb}: {result['nodeId']} [{':'.join(result['labels'])}] in {account.label()}")
    if result["superseded"]:
        _say(f"superseded: {', '.join(result['superseded'])}")


@memory_app.command("search")
@friendly
def search_cmd(
    query: str = typer.Argument(..., help="What to look for."),
    limit: int = typer.Option(10, "--limit", min=1, max=500),
    labels: list[str] = typer.Option([], "--label", help="Only these labels (repeatable)."),
    as_of: str = typer.Option(None, "--as-of", help="What was true at this ISO 8601 instant."),
    history: bool = typer.Option(False, "--history", help="Include superseded and expired facts."),
    after: str = typer.Option(None, "--after", help="Only what happened at or after this instant."),
    before: str = typer.Option(None, "--before", help="Only what happened before this instant."),
    min_relevance: float = typer.Option(
        None, "--min-relevance", help="Keep only hits at least this relevant (0-1; 0: no cut) [default: the cut]."
    ),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """What an agent's memory-search returns (one hit per document, its path and source), with
    its time filters; `--json` has the shape of `maxy search --json`."""
    from ..config import load_settings
    from ..embeddings import get_embedder
    from ..search import SearchRequest, render
    from ..search.format import search_json
    from .recall import recall

    settings = load_settings()
    request = SearchRequest(
        query,
        limit=limit,
        labels=tuple(labels) or None,
        as_of=as_of,
        include_history=history,
        after=after,
        before=before,
        min_relevance=min_relevance,
    )
    with _session(settings) as (db, _account, caller):
        response = recall(
            db, caller, get_embedder(settings), settings, request, keywords=settings.KNOWLEDGE_KEYWORDS or ()
        )
    if json_out:
        emit_json(search_json(query, response, explain=True))
        return
    _say(render(response.hits, nearest_miss=response.nearest_miss))
