"""The graph proxy's envelope warnings without a database: which statuses count, the EXPLAIN
text, positions, the block, and which requests and responses the relay hands to the probe."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from maxy.config import load_settings
from maxy.errors import ConfigError
from maxy.mcp.envelope import (
    BLOCK_TITLE,
    UPSTREAM_VARIABLES,
    GraphWarning,
    envelope_warnings,
    explain_text,
    is_envelope_status,
    is_success,
    probe_target,
    source_position,
    stitch,
    warning_block,
    without_credentials,
)
from maxy.mcp.proxy import TOOLS_LIST, Pending, ReadCall, note_requests, rewrite_response


# -- which statuses --------------------------------------------------------------------
def test_envelope_statuses() -> None:
    for status in ("01N50", "01N51", "01N52", "01N59", "02N50", "02N57"):
        assert is_envelope_status(status), status
    for status in (
        "00000",
        "00001",
        "01N60",
        "01N42",
        "03N50",
        "01N5",
        "01N520",
        "01n52",
        "01N52\n",
        " 01N52",
        None,
        1,
    ):
        assert not is_envelope_status(status), status


@given(st.text(alphabet="0123N5abn9\n ٣", max_size=6))
def test_envelope_status_is_the_pattern(status: str) -> None:
    expected = (
        len(status) == 5
        and status[0] == "0"
        and status[1] in "12"
        and status[2:4] == "N5"
        and status[4] in "0123456789"
    )
    assert is_envelope_status(status) == expected


# -- the EXPLAIN text --------------------------------------------------------------------
def test_explain_text_examples() -> None:
    assert explain_text("MATCH (n) RETURN n") == "EXPLAIN MATCH (n) RETURN n"
    assert explain_text("EXPLAIN MATCH (n) RETURN n") == "EXPLAIN EXPLAIN MATCH (n) RETURN n"
    assert explain_text("PROFILE MATCH (n) RETURN n") == "EXPLAIN EXPLAIN MATCH (n) RETURN n"
    assert explain_text("profile\nMATCH (n) RETURN n") == "EXPLAIN EXPLAIN\nMATCH (n) RETURN n"
    assert explain_text("CYPHER 25 runtime = slotted PROFILE MATCH (n) RETURN n") == (
        "EXPLAIN CYPHER 25 runtime = slotted EXPLAIN MATCH (n) RETURN n"
    )
    assert explain_text("// why\n/* how */ PROFILE USE neo4j MATCH (n) RETURN n") == (
        "EXPLAIN // why\n/* how */ EXPLAIN USE neo4j MATCH (n) RETURN n"
    )
    # past the pre-parser words nothing changes: a PROFILE there is a name or a string
    assert explain_text("MATCH (n) RETURN 'PROFILE' AS PROFILE") == "EXPLAIN MATCH (n) RETURN 'PROFILE' AS PROFILE"
    assert explain_text("PROFILER MATCH (n) RETURN n") == "EXPLAIN PROFILER MATCH (n) RETURN n"
    assert explain_text("") == "EXPLAIN "


_blank = st.sampled_from([" ", "\n", "\t ", " // note\n", " /* a\nb */ "])
_word = st.sampled_from(["PROFILE", "profile", "Profile", "EXPLAIN", "explain", "CYPHER 25", "CYPHER runtime=slotted"])
_body = st.sampled_from(
    ["MATCH (n) RETURN n", "RETURN 'PROFILE' AS x", "USE neo4j MATCH (n) RETURN n.PROFILE", "RETURN 1"]
)


@given(st.lists(st.tuples(_word, _blank), max_size=4), _body)
def test_explain_text_plans_whatever_leads(leading: list[tuple[str, str]], body: str) -> None:
    query = "".join(w + b for w, b in leading) + body
    out = explain_text(query)
    assert out.startswith("EXPLAIN ")
    probe = out[len("EXPLAIN ") :]
    assert len(probe) == len(query)  # positions after the prefix hold
    expected = "".join(("EXPLAIN" if w.upper() == "PROFILE" else w) + b for w, b in leading) + body
    assert probe == expected
    assert not re.search(r"\bprofile\b", probe[: len(probe) - len(body)], re.I)


# -- positions, warnings, the block --------------------------------------------------------
def test_source_position_removes_the_prefix_on_line_one() -> None:
    assert source_position(1, 18) == (1, 10)
    assert source_position(3, 9) == (3, 9)
    assert source_position(1, 3) == (1, 3)  # inside the prefix: left as it is


def _status(code: str, description: str = "warn: d.", line: int | None = None, column: int | None = None) -> object:
    position = None if line is None else SimpleNamespace(line=line, column=column, offset=0)
    return SimpleNamespace(gql_status=code, status_description=description, position=position)


def test_envelope_warnings_keep_the_matching_ones_once() -> None:
    statuses = [
        _status("01N50", "warn: label does not exist.\nThe label `Nope`", 1, 18),
        _status("01N60", "warn: parameter missing."),
        _status("01N50", "warn: label does not exist.\nThe label `Nope`", 1, 18),
        _status("01N52", "warn: property key does not exist.", 2, 5),
        _status("00001", "note: successful completion - omitted result"),
    ]
    assert envelope_warnings(statuses) == [
        GraphWarning("01N50", "warn: label does not exist. The label `Nope`", 1, 10),
        GraphWarning("01N52", "warn: property key does not exist.", 2, 5),
    ]
    assert envelope_warnings([_status("00000")]) == []


def test_block_goes_first_and_keeps_the_content() -> None:
    warnings = [GraphWarning("01N52", "warn: property key does not exist.", 1, 24), GraphWarning("02N51", "x")]
    block = warning_block(warnings)
    assert block == {
        "type": "text",
        "text": f"{BLOCK_TITLE}\n- 01N52 (line 1, column 24): warn: property key does not exist.\n- 02N51: x",
    }
    result = {"content": [{"type": "text", "text": "[]"}], "isError": False, "structuredContent": {"result": "[]"}}
    stitch(result, warnings)
    assert result["content"] == [block, {"type": "text", "text": "[]"}]
    assert result["structuredContent"] == {"result": "[]"}


def test_only_successful_results_take_a_block() -> None:
    assert is_success({"content": []}) and is_success({"content": [], "isError": False})
    assert not is_success({"content": [], "isError": True})
    assert not is_success({"content": "[]"}) and not is_success([]) and not is_success(None)


# -- what the relay hands to the probe ---------------------------------------------------
def _call(id_: object, name: str, arguments: object) -> dict:
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


def test_read_calls_are_remembered_by_id() -> None:
    pending = Pending()
    lines = [
        _call(1, "read_neo4j_cypher", {"query": "MATCH (n) RETURN n", "params": {"a": 1}}),
        _call("1", "read_neo4j_cypher", {"query": "RETURN 1"}),
        [
            _call("b", "ns-read_neo4j_cypher", {"query": "RETURN 2"}),
            {"jsonrpc": "2.0", "id": 9, "method": "tools/list"},
        ],
        _call(2, "write_neo4j_cypher", {"query": "CREATE (n)"}),  # a write: never probed
        _call(3, "read_neo4j_cypher", {"query": 7}),  # the upstream refuses these: nothing to probe
        _call(4, "read_neo4j_cypher", {"query": "RETURN 1", "params": [1]}),
        _call(5, "read_neo4j_cypher", "RETURN 1"),
        {
            "jsonrpc": "2.0",
            "method": "tools/call",
            "params": {"name": "read_neo4j_cypher", "arguments": {"query": "x"}},
        },
    ]
    for line in lines:
        note_requests(json.dumps(line).encode() + b"\n", pending, ("read_neo4j_cypher", "ns-read_neo4j_cypher"))
    assert pending.pop(1) == ReadCall("MATCH (n) RETURN n", {"a": 1})
    assert pending.pop("1") == ReadCall("RETURN 1", {})
    assert pending.pop("b") == ReadCall("RETURN 2", {})
    assert pending.pop(9) == TOOLS_LIST
    assert all(pending.pop(i) is None for i in (1, 2, 3, 4, 5))


def test_responses_without_a_probe_pass_and_settle_their_request() -> None:
    pending = Pending()
    note_requests(json.dumps(_call(1, "read_neo4j_cypher", {"query": "RETURN 1"})).encode(), pending)
    error = b'{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}\n'
    assert rewrite_response(error, pending) == error
    assert pending.pop(1) is None  # an error response settles it
    note_requests(json.dumps(_call(2, "read_neo4j_cypher", {"query": "RETURN 1"})).encode(), pending)
    line = b'{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"[]"}]}}\n'
    assert rewrite_response(line, pending) == line  # no probe configured: as it came


# -- where the probe goes ----------------------------------------------------------------
UPSTREAM_VALUES = {
    "NEO4J_URL": "bolt://graph.example:7687",
    "NEO4J_URI": "neo4j+s://other.example",
    "NEO4J_USERNAME": "reader",
    "NEO4J_PASSWORD": "upstream-pw",
    "NEO4J_DATABASE": "crm",
}


@given(st.sets(st.sampled_from(UPSTREAM_VARIABLES), min_size=1))
def test_the_upstreams_variables_are_used_alone(names: set[str]) -> None:
    """Any of the upstream's variables set: the target is made of them only (never one of Maxy's
    settings), or refused naming what is missing."""
    env = {name: UPSTREAM_VALUES[name] for name in names} | {"NEO4J_USER": "maxy-user"}  # Maxy's own variable
    has_uri = bool(names & {"NEO4J_URL", "NEO4J_URI"})
    complete = has_uri and {"NEO4J_USERNAME", "NEO4J_PASSWORD"} <= names
    if not complete:
        with pytest.raises(ConfigError) as refused:
            probe_target(env)
        message = str(refused.value)
        assert message.startswith(
            f"the upstream's environment sets {', '.join(n for n in UPSTREAM_VARIABLES if n in names)} but lacks "
        )
        assert ("NEO4J_URL or NEO4J_URI" in message) != has_uri
        assert ("NEO4J_USERNAME" in message.split("lacks")[1]) != ("NEO4J_USERNAME" in names)
        assert ("NEO4J_PASSWORD" in message.split("lacks")[1]) != ("NEO4J_PASSWORD" in names)
        assert "upstream-pw" not in message
        return
    target = probe_target(env)
    assert target.uri == env.get("NEO4J_URL", env.get("NEO4J_URI"))
    assert (target.user, target.password) == ("reader", "upstream-pw")
    assert target.database == env.get("NEO4J_DATABASE")  # unset: the server's default database


def test_maxys_settings_only_when_the_upstream_sets_none() -> None:
    settings = load_settings()
    target = probe_target({"NEO4J_USER": "ignored", "NEO4J_URL": "", "PATH": "/bin"})  # empty counts as unset
    assert (target.uri, target.user, target.password) == (
        settings.NEO4J_URI,
        settings.NEO4J_USER,
        settings.NEO4J_PASSWORD,
    )
    assert target.database == (settings.NEO4J_DATABASE or None)


def test_a_uri_that_is_not_bolt_is_named_without_its_credentials() -> None:
    env = {"NEO4J_URL": "http://alice:s3cret@graph.example:7474", "NEO4J_USERNAME": "u", "NEO4J_PASSWORD": "p"}
    with pytest.raises(ConfigError) as refused:
        probe_target(env)
    assert str(refused.value).startswith("NEO4J_URL 'http://***@graph.example:7474' is not a Bolt URI: use one of bolt")


_userinfo = st.text(
    st.characters(blacklist_categories=("Z", "C"), blacklist_characters="'\"@"), min_size=1, max_size=20
)


@given(user=_userinfo, password=_userinfo | st.just("p@ss/w:rd"))
def test_uri_credentials_never_reach_the_log(user: str, password: str) -> None:
    text = f"Given URI: 'bolt://{user}:{password}@127.0.0.1:7687'. Or neo4j+s://{password}@db.example/x too"
    assert without_credentials(text) == "Given URI: 'bolt://***@127.0.0.1:7687'. Or neo4j+s://***@db.example/x too"
    assert without_credentials("Couldn't connect to 127.0.0.1:7687 (bolt://127.0.0.1:7687)") == (
        "Couldn't connect to 127.0.0.1:7687 (bolt://127.0.0.1:7687)"
    )
