"""The graph proxy's envelope warnings against the real Neo4j: ``maxy mcp proxy`` relays a
Cypher upstream (tests/plugins_fixture/cypher_upstream.py, the tool names and arguments of
mcp-neo4j-cypher) and puts the EXPLAIN probe's 01N5x warnings in front of read results.

Driven by the MCP SDK's stdio client (what an agent sees) and by raw JSON-RPC lines (the
bytes: what the probe leaves alone is what the upstream sent), with the probe pointed at a
closed port, a user the server refuses and a frozen server.
"""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from maxy.config import Settings
from maxy.graph.write import GraphWriter, NodeSpec
from maxy.mcp.envelope import BLOCK_TITLE, EnvelopeProbe, ProbeFailed
from maxy.mcp.proxy import Pending, note_requests, rewrite_response
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.hypothesis_profile import examples
from tests.plugins_fixture.helpers import CLI, REPO, child_env
from tests.tcp_proxy import TcpProxy

EAGER = "anthropic/alwaysLoad"
UPSTREAM = [sys.executable, str(REPO / "tests" / "plugins_fixture" / "cypher_upstream.py")]
PROXY = [*CLI, "mcp", "proxy"]
RUN = uuid.uuid4().hex[:10]
MISSING_LABEL = f"Nope{RUN}"  # names no graph ever held: the server warns about each
MISSING_PROPERTY = f"nmae_{RUN}"
MISSING_TYPE = f"NOPE_{RUN.upper()}"
MISSING_READ = f"MATCH (n:{MISSING_LABEL}) RETURN n"


def upstream_variables(settings: Settings) -> dict[str, str]:
    """The upstream's variables, as an operator sets them for mcp-neo4j-cypher."""
    return {
        "NEO4J_URI": settings.NEO4J_URI,
        "NEO4J_USERNAME": settings.NEO4J_USER,
        "NEO4J_PASSWORD": settings.NEO4J_PASSWORD or "",
        "NEO4J_DATABASE": settings.NEO4J_DATABASE or "neo4j",
    }


@pytest.fixture()
def graph_env(neo4j_ready: Settings, data_root: Path) -> dict[str, str]:
    return child_env(data_root) | upstream_variables(neo4j_ready)


def _call(id_: object, tool: str, query: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    arguments: dict[str, Any] = {"query": query} | ({"params": params} if params is not None else {})
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}


