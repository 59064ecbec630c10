"""Every way into ``maxy serve`` holds against arbitrary input (hypothesis).

The routes are listed from the app itself (its routes, and the paths its middleware serves, such
as ``/sites``), so a new route is covered without editing this test; so are the MCP tools, listed
by ``tools/list``. Each gets arbitrary JSON (lone surrogates, NUL, deep nesting, huge numbers,
unknown fields, wrong types), arbitrary path and query values, every kind of key (none, a stranger,
admin, public, a member's with and without a view, a scoped admin), and several media types.
Asserted for every request: no 5xx, no JSON-RPC internal error, no traceback nor error line in the
server's log; afterwards, every record in the account still reads back (``memory-get`` over MCP,
the console's node pages, the negotiation, the export).

Two arguments are tamed so the run stays on this test's own files and time: memory-ingest's paths
all lie in this test's folder, and a wait (``timeoutS``) is at most half a second.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from maxy.accounts import create_account, validate_account
from maxy.agents import AgentConfig, create_agent
from maxy.community.negotiation import Negotiations
from maxy.config import load_settings
from maxy.plugins.discovery import discover_plugins
from maxy.serving.app import create_app
from maxy.serving.keys import create_api_key
from starlette.routing import Mount, Route

from tests.conftest import purge_account
from tests.console_site import _seed, open_link
from tests.hypothesis_profile import examples
from tests.integration.negotiation_setup import SEED, opportunity
from tests.local_http import serve_app

ROUTE_EXAMPLES = examples(8)  # per route and key
TOOL_EXAMPLES = examples(12)
INTERNAL_ERROR = -32603
ACCEPT = "application/json, text/event-stream"
_PARAM = re.compile(r"{(\w+)(?::\w+)?}")


@dataclass
class World:
    base: str
    app: Any
    root: Path
    account_id: str
    keys: dict[str, str | None]
    ids: dict[str, str]
    key_ids: dict[str, str]
    cookie: dict[str, str]
    csrf: str
    folder: Path
    db: Any  # where the console's login links are kept
    names: list[str] = field(default_factory=list)  # ids, slugs and key ids worth trying as path values

    @property
    def cookie_header(self) -> str:
        return "; ".join(f"{k}={v}" for k, v in self.cookie.items())

    def console_session(self, http: httpx.Client) -> tuple[str, str]:
        """A fresh console session of the admin key: (its Cookie header, its CSRF token)."""
        from maxy.webconsole.login import mint_login

        link = f"{self.base}/console/login?token={mint_login(self.db, self.account_id, self.key_ids['admin'])}"
        with httpx.Client(timeout=120) as browser:
            assert open_link(browser, link).status_code == 303
            page = browser.get(f"{self.base}/console/documents")
            csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
            return "; ".join(f"{k}={v}" for k, v in browser.cookies.items()), csrf


@pytest.fixture(scope="module")
def world(db, embedder, tmp_path_factory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("every-route") / "data"
    root.mkdir()
    account = validate_account(root, create_account(root, "every-route").account_id)
    folder = root.parent / "files"
    folder.mkdir()
    (folder / "handbook.md").write_text("# Handbook\n\n## Refunds\n\nRefunds take five days.\n", encoding="utf-8")
    try:
        settings_ = load_settings(DATA_ROOT=root, ACCOUNT_ID=account.account_id, MAXY_DISCOVERY_NEGOTIATE_S=0)
        negotiation = Negotiations(db, account, settings_, embedder=embedder).start(
            opportunity(db, account, embedder), seed=SEED, candidate_kind="personal"
        )
        create_agent(root, account.account_id, AgentConfig("concierge", "Front desk"))
        create_agent(root, account.account_id, AgentConfig("vip", "VIP", allowed_scopes=("public", "shared")))
        keys: dict[str, str | None] = {"none": None, "stranger": "mxy_0123456789ab_not-a-real-secret"}
        made = {
            "admin": {"role": "admin"},
            "public": {"role": "public", "agent_slug": "concierge"},
            "bob": {"role": "admin", "member_id": "bob"},
            "ada-view": {"role": "admin", "member_id": "ada", "scopes": ["shared"]},
            "scoped": {"role": "admin", "scopes": ["public"], "agent_slug": "concierge"},
        }
        key_ids: dict[str, str] = {}
        for name, pins in made.items():
            secret, record = create_api_key(root, account.account_id, **pins)  # type: ignore[arg-type]
            keys[name] = secret
            key_ids[name] = record.key_id
            if name == "admin":
                admin_record = record
        app = create_app(discover_plugins(None, []), settings_)
        with serve_app(app) as base, httpx.Client(timeout=120) as browser:
            ids = anyio.run(_seed, f"{base}/mcp", keys["admin"], folder / "handbook.md")
            ids["negotiation"] = negotiation["negotiationId"]
            from maxy.webconsole.login import mint_login

            link = f"{base}/console/login?token={mint_login(db, account.account_id, admin_record.key_id)}"
            assert open_link(browser, link).status_code == 303
            page = browser.get(f"{base}/console/documents")
            csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
            cookie = dict(browser.cookies)
            names = [*ids.values(), *key_ids.values(), "concierge", "vip", "handbook"]
            pickup = f"{base}/api/agents/{key_ids['bob']}/negotiations/pickup"  # bob's turn waits for an answer
            assert browser.post(pickup, headers={"x-api-key": keys["bob"]}).status_code == 200
            yield World(base, app, root, account.account_id, keys, ids, key_ids, cookie, csrf, folder, db, names)
    finally:
        purge_account(db, account.account_id)


# ---------------------------------------------------------------------------------------
# what a hostile caller sends
ANY_CHAR = st.characters(codec=None, exclude_categories=())  # every code point: NUL, lone surrogates ...
hostile_text = st.text(alphabet=ANY_CHAR, max_size=30)


def json_values(names: list[str], fields: list[str]) -> st.SearchStrategy[Any]:
    """Arbitrary JSON, leaning towards the names a route or tool knows."""
    strings = hostile_text | st.sampled_from(names) if names else hostile_text
    keys = st.sampled_from(fields) | hostile_text if fields else hostile_text
    scalars = (
        st.none()
        | st.booleans()
        | st.integers()
        | st.integers(min_value=-(10**400), max_value=10**400)
        | st.floats(allow_nan=False, allow_infinity=False)
        | strings
    )
    return st.recursive(
        scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=5), max_leaves=12
    )


def deeply_nested() -> st.SearchStrategy[bytes]:
    return st.builds(
        lambda depth, kind: (b'{"a":' * depth + b"1" + b"}" * depth) if kind else (b"[" * depth + b"]" * depth),
        st.integers(min_value=100, max_value=50_000),
        st.booleans(),
    )


def bodies(names: list[str], fields: list[str]) -> st.SearchStrategy[bytes]:
    as_json = json_values(names, fields).map(lambda v: json.dumps(v, ensure_ascii=True).encode())
    return as_json | deeply_nested() | st.binary(max_size=64) | st.just(b"")


def _quoted(text: str, *, slashes: bool) -> str:
    return quote(text.encode("utf-8", "surrogatepass"), safe="/" if slashes else "")


# ---------------------------------------------------------------------------------------
def served_routes(app: Any) -> list[tuple[str, str]]:
    """(method, path template) of everything the app answers: its routes, its mounts, and the
    path prefixes its middleware serves (a ``PREFIX`` on the middleware's class)."""
    found: list[tuple[str, str]] = []
    for route in app.routes:
        if isinstance(route, Mount):
            found.append(("GET", route.path + "/{rest:path}"))
        elif isinstance(route, Route):
            methods = sorted((route.methods or {"GET", "POST", "DELETE"}) - {"HEAD"})
            found.extend((method, route.path) for method in methods)
    for middleware in app.user_middleware:
        prefix = getattr(middleware.cls, "PREFIX", None)
        if prefix:
            found.extend((method, prefix + "/{rest:path}") for method in ("GET", "POST"))
    return found


def _server_trouble(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        f"{r.name} {r.levelname}: {r.getMessage()[:300]}"
        for r in caplog.records
        if r.levelno >= logging.ERROR or r.exc_info or "Traceback" in r.getMessage()
    ]


def _jsonrpc_reply(response: httpx.Response) -> dict[str, Any] | None:
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        lines = [line.rstrip("\r") for line in response.text.split("\n")]  # not splitlines: U+0085 is text here
        data = [line[5:] for line in lines if line.startswith("data:") and line[5:].strip()]
        return json.loads(data[-1]) if data else None
    try:
        reply = response.json()
    except ValueError:
        return None
    return reply if isinstance(reply, dict) else None


def _check(response: httpx.Response, caplog: pytest.LogCaptureFixture, what: str) -> None:
    assert response.status_code < 500, (what, response.status_code, response.text[:300])
    reply = _jsonrpc_reply(response) if "jsonrpc" in response.text[:200] else None
    if reply is not None and isinstance(reply.get("error"), dict):
        assert reply["error"].get("code") != INTERNAL_ERROR, (what, reply)
    trouble = _server_trouble(caplog)
    assert not trouble, (what, trouble)


BAD_TEXT = st.sampled_from(["\ud800", "lone \udfff surrogate", "\x00", "nul\x00byte", "\ud83d", "\x00\ud800"])
FIELDS = ["text", "channel", "role", "action", "assessment", "reasoning", "message", "csrf", "attachmentId", "id"]
FIELDS += ["jsonrpc", "method", "params", "token", "q", "page", "deleted", "done", "label", "scope", "kind"]
RPC_METHODS = ["initialize", "tools/list", "tools/call", "ping", "prompts/get", "prompts/list", "resources/list"]


def example_body(app: Any, method: str, template: str) -> Any:
    """The request body example the app's OpenAPI description gives this route, or None."""
    operation = app.openapi().get("paths", {}).get(template, {}).get(method.lower(), {})
    content = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
    return content.get("example")


def _spots(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place inside a JSON value (the value itself too), down to 20 levels."""
    found = [at]
    if len(at) >= 20:
        return found
    if isinstance(value, dict):
        for k, v in value.items():
            found += _spots(v, (*at, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += _spots(v, (*at, i))
    return found


def _replaced(value: Any, at: tuple[Any, ...], new: Any) -> Any:
    if not at:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[at[0]] = _replaced(value[at[0]], at[1:], new)  # type: ignore[index]
    return copy


def mutated(data: Any, example: Any, names: list[str]) -> Any:
    """The example with one or two places changed the way a hostile caller would: text that is no
    text, another type, a huge number, deep nesting, an unknown field, a field left out."""
    value = example
    for _ in range(data.draw(st.integers(min_value=1, max_value=2), label="mutations")):
        at = data.draw(st.sampled_from(_spots(value)), label="at")
        kind = data.draw(st.sampled_from(["bad-text", "any", "huge", "deep", "unknown", "drop"]), label="mutation")
        if kind == "bad-text":
            value = _replaced(value, at, data.draw(BAD_TEXT))
        elif kind == "any":
            value = _replaced(value, at, data.draw(json_values(names, FIELDS)))
        elif kind == "huge":
            value = _replaced(value, at, data.draw(st.sampled_from([10**400, -(10**40), 2**63, 1e308, -0.0])))
        elif kind == "deep":
            nested: Any = "x"
            for _ in range(data.draw(st.integers(min_value=50, max_value=3000))):
                nested = [nested]
            value = _replaced(value, at, nested)
        elif kind == "unknown" and isinstance(_at(value, at), dict):
            field = data.draw(hostile_text | BAD_TEXT)
            value = _replaced(value, at, {**_at(value, at), field: data.draw(json_values(names, FIELDS))})
        elif kind == "drop" and at:
            parent = _at(value, at[:-1])
            if isinstance(parent, dict):
                value = _replaced(value, at[:-1], {k: v for k, v in parent.items() if k != at[-1]})
    return value


def _at(value: Any, at: tuple[Any, ...]) -> Any:
    for step in at:
        value = value[step]
    return value


def _encoded(value: Any) -> bytes:
    try:
        return json.dumps(value, ensure_ascii=True).encode()
    except (RecursionError, ValueError):
        return b"[" * 5000 + b"]" * 5000


def _natural(world: World, key_name: str) -> dict[str, list[str]]:
    """The values a path parameter of this name takes for this key's holder (the rest are hostile)."""
    own = [world.key_ids[key_name]] if key_name in world.key_ids else []
    return {
        "agent_id": own,
        "negotiation_id": [world.ids["negotiation"]],
        "slug": ["concierge", "vip"],
        "node_id": [v for k, v in world.ids.items() if k not in ("negotiation", "task", "report")],
        "attachment_id": ["handbook"],
        "session_id": ["console-test-session"],
    }


def route_runner(world: World, http: httpx.Client, caplog: Any, method: str, template: str, key_name: str) -> Any:
    """A hypothesis test of one route, as the holder of one key (a signed-in console or not)."""
    example = example_body(world.app, method, template)
    natural = _natural(world, key_name)
    key = world.keys[key_name]
    cookie, csrf = world.console_session(http)  # its own: an example that logs out ends no other's
    valid = key is not None and key_name in world.key_ids
    session = RawSession(http, world.base + "/mcp", key).session if template.startswith("/mcp") and valid else None

    @settings(
        max_examples=ROUTE_EXAMPLES,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(data=st.data())
    def one_request(data: Any) -> None:
        path = template
        for match in _PARAM.finditer(template):
            known = st.sampled_from(natural.get(match.group(1)) or world.names)
            value = data.draw(known | known | known | hostile_text | BAD_TEXT, label=match.group(1))
            path = path.replace(match.group(0), _quoted(value, slashes=":path" in match.group(0)))
        query = data.draw(st.dictionaries(st.sampled_from(FIELDS) | hostile_text, hostile_text | BAD_TEXT, max_size=3))
        url = world.base + path
        if query:
            url += "?" + "&".join(f"{_quoted(k, slashes=False)}={_quoted(v, slashes=False)}" for k, v in query.items())
        headers = {"accept": ACCEPT, "origin": world.base} | ({"x-api-key": key} if key else {})
        kinds = ["application/json", "application/json", "text/plain", "application/x-www-form-urlencoded", None]
        kind = data.draw(st.sampled_from(kinds), label="content-type")
        if kind:
            headers["content-type"] = kind
        if data.draw(st.booleans(), label="signed-in"):
            headers["cookie"] = cookie
        if session and method != "GET" and data.draw(st.booleans(), label="mcp-session"):  # a GET streams
            headers |= {"mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
        if kind == "application/x-www-form-urlencoded":
            form = data.draw(st.dictionaries(st.sampled_from(FIELDS), hostile_text | BAD_TEXT, max_size=4))
            form["csrf"] = csrf if data.draw(st.booleans(), label="csrf") else form.get("csrf", "")
            body = "&".join(
                f"{_quoted(k, slashes=False)}={_quoted(v, slashes=False)}" for k, v in form.items()
            ).encode()
        elif template.startswith("/mcp") and data.draw(st.booleans(), label="json-rpc"):
            message = {
                "jsonrpc": "2.0",
                "id": data.draw(st.integers(min_value=1, max_value=99) | json_values([], [])),
                "method": data.draw(st.sampled_from(RPC_METHODS) | hostile_text),
                "params": data.draw(json_values(world.names, FIELDS)),
            }
            body = _encoded(mutated(data, message, world.names) if data.draw(st.booleans()) else message)
        elif example is not None and data.draw(st.integers(0, 4), label="from-example") > 0:
            body = _encoded(mutated(data, example, world.names))
        else:
            body = data.draw(bodies(world.names, FIELDS))
        caplog.clear()
        response = http.request(method, url, content=body or None, headers=headers)
        _check(response, caplog, f"{key_name} {method} {path} {body[:200]!r}")

    return one_request


def test_every_route_holds_against_arbitrary_input(world: World, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    routes = served_routes(world.app)
    paths = {path for _, path in routes}
    assert {"/mcp", "/gateway/screen", "/agents/{slug}/context", "/console/documents"} <= paths
    assert any(path.startswith("/sites") for path in paths)
    assert example_body(world.app, "POST", "/api/agents/{agent_id}/negotiations/{negotiation_id}/respond")
    with httpx.Client(timeout=120, follow_redirects=False) as http:
        for method, template in routes:
            for key_name in sorted(world.keys):
                route_runner(world, http, caplog, method, template, key_name)()
    _reads_back(world, caplog)


# ---------------------------------------------------------------------------------------
class RawSession:
    """A JSON-RPC session over streamable HTTP written by hand: the bodies are bytes this test
    chose (lone surrogate escapes included), which no SDK client would send."""

    def __init__(self, http: httpx.Client, url: str, key: str):
        self.http, self.url, self.key, self.next_id = http, url, key, 1
        opened = self.post(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "1"},
                },
            }
        )
        assert opened.status_code == 200, opened.text
        self.session = opened.headers["mcp-session-id"]
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def post(self, message: Any, raw: bytes | None = None) -> httpx.Response:
        headers = {"x-api-key": self.key, "accept": ACCEPT, "content-type": "application/json"}
        if getattr(self, "session", None):
            headers |= {"mcp-session-id": self.session, "mcp-protocol-version": "2025-06-18"}
        body = raw if raw is not None else json.dumps(message, ensure_ascii=True).encode()
        return self.http.post(self.url, content=body, headers=headers)

    def call(self, name: str, arguments: Any) -> tuple[httpx.Response, dict[str, Any] | None]:
        self.next_id += 1
        message = {
            "jsonrpc": "2.0",
            "id": self.next_id,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
        response = self.post(message)
        return response, _jsonrpc_reply(response)

    def tools(self) -> list[dict[str, Any]]:
        reply = _jsonrpc_reply(self.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        assert reply is not None and "result" in reply, reply
        return list(reply["result"]["tools"])


def _tamed(world: World, name: str, arguments: Any) -> Any:
    """memory-ingest reads only this test's folder; no call waits more than half a second."""
    if not isinstance(arguments, dict):
        return arguments
    out = dict(arguments)
    if name == "memory-ingest" and "paths" in out:
        paths = out["paths"] if isinstance(out["paths"], list) else [out["paths"]]
        out["paths"] = [str(world.folder / re.sub(r"[/\\]|\.\.", "_", p)) if isinstance(p, str) else p for p in paths]
    for wait in ("timeoutS", "timeout_s", "waitS"):
        if isinstance(out.get(wait), (int, float)) and not isinstance(out[wait], bool) and out[wait] > 0.5:
            out[wait] = 0.5
    return out


def test_every_tool_holds_against_arbitrary_arguments(world: World, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    with httpx.Client(timeout=120) as http:
        sessions = {
            name: RawSession(http, world.base + "/mcp", world.keys[name]) for name in ("admin", "bob", "public")
        }  # type: ignore[arg-type]
        tools = sessions["admin"].tools()
        assert len(tools) >= 50
        for tool in tools:

            def runner(name: str, fields: list[str]) -> Any:
                @settings(
                    max_examples=TOOL_EXAMPLES,
                    deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
                )
                @given(data=st.data())
                def one_call(data: Any) -> None:
                    values = json_values(world.names, fields)
                    arguments = data.draw(
                        st.fixed_dictionaries({}, optional={f: values for f in fields})
                        | st.dictionaries(
                            (st.sampled_from(fields) | hostile_text) if fields else hostile_text, values, max_size=4
                        )
                        | values,
                        label="arguments",
                    )
                    who = data.draw(st.sampled_from(["admin", "admin", "bob", "public"]), label="key")
                    caplog.clear()
                    response, reply = sessions[who].call(name, _tamed(world, name, arguments))
                    _check(response, caplog, f"{who} {name}")
                    assert reply is not None and ("result" in reply or "error" in reply), (name, response.text[:300])

                return one_call

            runner(tool["name"], sorted(tool["inputSchema"].get("properties", {})))()
    _reads_back(world, caplog)


# ---------------------------------------------------------------------------------------
def _reads_back(world: World, caplog: pytest.LogCaptureFixture) -> None:
    """Every record in the account reads back: memory-get over MCP, the console's node pages,
    the negotiation over MCP and HTTP, and the whole account's export."""
    import io

    from maxy.dataops.export import export_account
    from maxy.db import Database

    caplog.clear()
    settings_ = load_settings(DATA_ROOT=world.root, ACCOUNT_ID=world.account_id)
    db = Database(settings_)
    try:
        node_ids = [
            r["id"] for r in db.read("MATCH (n:Node {accountId: $a}) RETURN n.nodeId AS id", a=world.account_id)
        ]
        exported = io.StringIO()
        export_account(db, world.root, world.account_id, exported, with_vectors=False)
    finally:
        db.close()
    for line in exported.getvalue().split("\n")[:-1]:  # not splitlines: U+2028 may sit in a string
        json.loads(line)
    assert node_ids
    with httpx.Client(timeout=120) as http:
        admin = RawSession(http, world.base + "/mcp", world.keys["admin"])  # type: ignore[arg-type]
        for at in range(0, len(node_ids), 50):
            response, reply = admin.call("memory-get", {"nodeIds": node_ids[at : at + 50]})
            _check(response, caplog, "memory-get")
            assert reply is not None and "result" in reply, reply
        for node_id in node_ids[:200]:
            page = http.get(
                f"{world.base}/console/node/{quote(node_id, safe='')}", headers={"cookie": world.cookie_header}
            )
            _check(page, caplog, f"console node {node_id}")
        for who in ("admin", "bob"):
            session = RawSession(http, world.base + "/mcp", world.keys[who])  # type: ignore[arg-type]
            for name, arguments in (
                ("get_negotiation", {"negotiationId": world.ids["negotiation"]}),
                ("list_negotiations", {}),
            ):
                response, reply = session.call(name, arguments)
                _check(response, caplog, f"{who} {name}")
                assert reply is not None and "result" in reply and not reply["result"]["isError"], reply


# ---------------------------------------------------------------------------------------
# text that is no text, everywhere it can be put: a sweep beside the random search above
NO_TEXT = ["\ud800", "nul\x00byte"]


def _string_spots(value: Any) -> list[tuple[Any, ...]]:
    return [at for at in _spots(value) if isinstance(_at(value, at), str)]


def _field_name(at: tuple[Any, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in at).lstrip(".")


def test_text_that_is_no_text_is_refused_in_every_body(world: World, caplog) -> None:
    """Every string of every route's example body replaced by a lone surrogate or a NUL, for every
    key: never accepted, never a 5xx, and where the body is read, refused naming that field (on
    /mcp, a JSON-RPC error that is no internal one: the MCP bodies' own text is swept per tool below)."""
    caplog.set_level(logging.INFO)
    swept = 0
    with httpx.Client(timeout=120) as http:
        for method, template in served_routes(world.app):
            example = example_body(world.app, method, template)
            for key_name, key in world.keys.items() if example is not None else ():
                natural = _natural(world, key_name)
                path = template
                for match in _PARAM.finditer(template):
                    value = (natural.get(match.group(1)) or ["x"])[0]
                    path = path.replace(match.group(0), _quoted(value, slashes=False))
                headers = {"content-type": "application/json", "accept": ACCEPT} | ({"x-api-key": key} if key else {})
                for at in _string_spots(example):
                    for bad in NO_TEXT:
                        caplog.clear()
                        body = _encoded(_replaced(example, at, bad))
                        response = http.request(method, world.base + path, content=body, headers=headers)
                        _check(response, caplog, f"{key_name} {template} {at}")
                        assert not response.is_success, (key_name, template, at, response.text[:200])
                        if response.status_code == 400 and not isinstance(response.json()["error"], dict):
                            assert response.json()["error"].startswith(f"{_field_name(at)}: holds a"), response.text
                        swept += 1
    assert swept >= 100


def test_text_that_is_no_text_is_refused_in_every_argument(world: World, caplog) -> None:
    """Every argument of every tool given a lone surrogate or a NUL, as the admin and as a member:
    refused naming the argument (or refused earlier, for what the key may not call at all)."""
    caplog.set_level(logging.INFO)
    refused_first = ("holds no memory view", "has no task role", "no member ")
    with httpx.Client(timeout=120) as http:
        for who in ("admin", "bob"):
            session = RawSession(http, world.base + "/mcp", world.keys[who])  # type: ignore[arg-type]
            for tool in session.tools():
                for field_ in sorted(tool["inputSchema"].get("properties", {})):
                    for bad in NO_TEXT:
                        caplog.clear()
                        response, reply = session.call(tool["name"], {field_: bad})
                        _check(response, caplog, f"{who} {tool['name']} {field_}")
                        assert reply is not None, response.text[:200]
                        if "error" in reply:
                            assert reply["error"]["message"].startswith(f"Invalid params: {field_}: holds a"), reply
                            continue
                        said = reply["result"]["content"][0]["text"]
                        assert reply["result"]["isError"], (tool["name"], field_, said)
                        assert said.startswith(f"{field_}: holds a") or any(r in said for r in refused_first), (
                            tool["name"],
                            field_,
                            said,
                        )
