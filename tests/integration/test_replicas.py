"""Two `maxy serve` replicas sharing one Neo4j and one DATA_ROOT behave as one server: a console
session opened on one works on the other and ends on both at logout, a login link opens once
across both (two racing posts: exactly one wins), a revoked key is refused by both within the
bound, and a stateless /mcp answers a real MCP client whose requests alternate between them.
Two `create_app` instances under uvicorn on two ports, the real Neo4j."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from maxy.accounts import create_account, validate_account
from maxy.config import load_settings
from maxy.plugins.discovery import discover_plugins
from maxy.serving.app import create_app
from maxy.serving.keys import ApiKey, create_api_key, revoke_api_key
from maxy.webconsole.login import consume_login, mint_login
from maxy.webconsole.sessions import COOKIE, ConsoleSessions
from mcp import Client, ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import purge_account
from tests.console_site import open_link
from tests.local_http import serve_app
from tests.plugins_fixture.helpers import ACCEPT, INIT
from tests.replicas import Alternating

REVOCATION_BOUND_S = 2.0  # docs/scaling.md, "What replicas share"


@dataclass
class Replicas:
    a: str
    b: str
    root: Path
    account_id: str
    admin: ApiKey
    admin_secret: str
    public_secret: str
    db: Any

    def link(self, key: ApiKey | None = None) -> str:
        key = key or self.admin
        return f"/console/login?token={mint_login(self.db, key.account_id, key.key_id)}"


@pytest.fixture(scope="module")
def replicas(db, tmp_path_factory) -> Iterator[Replicas]:
    root = tmp_path_factory.mktemp("replicas") / "data"
    root.mkdir()
    account = validate_account(root, create_account(root, "replicas").account_id)
    secret, admin = create_api_key(root, account.account_id, role="admin")
    public_secret, _ = create_api_key(root, account.account_id, role="public", agent_slug="concierge")
    settings = load_settings(DATA_ROOT=root, ACCOUNT_ID=account.account_id)
    plugins = discover_plugins(None, [])
    try:
        with (
            serve_app(create_app(plugins, settings, stateless=True)) as a,
            serve_app(create_app(plugins, settings, stateless=True)) as b,
        ):
            yield Replicas(a, b, root, account.account_id, admin, secret, public_secret, db)
    finally:
        purge_account(db, account.account_id)


def _csrf(client: httpx.Client, base: str) -> str:
    page = client.get(f"{base}/console/status")
    assert page.status_code == 200, page.status_code
    return re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]


def test_a_session_opened_on_one_replica_works_on_the_other_and_logout_ends_it_on_both(replicas: Replicas) -> None:
    with httpx.Client(timeout=60) as browser:
        assert open_link(browser, replicas.a + replicas.link()).status_code == 303
        cookie = browser.cookies[COOKIE]
        assert browser.get(f"{replicas.b}/console/search").status_code == 200  # the same cookie, the other replica
        csrf_a, csrf_b = _csrf(browser, replicas.a), _csrf(browser, replicas.b)
        assert csrf_a == csrf_b  # one session, one CSRF token, whichever replica drew the page
        logout = browser.post(f"{replicas.b}/console/logout", data={"csrf": csrf_a}, headers={"origin": replicas.b})
        assert logout.status_code == 200
    for base in (replicas.a, replicas.b):
        with httpx.Client(timeout=60) as again:
            again.cookies.set(COOKIE, cookie, path="/console")
            assert again.get(f"{base}/console/search").status_code == 401, base


def test_a_link_used_on_one_replica_is_refused_on_the_other(replicas: Replicas) -> None:
    link = replicas.link()
    with httpx.Client(timeout=60) as first:
        assert open_link(first, replicas.a + link).status_code == 303
    with httpx.Client(timeout=60) as second:
        refused = open_link(second, replicas.b + link)
        assert refused.status_code == 401 and COOKIE not in second.cookies


def _race(calls: list[Any]) -> list[Any]:
    """Each call in its own thread, all released at once; their answers in the order given."""
    start = threading.Barrier(len(calls))
    answers: list[Any] = [None] * len(calls)

    def run(i: int) -> None:
        start.wait()
        answers[i] = calls[i]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def _login_post(base: str, token: str) -> int:
    with httpx.Client(timeout=60) as client:
        return client.post(f"{base}/console/login", data={"token": token}, headers={"origin": base}).status_code


def test_two_replicas_racing_for_one_link_open_exactly_one_session(replicas: Replicas) -> None:
    for _ in range(4):
        token = replicas.link().split("token=")[1]
        answers = _race([partial(_login_post, base, token) for base in (replicas.a, replicas.b)])
        assert sorted(answers) == [303, 401], answers


def test_many_racing_consumers_of_one_link_exactly_one_wins(replicas: Replicas) -> None:
    """The statement itself, eight threads at once on one link, ten times over."""
    for _ in range(10):
        token = mint_login(replicas.db, replicas.account_id, replicas.admin.key_id)
        logins = _race([partial(consume_login, replicas.db, token) for _ in range(8)])
        assert sum(login is not None for login in logins) == 1, logins


def test_seen_is_written_only_when_it_moved_by_more_than_a_minute(replicas: Replicas) -> None:
    sessions = ConsoleSessions(replicas.db)
    cookie, opened = sessions.open(replicas.account_id, replicas.admin.key_id)
    digest_seen = "MATCH (s:ConsoleSession {keyId: $key, csrf: $csrf}) RETURN s.seen AS seen, s.expires AS expires"
    before = replicas.db.read(digest_seen, key=replicas.admin.key_id, csrf=opened.csrf)[0]
    assert sessions.get(cookie) is not None
    assert replicas.db.read(digest_seen, key=replicas.admin.key_id, csrf=opened.csrf)[0] == before  # no write
    replicas.db.write(
        "MATCH (s:ConsoleSession {csrf: $csrf}) SET s.seen = s.seen - 61000, s.created = s.created - 61000",
        csrf=opened.csrf,
    )
    touched = sessions.get(cookie)
    assert touched is not None and touched.seen >= before["seen"]
    after = replicas.db.read(digest_seen, key=replicas.admin.key_id, csrf=opened.csrf)[0]
    assert after["seen"] >= before["seen"] and after["expires"] >= before["expires"]
    replicas.db.write(  # idle for 31 minutes: gone, and deleted
        "MATCH (s:ConsoleSession {csrf: $csrf}) SET s.seen = s.seen - 31 * 60000", csrf=opened.csrf
    )
    assert sessions.get(cookie) is None
    assert not replicas.db.read(digest_seen, key=replicas.admin.key_id, csrf=opened.csrf)


def test_expired_sessions_are_swept_in_bounded_batches_when_one_opens(replicas: Replicas) -> None:
    sessions = ConsoleSessions(replicas.db)
    stale = [sessions.open(replicas.account_id, "sweep-test")[1].csrf for _ in range(3)]
    replicas.db.write("MATCH (s:ConsoleSession {keyId: 'sweep-test'}) SET s.expires = 0")
    sessions.open(replicas.account_id, replicas.admin.key_id)
    left = replicas.db.read("MATCH (s:ConsoleSession) WHERE s.csrf IN $stale RETURN count(s) AS n", stale=stale)
    assert left[0]["n"] == 0
    indexes = replicas.db.read(
        "SHOW INDEXES YIELD labelsOrTypes, properties WHERE 'ConsoleSession' IN labelsOrTypes RETURN properties"
    )
    assert ["expires"] in [r["properties"] for r in indexes] and ["digest"] in [r["properties"] for r in indexes]


def _init_status(base: str, secret: str) -> int:
    return httpx.post(f"{base}/mcp", json=INIT, headers={**ACCEPT, "x-api-key": secret}, timeout=30).status_code


def test_a_revoked_key_is_refused_by_both_replicas_within_the_bound(replicas: Replicas) -> None:
    secret, key = create_api_key(replicas.root, replicas.account_id, role="admin")
    assert _init_status(replicas.a, secret) == 200 and _init_status(replicas.b, secret) == 200
    with httpx.Client(timeout=60) as browser:
        assert open_link(browser, replicas.a + replicas.link(key)).status_code == 303
        assert browser.get(f"{replicas.b}/console/status").status_code == 200
        revoked_at = time.monotonic()
        assert revoke_api_key(replicas.root, key.key_id)
        refused: dict[str, float] = {}
        while len(refused) < 2 and time.monotonic() - revoked_at < REVOCATION_BOUND_S:
            for base in (replicas.a, replicas.b):
                if base not in refused and _init_status(base, secret) == 401:
                    refused[base] = time.monotonic() - revoked_at
        assert set(refused) == {replicas.a, replicas.b}, refused
        assert max(refused.values()) < REVOCATION_BOUND_S
        for base in (replicas.a, replicas.b):
            assert browser.get(f"{base}/console/status").status_code == 401  # its console session ended too


async def _alternating_calls(replicas: Replicas) -> tuple[list[Any], Alternating]:
    transport = Alternating([replicas.a, replicas.b])
    async with (
        httpx2.AsyncClient(
            transport=transport, headers={"x-api-key": replicas.admin_secret}, timeout=httpx2.Timeout(30, read=120)
        ) as http,
        streamable_http_client(f"{replicas.a}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = await session.list_tools()
        written = await session.call_tool(
            "memory-write", {"labels": ["Note"], "properties": {"name": "Replica note", "text": "kept by both"}}
        )
        assert not written.is_error, written.content
        node = (written.structured_content or {})["nodeId"]
        got = [await session.call_tool("memory-get", {"nodeIds": [node]}) for _ in range(3)]
        return [tools, written, *got], transport


def test_stateless_mcp_answers_a_client_whose_requests_alternate_between_replicas(replicas: Replicas) -> None:
    results, transport = anyio.run(_alternating_calls, replicas)
    tools, _written, *got = results
    assert "memory-write" in {t.name for t in tools.tools}
    for answer in got:
        assert not answer.is_error, answer.content
        assert "Replica note" in str(answer.structured_content), answer.structured_content  # written on the other
    posts = [port for port, method in transport.served if method == "POST"]
    assert len(posts) >= 6 and set(posts) == set(transport.ports)  # each replica answered tool calls


async def _modern_calls(base_a: str, base_b: str, secret: str) -> list[Any]:
    answers = []
    for base in (base_a, base_b, base_a):
        async with (
            httpx2.AsyncClient(headers={"x-api-key": secret}, timeout=httpx2.Timeout(30, read=120)) as http,
            Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client,
        ):
            answers.append(await client.list_tools())
    return answers


def test_stateless_mcp_still_pins_every_request_to_its_key(replicas: Replicas) -> None:
    for base in (replicas.a, replicas.b):
        assert _init_status(base, "mxy_0123456789ab_not-a-real-secret") == 401
        assert httpx.post(f"{base}/mcp", json=INIT, headers=ACCEPT, timeout=30).status_code == 401
        opened = httpx.post(f"{base}/mcp", json=INIT, headers={**ACCEPT, "x-api-key": replicas.admin_secret})
        assert opened.status_code == 200 and "mcp-session-id" not in opened.headers  # no session is kept
    public = anyio.run(_modern_calls, replicas.a, replicas.b, replicas.public_secret)
    admin = anyio.run(_modern_calls, replicas.a, replicas.b, replicas.admin_secret)
    public_tools = [{t.name for t in listed.tools} for listed in public]
    admin_tools = {t.name for t in admin[0].tools}
    assert all(names == public_tools[0] for names in public_tools)
    assert "memory-write" in admin_tools and "memory-write" not in public_tools[0]  # the public role's own set


def test_stateful_sessions_are_each_replica_own(db, replicas: Replicas) -> None:
    """Without --stateless, a session opened on one replica is unknown on the other (404): what a
    client sees when the load balancer is not sticky or its replica died."""
    settings = load_settings(DATA_ROOT=replicas.root, ACCOUNT_ID=replicas.account_id)
    plugins = discover_plugins(["memory"], [])
    headers = {**ACCEPT, "x-api-key": replicas.admin_secret}
    with (
        serve_app(create_app(plugins, settings, stateless=False)) as a,
        serve_app(create_app(plugins, settings, stateless=False)) as b,
    ):
        opened = httpx.post(f"{a}/mcp", json=INIT, headers=headers, timeout=30)
        session = opened.headers["mcp-session-id"]
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        same = httpx.post(f"{a}/mcp", json=ping, headers={**headers, "mcp-session-id": session}, timeout=30)
        other = httpx.post(f"{b}/mcp", json=ping, headers={**headers, "mcp-session-id": session}, timeout=30)
        assert same.status_code == 200 and other.status_code == 404


KEY_WRITER = """
import sys, time
from pathlib import Path
from maxy.serving.keys import create_api_key
time.sleep(max(0.0, float(sys.argv[4]) - time.time()))  # both start writing at the same moment
for _ in range(int(sys.argv[3])):
    create_api_key(Path(sys.argv[1]), sys.argv[2], role="admin")
"""


def test_two_processes_creating_keys_at_once_lose_none(replicas: Replicas) -> None:
    """Two commands on one DATA_ROOT (as on two machines sharing it) change one key file in turn."""
    import subprocess
    import sys

    from maxy.serving.keys import list_api_keys

    before = len(list_api_keys(replicas.root, replicas.account_id))
    start = str(time.time() + 5)
    command = [sys.executable, "-c", KEY_WRITER, str(replicas.root), replicas.account_id, "40", start]
    writers = [subprocess.Popen(command, stderr=subprocess.DEVNULL) for _ in range(2)]
    assert [writer.wait(timeout=120) for writer in writers] == [0, 0]
    assert len(list_api_keys(replicas.root, replicas.account_id)) == before + 80
