"""memory-get, memory-forget and memory-remove-relation over MCP: ``maxy mcp serve memory`` as a
subprocess driven by the SDK's stdio client (annotations, JSON answers, one refusal for hidden
and absent ids), and a public server in-process (memory-get only, inside its pinned view)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import anyio
from maxy.config import load_settings
from maxy.graph.write import Edge, GraphWriter, NodeSpec
from maxy.mcp.server import create_mcp_server, pinned_context
from maxy.plugins.discovery import discover_plugins
from mcp import Client, ClientSession, StdioServerParameters

from tests.mcp.inprocess import stdio_inprocess
from tests.plugins_fixture.helpers import CLI, REPO, child_env, text


def _seed(db: Any, account: Any, other: Any) -> dict[str, str]:
    w = GraphWriter(db, account, None, created_by="system")
    ids: dict[str, str] = {}
    ids["bob"] = w.write(NodeSpec(["Person"], {"name": "Bob Stone"}, scope="public", agents=["bot"])).node_id
    ids["acme"] = w.write(
        NodeSpec(["Organization"], {"name": "Acme"}, edges=[Edge("WORKS_FOR", ids["bob"], "in")], scope="public")
    ).node_id
    ids["secret"] = w.write(
        NodeSpec(["Note"], {"name": "board minutes"}, edges=[Edge("MENTIONS", ids["acme"])], scope="admin")
    ).node_id
    ids["foreign"] = GraphWriter(db, other, None, created_by="system").write(NodeSpec(["Note"], {"name": "x"})).node_id
    return ids


def _json(result: Any) -> Any:
    assert not result.is_error, text(result)
    return json.loads(text(result))


def test_entity_tools_over_stdio(db, account, make_account, data_root: Path, tmp_path: Path) -> None:
    ids = _seed(db, account, make_account("other"))
    absent = f"absent-{uuid.uuid4().hex[:8]}"
    env = child_env(data_root, ACCOUNT_ID=account.account_id)
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", "serve", "memory"], env=env, cwd=str(REPO))

    async def work() -> dict[str, Any]:
        with (tmp_path / "server.log").open("w") as errlog:
            async with stdio_inprocess(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                out: dict[str, Any] = {"tools": {t.name: t for t in (await s.list_tools()).tools}}
                call = s.call_tool
                out["get"] = await call("memory-get", {"nodeIds": [ids["bob"], ids["foreign"], absent], "hops": 2})
                out["one"] = await call("memory-get", {"nodeIds": ids["bob"], "hops": 0})
                out["bad_hops"] = await call("memory-get", {"nodeIds": ids["bob"], "hops": 4})
                out["bad_type"] = await call("memory-get", {"nodeIds": ids["bob"], "types": ["LIKES"]})
                out["unlink"] = await call(
                    "memory-remove-relation", {"source": ids["bob"], "type": "WORKS_FOR", "target": ids["acme"]}
                )
                out["unlink_again"] = await call(
                    "memory-remove-relation", {"source": ids["bob"], "type": "WORKS_FOR", "target": ids["acme"]}
                )
                out["forget"] = await call("memory-forget", {"nodeId": ids["secret"]})
                out["forget_again"] = await call("memory-forget", {"nodeId": ids["secret"]})
                out["forget_foreign"] = await call("memory-forget", {"nodeId": ids["foreign"]})
                out["forget_absent"] = await call("memory-forget", {"nodeId": absent})
                out["after"] = await call("memory-get", {"nodeIds": [ids["acme"], ids["secret"]]})
                return out

    out = anyio.run(work)
    tools = out["tools"]
    for name in ("memory-forget", "memory-remove-relation"):
        hints = tools[name].annotations
        # a repeat changes nothing more (it is refused like an unknown id): idempotent
        assert hints.destructive_hint is True and hints.read_only_hint is False and hints.idempotent_hint is True
    got = tools["memory-get"].annotations
    assert got.read_only_hint is True and got.idempotent_hint is True and got.destructive_hint is False

    result = _json(out["get"])
    [bob] = result["nodes"]
    assert bob["properties"]["name"] == "Bob Stone" and result["missing"] == [ids["foreign"], absent]
    reached = {n["nodeId"]: (n["hops"], n["path"][-1]) for n in bob["neighbours"]}
    assert reached[ids["acme"]] == (1, {"type": "WORKS_FOR", "direction": "out", "nodeId": ids["acme"]})
    assert reached[ids["secret"]][0] == 2 and reached[ids["secret"]][1]["direction"] == "in"
    assert _json(out["one"])["nodes"][0]["neighbours"] == []
    assert out["bad_hops"].is_error
    assert text(out["bad_hops"]) == "invalid arguments for memory-get: hops: an integer from 0 to 3 (got 4)"
    assert out["bad_type"].is_error
    assert text(out["bad_type"]).startswith(
        "invalid arguments for memory-get: types[0]: unknown value 'LIKES'; allowed: "
    )

    assert _json(out["unlink"])["removed"] == 1
    assert out["unlink_again"].is_error and text(out["unlink_again"]).startswith("type: no WORKS_FOR relation from")
    assert _json(out["forget"]) == {
        "nodeId": ids["secret"],
        "forgotten": True,
        "labels": ["Note"],
        "deletedAt": _json(out["forget"])["deletedAt"],
    }
    refusals = {
        text(out[k]).replace(node_id, "<ID>")
        for k, node_id in (
            ("forget_again", ids["secret"]),
            ("forget_foreign", ids["foreign"]),
            ("forget_absent", absent),
        )
    }
    assert refusals == {"nodeId: no node '<ID>' that you can write; nothing was written"}
    after = _json(out["after"])
    assert after["missing"] == [ids["secret"]] and after["nodes"][0]["neighbours"] == []
    log = (tmp_path / "server.log").read_text()
    assert "[memory] op=forget" in log and "[memory] op=unlink" in log and "Traceback" not in log


def test_public_server_reads_inside_its_view_and_cannot_forget(db, account, make_account, data_root, embedder) -> None:
    ids = _seed(db, account, make_account("other"))
    pins = {"DATA_ROOT": data_root, "ACCOUNT_ID": account.account_id, "ALLOWED_SCOPES": ["public"], "AGENT_SLUG": "bot"}
    ctx = pinned_context(load_settings(**pins), "public", account, db=db, embedder=embedder)
    server = create_mcp_server(discover_plugins(["memory"]), "public", lambda plugin, headers: ctx)

    async def work() -> tuple[set[str], Any, Any]:
        async with Client(server) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            got = await client.call_tool("memory-get", {"nodeIds": [ids["bob"], ids["secret"]], "hops": 3})
            forget = await client.call_tool("memory-forget", {"nodeId": ids["bob"]})
            return names, got, forget

    names, got, forget = anyio.run(work)
    assert "memory-get" in names and not names & {"memory-forget", "memory-remove-relation", "memory-write"}
    result = _json(got)
    assert result["missing"] == [ids["secret"]]
    assert [n["nodeId"] for n in result["nodes"][0]["neighbours"]] == [ids["acme"]]  # untagged Acme, not the admin note
    assert forget.is_error
    assert db.read("MATCH (n:Node {nodeId: $id}) RETURN n.deletedAt AS d", id=ids["bob"])[0]["d"] is None
