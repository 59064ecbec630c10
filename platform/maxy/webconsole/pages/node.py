"""Node: its properties, its history (the supersession chain), its provenance (the Task or
Conversation that produced it, the tool calls that named it) and its neighbourhood, as a picture
(``graph.json``, drawn by the browser) and as a table (what shows without JavaScript)."""

from __future__ import annotations

from typing import Any

from ...errors import ValidationError
from ...memory.neighbourhood import MAX_HOPS, get_nodes
from ...provenance.audit_trail import tool_calls_touching
from ..present import title
from ..vendor import graph_library_ready
from ..views import Console, NotFound, View

GRAPH_BUDGET = 150  # neighbours drawn at most: past that a picture stops being readable
TABLE_BUDGET = 150
PROVENANCE_TYPES = ["PRODUCED", "RAISED_DURING"]


def _hops(params: Any) -> int:
    raw = (params.get("hops") or "1").strip()
    if raw not in {str(h) for h in range(1, MAX_HOPS + 1)}:
        raise ValidationError("hops", f"a whole number from 1 to {MAX_HOPS}")
    return int(raw)


def _one(found: dict[str, Any]) -> dict[str, Any]:
    if not found["nodes"]:
        raise NotFound("node with this id")
    return dict(found["nodes"][0], truncated=found["truncated"])


def node(console: Console, request: Any, view: View) -> Any:
    node_id = request.path_params["node_id"]
    hops = _hops(request.query_params)
    caller = view.ctx.caller
    main = _one(get_nodes(console.db, caller, [node_id], hops=hops, budget=TABLE_BUDGET))
    history = get_nodes(console.db, caller, [node_id], hops=3, types=["SUPERSEDED_BY"], include_history=True)
    provenance = get_nodes(console.db, caller, [node_id], hops=2, types=PROVENANCE_TYPES, include_history=True)
    return console.page(
        request,
        view,
        "node.html",
        node=main,
        hops=hops,
        max_hops=MAX_HOPS,
        history=_chain(history["nodes"][0]["neighbours"]) if history["nodes"] else [],
        provenance=provenance["nodes"][0]["neighbours"] if provenance["nodes"] else [],
        tool_calls=tool_calls_touching(console.db, caller, node_id, limit=20),
        graph_ready=graph_library_ready(),
    )


def _chain(neighbours: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The versions before (``in``: they were superseded on the way to this one) and after it."""
    rows = []
    for n in neighbours:
        first = n["path"][0]["direction"] if n["path"] else "out"
        rows.append(dict(n, relation="earlier" if first == "in" else "later"))
    return sorted(
        rows, key=lambda r: (r["relation"] != "earlier", -r["hops"] if r["relation"] == "earlier" else r["hops"])
    )


def graph(console: Console, request: Any, view: View) -> Any:
    """The neighbourhood as ``{nodes: [{id, label, title, center}], edges: [{source, target, type}]}``."""
    from ...httpjson import JSONAnswer

    node_id = request.path_params["node_id"]
    hops = _hops(request.query_params)
    found = _one(get_nodes(console.db, view.ctx.caller, [node_id], hops=hops, budget=GRAPH_BUDGET))
    return JSONAnswer(neighbourhood_graph(found))


def neighbourhood_graph(found: dict[str, Any]) -> dict[str, Any]:
    center = found["nodeId"]
    nodes = {center: _graph_node(center, found["labels"], found["properties"], center=True)}
    for n in found["neighbours"]:
        nodes[n["nodeId"]] = _graph_node(n["nodeId"], n["labels"], n["properties"])
    edges: dict[tuple[str, str, str], dict[str, str]] = {}
    for n in found["neighbours"]:
        previous = center
        for step in n["path"]:
            source, target = (previous, step["nodeId"]) if step["direction"] == "out" else (step["nodeId"], previous)
            edges[(source, target, step["type"])] = {"source": source, "target": target, "type": step["type"]}
            nodes.setdefault(step["nodeId"], _graph_node(step["nodeId"], [], {}))
            previous = step["nodeId"]
    return {"nodes": list(nodes.values()), "edges": list(edges.values()), "truncated": found["truncated"]}


def _graph_node(node_id: str, labels: list[str], properties: dict[str, Any], *, center: bool = False) -> dict[str, Any]:
    label = next((x for x in labels if x != "Node"), "")
    return {"id": node_id, "label": label, "title": title(properties, node_id, limit=40), "center": center}


ROUTES = [  # the picture's route first: a node id may hold "/"
    ("/node/{node_id:path}/graph.json", graph, ["GET"]),
    ("/node/{node_id:path}", node, ["GET"]),
]