def exchange(
    command: list[str], requests: list[dict[str, Any]], env: dict[str, str], errlog: Path
) -> tuple[dict[Any, bytes], dict[Any, float]]:
    """Start ``command``, initialize, send each request and wait for its answer: the raw
    response lines by id, and the seconds each took."""
    with errlog.open("wb") as err:
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, env=env, cwd=REPO)
        killer = threading.Timer(90, proc.kill)
        killer.start()
        assert proc.stdin is not None and proc.stdout is not None
        try:

            def ask(message: dict[str, Any]) -> bytes:
                proc.stdin.write(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]
                proc.stdin.flush()  # type: ignore[union-attr]
                if "id" not in message:
                    return b""
                line = proc.stdout.readline()  # type: ignore[union-attr]
                assert line, errlog.read_text()
                return line

            hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
            ask({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": hello})
            ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
            lines: dict[Any, bytes] = {}
            took: dict[Any, float] = {}
            for request in requests:
                started = time.monotonic()
                lines[request["id"]] = ask(request)
                took[request["id"]] = time.monotonic() - started
            proc.stdin.close()
            proc.wait(timeout=30)
        finally:
            killer.cancel()
            proc.kill()
    return lines, took


def _probe_lines(errlog: Path) -> list[str]:
    return [line for line in errlog.read_text().splitlines() if line.startswith("[mcp:graph]")]


# ---------------------------------------------------------------------------------------
# what the agent sees
def test_agent_sees_warnings_before_an_empty_result(db, account, graph_env: dict[str, str], tmp_path: Path) -> None:
    GraphWriter(db, account, None, created_by="system").write(NodeSpec(labels=["Note"], properties={"name": "kept"}))
    acc = {"acc": account.account_id}
    queries = {
        "property": f"MATCH (n:Note) WHERE n.accountId = $acc AND n.{MISSING_PROPERTY} = 'x' RETURN n",
        "label": f"CYPHER 25\nMATCH (n:{MISSING_LABEL}) RETURN n",
        "type": f"MATCH ()-[r:{MISSING_TYPE}]->() RETURN r",
    }
    params = StdioServerParameters(command=PROXY[0], args=[*PROXY[1:], "--", *UPSTREAM], env=graph_env, cwd=str(REPO))

    async def work(s: ClientSession) -> dict[str, Any]:
        read = "read_neo4j_cypher"
        out: dict[str, Any] = {"tools": (await s.list_tools()).tools}
        for key, query in queries.items():
            out[key] = await s.call_tool(read, {"query": query, "params": acc})
        clean = "MATCH (n:Note) WHERE n.accountId = $acc RETURN n.name AS name"
        out["clean"] = await s.call_tool(read, {"query": clean, "params": acc})
        return out

    log = tmp_path / "proxy.log"
    with log.open("w") as errlog:

        async def session() -> dict[str, Any]:
            async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w) as s:
                await s.initialize()
                return await work(s)

        out = anyio.run(session)

    assert sorted(t.name for t in out["tools"]) == ["get_neo4j_schema", "read_neo4j_cypher", "write_neo4j_cypher"]
    assert all((t.meta or {}).get(EAGER) is True for t in out["tools"])
    for key, status, name in (
        ("property", "01N52", MISSING_PROPERTY),
        ("label", "01N50", MISSING_LABEL),
        ("type", "01N51", MISSING_TYPE),
    ):
        before = queries[key][: queries[key].index(name)].split("\n")  # the warning points at the name
        where = f"line {len(before)}, column {len(before[-1]) + 1}"
        result = out[key]
        assert not result.is_error and len(result.content) == 2, key
        block, rows = result.content[0].text, result.content[1].text
        assert block.startswith(f"{BLOCK_TITLE}\n- {status} ({where}): ") and f"`{name}`" in block, block
        assert rows == "[]"
    clean = out["clean"]
    assert [c.text for c in clean.content] == ['[{"name": "kept"}]']
    lines = _probe_lines(log)
    assert [line.split(" ms=")[0] for line in lines] == ["[mcp:graph] probe warnings=1"] * 3 + [
        "[mcp:graph] probe warnings=0"
    ]
    assert lines[0].endswith("statuses=01N52") and lines[3].endswith("statuses=-")
    assert "[graph-mcp] tools/list eager-flagged count=3" in log.read_text()


# ---------------------------------------------------------------------------------------
# what the probe leaves alone is the upstream's bytes
UNTOUCHED = [
    _call(1, "read_neo4j_cypher", "RETURN 1 AS x, 'PROFILE' AS mode"),  # clean: probed, nothing found
    _call("w", "write_neo4j_cypher", f"MATCH (n:{MISSING_LABEL}w) SET n.{MISSING_PROPERTY}w = 1"),  # never probed
    _call(2, "read_neo4j_cypher", "MATCH (n RETURN n"),  # the upstream's error: forwarded, not probed
    _call("3", "read_neo4j_cypher", "RETURN 1 AS x; RETURN 2 AS x"),  # the probe's syntax error
    _call(4, "get_neo4j_schema", "ignored"),
]


def test_clean_writes_and_errors_pass_byte_for_byte(graph_env: dict[str, str], tmp_path: Path) -> None:
    direct, _ = exchange(UPSTREAM, UNTOUCHED, graph_env, tmp_path / "direct.log")
    relayed, _ = exchange([*PROXY, "--", *UPSTREAM], UNTOUCHED, graph_env, tmp_path / "proxy.log")
    assert relayed == direct
    assert json.loads(direct["w"])["result"]["isError"] is False
    assert json.loads(direct[2])["result"]["isError"] is True
    assert json.loads(direct["3"])["result"]["content"][0]["text"] == '[{"x": 1}, {"x": 2}]'
    lines = _probe_lines(tmp_path / "proxy.log")
    assert len(lines) == 2, lines  # the clean read and the two statements; not the write, the error, the schema
    assert lines[0].startswith("[mcp:graph] probe warnings=0 ms=")
    # two statements: Neo4j points at the query as a whole, so no position
    assert (
        lines[1] == '[mcp:graph] probe-error reason=syntax detail="Neo.ClientError.Statement.SyntaxError (GQL 42I15)"'
    )


def test_read_tool_names_the_calls_that_are_probed(graph_env: dict[str, str], tmp_path: Path) -> None:
    requests = [_call(1, "read_neo4j_cypher", MISSING_READ), _call(2, "get_neo4j_schema", MISSING_READ)]
    direct, _ = exchange(UPSTREAM, requests, graph_env, tmp_path / "direct.log")
    command = [*PROXY, "--read-tool", "get_neo4j_schema", "--", *UPSTREAM]
    relayed, _ = exchange(command, requests, graph_env, tmp_path / "proxy.log")
    assert relayed[1] == direct[1]  # read_neo4j_cypher is not named: relayed as it is
    schema = json.loads(relayed[2])["result"]["content"]
    assert (
        schema[0]["text"].startswith(f"{BLOCK_TITLE}\n- 01N50 ")
        and schema[1:] == json.loads(direct[2])["result"]["content"]
    )
    assert len(_probe_lines(tmp_path / "proxy.log")) == 1


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture()
def frozen(neo4j_ready: Settings) -> Iterator[TcpProxy]:
    host, port = neo4j_ready.neo4j_host_port
    with TcpProxy(port, host) as p:
        p.freeze()
        yield p
        p.resume()


@pytest.mark.parametrize("failure", ["unreachable", "auth", "timeout"])
def test_a_failed_probe_forwards_the_upstream_response(
    failure: str, graph_env: dict[str, str], frozen: TcpProxy, tmp_path: Path
) -> None:
    """The probe's Neo4j is down, refuses the user or hangs: the upstream (told where the
    real server is through the fixture's own variables) answers, and the answer passes as it is."""
    real = {f"FIXTURE_{k}": v for k, v in graph_env.items() if k in ("NEO4J_URI", "NEO4J_USERNAME", "NEO4J_PASSWORD")}
    probe_side = {
        "unreachable": {"NEO4J_URI": f"bolt://127.0.0.1:{_closed_port()}"},
        "auth": {"NEO4J_USERNAME": f"nobody_{RUN}"},  # not neo4j: the server's lock-out after failures is per user
        "timeout": {"NEO4J_URI": frozen.uri},
    }[failure]
    # the schema call first (never probed) opens the upstream's own connection, so the read's time
    # is the read and the probe
    requests = [_call(0, "get_neo4j_schema", ""), _call(1, "read_neo4j_cypher", MISSING_READ)]
    direct, direct_took = exchange(UPSTREAM, requests, graph_env, tmp_path / "direct.log")
    env = graph_env | real | probe_side
    relayed, took = exchange([*PROXY, "--probe-timeout", "0.5", "--", *UPSTREAM], requests, env, tmp_path / "proxy.log")
    assert relayed == direct and json.loads(direct[1])["result"]["content"][0]["text"] == "[]"
    assert [line.split(" detail=")[0] for line in _probe_lines(tmp_path / "proxy.log")] == [
        f"[mcp:graph] probe-error reason={failure}"
    ]
    # the relay waited for the probe no longer than its timeout allows (with room for a slow machine)
    assert took[1] - direct_took[1] < 0.5 + 2.0


@contextmanager
def _listener() -> Iterator[socket.socket]:
    """A port that takes connections and never answers: what a host the probe must not reach sees."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        s.settimeout(0.5)
        yield s


def _contacted(listener: socket.socket) -> bool:
    try:
        conn, _ = listener.accept()
    except TimeoutError:
        return False
    conn.close()
    return True


def test_an_upstream_without_a_password_is_never_sent_maxys(graph_env: dict[str, str], tmp_path: Path) -> None:
    """The upstream names its own host and no password: the probe refuses to fill the gap from
    Maxy's settings (which hold a password), so nothing reaches that host, and the answer passes."""
    real = {f"FIXTURE_{k}": v for k, v in graph_env.items() if k.startswith("NEO4J_")}
    requests = [_call(1, "read_neo4j_cypher", MISSING_READ)]
    direct, _ = exchange(UPSTREAM, requests, graph_env, tmp_path / "direct.log")
    with _listener() as other_host:
        host, port = other_host.getsockname()
        env = graph_env | real | {"NEO4J_URI": f"bolt://{host}:{port}", "NEO4J_PASSWORD": ""}
        relayed, _ = exchange(
            [*PROXY, "--probe-timeout", "0.5", "--", *UPSTREAM], requests, env, tmp_path / "proxy.log"
        )
        assert not _contacted(other_host)
    assert relayed == direct
    assert _probe_lines(tmp_path / "proxy.log") == [
        "[mcp:graph] probe-error reason=config detail=\"the upstream's environment sets NEO4J_URI, NEO4J_USERNAME, "
        "NEO4J_DATABASE but lacks NEO4J_PASSWORD: set those too, or none of them to probe Maxy's own Neo4j\""
    ]


# ---------------------------------------------------------------------------------------
# the probe in this process: batches, ids, configuration, never a write
def test_batch_responses_keep_their_order_and_ids(neo4j_ready: Settings, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    probe = EnvelopeProbe({}, timeout=2.0)  # the upstream names no Neo4j: Maxy's own
    try:
        pending = Pending()
        batch = [
            {"jsonrpc": "2.0", "id": 7, "method": "tools/list"},
            _call("7", "read_neo4j_cypher", MISSING_READ),
            _call(8, "read_neo4j_cypher", "RETURN $x AS x", {"x": 1}),
        ]
        note_requests(json.dumps(batch).encode() + b"\n", pending)
        content = [{"type": "text", "text": "[]"}]
        answers = [
            {"jsonrpc": "2.0", "id": 8, "result": {"content": content}},
            {"jsonrpc": "2.0", "id": "7", "result": {"content": content}},
            {"jsonrpc": "2.0", "id": 7, "result": {"tools": [{"name": "read_neo4j_cypher"}]}},
        ]
        out = json.loads(rewrite_response(json.dumps(answers).encode() + b"\n", pending, probe))
    finally:
        probe.close()
    assert [m["id"] for m in out] == [8, "7", 7]
    assert out[0] == answers[0]
    assert out[1]["result"]["content"][0]["text"].startswith(f"{BLOCK_TITLE}\n- 01N50 (line 1, column 10): ")
    assert out[1]["result"]["content"][1:] == content
    assert out[2]["result"]["tools"][0]["_meta"] == {EAGER: True}


def test_a_probe_that_cannot_be_configured_says_so(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    env = {"NEO4J_URI": "http://127.0.0.1:7474", "NEO4J_USERNAME": "u", "NEO4J_PASSWORD": "p", "NEO4J_DATABASE": "d"}
    probe = EnvelopeProbe(env)
    result = {"content": [{"type": "text", "text": "[]"}]}
    assert probe.annotate(result, MISSING_READ, {}) is False
    assert result == {"content": [{"type": "text", "text": "[]"}]}
    assert (
        "[mcp:graph] probe-error reason=config detail=\"NEO4J_URI 'http://127.0.0.1:7474' is not a Bolt URI"
        in caplog.text
    )
    with pytest.raises(ProbeFailed) as failed:
        probe.warnings(MISSING_READ, {})
    assert failed.value.reason == "config"


def test_a_uri_with_credentials_is_logged_without_them(caplog: pytest.LogCaptureFixture) -> None:
    """The driver refuses user:password@ in a bolt:// URI, quoting the URI: the log line does not."""
    caplog.set_level(logging.INFO)
    secret = f"s3cret{RUN}"
    env = {"NEO4J_URL": f"bolt://alice:{secret}@127.0.0.1:7687", "NEO4J_USERNAME": "u", "NEO4J_PASSWORD": "p"}
    probe = EnvelopeProbe(env)
    assert probe.annotate({"content": []}, MISSING_READ, {}) is False
    (line,) = [r.getMessage() for r in caplog.records if "probe-error" in r.getMessage()]
    assert line.startswith("[mcp:graph] probe-error reason=config detail=") and secret not in line
    assert "'bolt://***@127.0.0.1:7687'" in line


def test_a_plain_user_does_not_borrow_maxys_password(caplog: pytest.LogCaptureFixture) -> None:
    """Only NEO4J_URL set, pointing elsewhere: nothing is sent there, and the line says what is missing."""
    caplog.set_level(logging.INFO)
    with _listener() as other_host:
        host, port = other_host.getsockname()
        probe = EnvelopeProbe({"NEO4J_URL": f"bolt://{host}:{port}"}, timeout=0.5)
        try:
            assert probe.annotate({"content": []}, MISSING_READ, {}) is False
        finally:
            probe.close()
        assert not _contacted(other_host)
    assert (
        "[mcp:graph] probe-error reason=config detail=\"the upstream's environment sets NEO4J_URL but lacks "
        "NEO4J_USERNAME, NEO4J_PASSWORD: set those too, or none of them to probe Maxy's own Neo4j\""
    ) in caplog.text


@pytest.fixture(scope="module")
def shared_probe(neo4j_ready: Settings) -> Iterator[EnvelopeProbe]:
    probe = EnvelopeProbe(upstream_variables(neo4j_ready), timeout=2.0)
    yield probe
    probe.close()


LIMITED = f"MATCH (n:Note) WHERE n.name = 'secret{RUN}' RETURN n LIMIT -1"


@pytest.mark.parametrize(
    ("query", "line"),
    [
        (  # Neo4j points at the -1, in the agent's query (not the probe's EXPLAIN text)
            LIMITED,
            'reason=syntax detail="Neo.ClientError.Statement.SyntaxError (GQL 42N31) at line 1, '
            f'column {LIMITED.index("-1") + 1}"',
        ),
        (  # a pattern left open: Neo4j points at the RETURN beginning line 2
            f"MATCH (n {{name: 'secret{RUN}'}}\nRETURN n",
            'reason=syntax detail="Neo.ClientError.Statement.SyntaxError (GQL 42I06) at line 2, column 1"',
        ),
        (
            f"CALL db.nope{RUN}('secret{RUN}')",
            'reason=neo4j detail="Neo.ClientError.Procedure.ProcedureNotFound (GQL 42N08)"',
        ),
    ],
    ids=["syntax", "syntax-line-2", "neo4j"],
)
def test_a_refused_query_is_logged_without_its_text(
    query: str, line: str, shared_probe: EnvelopeProbe, caplog: pytest.LogCaptureFixture
) -> None:
    """Neo4j's message quotes the query (an agent's literals and all): the log line holds its code,
    status and place instead."""
    caplog.set_level(logging.INFO)
    assert shared_probe.annotate({"content": []}, query, {}) is False
    (logged,) = [r.getMessage() for r in caplog.records if r.getMessage().startswith("[mcp:graph]")]
    assert logged == f"[mcp:graph] probe-error {line}"
    assert f"secret{RUN}" not in caplog.text and RUN not in logged


LEADING = st.lists(
    st.sampled_from(["PROFILE", "profile", "EXPLAIN", "CYPHER 25", "CYPHER runtime=slotted", "// c\n", "/* c */"]),
    max_size=3,
)


@settings(max_examples=examples(25), deadline=None)
@given(leading=LEADING)
def test_the_probe_never_runs_the_query(leading: list[str], db, shared_probe: EnvelopeProbe) -> None:
    """Whatever leads the query (PROFILE, which runs it, included), the probe only plans it."""
    marker = f"ProbeMarker{RUN}"
    query = " ".join([*leading, f"CREATE (m:{marker} {{id: $id}}) RETURN m"])
    try:
        shared_probe.warnings(query, {"id": 1})
    except ProbeFailed as err:
        assert err.reason in ("syntax", "neo4j"), err  # a query Neo4j refuses to plan
    assert db.read(f"MATCH (m:{marker}) RETURN count(m) AS n")[0]["n"] == 0
