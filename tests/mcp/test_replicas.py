"""Three real ``maxy serve`` processes on one Neo4j and one DATA_ROOT, as replicas behind a
load balancer (tests/replicas.py starts them): what one replica is told, the others know, and
a replica killed with SIGKILL mid-write loses no write it acknowledged while the others keep
answering. MCP clients are the SDK's streamable HTTP client in the default stateful mode, each
session held to one replica (sticky routing), as a load balancer does by ``mcp-session-id``;
and, started stateless, the replicas answer a client whose every request goes to the next
replica, share console sessions, and run each round of the negotiation sweep once."""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from maxy.serving.keys import create_api_key, revoke_api_key
from maxy.webconsole.login import mint_login
from maxy.webconsole.sessions import COOKIE
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.console_site import open_link
from tests.plugins_fixture.helpers import text
from tests.replicas import Alternating, Replicas, RoundRobin, mcp_session

GET_BATCH = 50  # memory-get's most ids per call


@pytest.fixture()
def fleet(request: pytest.FixtureRequest, db, data_root: Path, tmp_path: Path):
    """Three replicas; a test that needs them started otherwise names the ``env`` and ``args``
    of every replica: ``@pytest.mark.parametrize("fleet", [{"args": [...]}], indirect=True)``."""
    started = getattr(request, "param", {})
    with Replicas(data_root, tmp_path / "logs", 3, env=started.get("env"), args=started.get("args", ())) as replicas:
        yield replicas


async def _write(session: ClientSession, fact: str) -> str:
    result = await session.call_tool("memory-write", {"labels": ["Fact"], "properties": {"text": fact}})
    assert not result.is_error, text(result)
    return str(result.structured_content["nodeId"])


async def _found(session: ClientSession, ids: list[str]) -> set[str]:
    """The ids memory-get returns, asked in batches it accepts."""
    found: set[str] = set()
    for i in range(0, len(ids), GET_BATCH):
        result = await session.call_tool("memory-get", {"nodeIds": ids[i : i + GET_BATCH], "hops": 0})
        assert not result.is_error, text(result)
        found |= {n["nodeId"] for n in result.structured_content["nodes"]}
    return found


def test_what_one_replica_is_told_every_replica_knows(fleet: Replicas, account, data_root: Path) -> None:
    key, record = create_api_key(data_root, account.account_id, role="admin")  # made after the replicas started
    spread = RoundRobin(fleet.urls)

    async def scenario() -> dict[str, Any]:
        written: dict[str, str] = {}
        for _ in fleet.replicas:  # one session on each replica in turn, each writing a fact
            url = spread.next()
            async with mcp_session(url, key) as session:
                written[url] = await _write(session, f"the boiler was serviced, as told to {url}")
        seen = {}
        for replica in fleet.replicas:
            async with mcp_session(replica.url, key) as session:
                seen[replica.url] = await _found(session, list(written.values()))
        return {"written": written, "seen": seen}

    out = asyncio.run(scenario())
    assert sorted(out["written"]) == sorted(fleet.urls)  # the round robin reached each replica once
    every = set(out["written"].values())
    assert len(every) == 3
    assert out["seen"] == {url: every for url in fleet.urls}  # each write read back through every replica

    health = [spread.get("/health") for _ in range(6)]
    assert [r.status_code for r in health] == [200] * 6
    assert all(r.json()["database"]["reachable"] for r in health)

    revoke_api_key(data_root, record.key_id)
    refused = [httpx2.post(url + "/mcp", headers={"x-api-key": key}, json={}, timeout=30) for url in fleet.urls]
    assert [r.status_code for r in refused] == [401, 401, 401]  # one key file: revoked for all at once
    assert [fleet.problems(r.index) for r in fleet.replicas] == [[], [], []]


# -- one replica killed with SIGKILL while every client writes ----------------------------------
CLIENTS = 6  # two pinned to each replica
WRITES = 10  # facts each client has acknowledged by the end
KILL_AFTER = 2  # acknowledged writes every client has before the kill
VICTIM = 1


@dataclass
class Writer:
    """One agent writing WRITES facts, each session held to one replica. When its replica goes
    away it marks it down, opens a session on the next one and writes on, the fact in flight
    first (sent again: its outcome is unknown)."""

    number: int
    home: str
    key: str
    spread: RoundRobin
    acked: list[tuple[str, str, str]] = field(default_factory=list)  # (fact, nodeId, replica URL)
    failures: list[tuple[str, str]] = field(default_factory=list)  # (replica URL, what went wrong)
    in_doubt: list[str] = field(default_factory=list)  # facts whose call failed after being sent
    replicas: list[str] = field(default_factory=list)  # every replica it held a session with

    def fact(self, n: int) -> str:
        return f"writer {self.number} recorded reading {n} of the boiler pressure"

    async def run(self) -> None:
        url = self.home
        while len(self.acked) < WRITES:
            sent = False
            try:
                async with mcp_session(url, self.key, timeout_s=90) as session:
                    self.replicas.append(url)
                    while len(self.acked) < WRITES:
                        fact = self.fact(len(self.acked))
                        sent = True
                        node_id = await _write(session, fact)
                        self.acked.append((fact, node_id, url))
                        sent = False
            except Exception as err:  # noqa: BLE001 - a lost replica surfaces as any transport error
                self.failures.append((url, _cause(err)))
                if sent:
                    self.in_doubt.append(self.fact(len(self.acked)))
                self.spread.down(url)
                url = self.spread.next()


def _cause(err: BaseException) -> str:
    """The innermost error of what a lost session raised (the SDK wraps it in task groups)."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    return f"{type(err).__name__}: {err}"[:200]


async def _watch(urls: list[str], stop: asyncio.Event, answers: list[tuple[str, int | str]]) -> None:
    """GET /health of each of ``urls`` every quarter second until ``stop``."""
    async with httpx2.AsyncClient(timeout=60) as http:
        while not stop.is_set():
            for url in urls:
                try:
                    answers.append((url, (await http.get(url + "/health")).status_code))
                except httpx2.HTTPError as err:
                    answers.append((url, type(err).__name__))
            await asyncio.sleep(0.25)


def test_a_replica_killed_mid_write_loses_no_acknowledged_write(fleet: Replicas, db, account, data_root: Path) -> None:
    key, _ = create_api_key(data_root, account.account_id, role="admin")
    victim = fleet[VICTIM]
    survivors = [r.url for r in fleet.replicas if r is not victim]
    spread = RoundRobin(fleet.urls)
    writers = [Writer(n, fleet.urls[n % 3], key, spread) for n in range(CLIENTS)]
    health: list[tuple[str, int | str]] = []
    kill_at: list[int] = []

    async def scenario() -> None:
        stop = asyncio.Event()
        watcher = asyncio.create_task(_watch(survivors, stop, health))
        tasks = [asyncio.create_task(w.run()) for w in writers]
        deadline = time.monotonic() + 120
        while min(len(w.acked) for w in writers) < KILL_AFTER:  # every writer mid-run, none done
            if time.monotonic() > deadline or any(t.done() for t in tasks):
                break  # a writer stopped or stalls: the assertions below say which
            await asyncio.sleep(0.02)
        fleet.kill(VICTIM)
        kill_at.append(sum(len(w.acked) for w in writers))
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=300)
        stop.set()
        await watcher

    asyncio.run(scenario())
    on_victim = [w for w in writers if w.home == victim.url]
    elsewhere = [w for w in writers if w.home != victim.url]

    # the kill came while every writer was mid-run
    assert not victim.alive and KILL_AFTER * CLIENTS <= kill_at[0] < WRITES * CLIENTS
    # the other replicas answered every call and every health check throughout
    assert [w.failures for w in elsewhere] == [[]] * len(elsewhere)
    assert all(w.replicas == [w.home] for w in elsewhere)
    assert health and {status for _, status in health} == {200}
    assert {url for url, _ in health} == set(survivors)
    # the victim's writers lost their session once, went on through another replica, and finished
    for w in on_victim:
        assert [url for url, _ in w.failures] == [victim.url], w.failures
        assert len(w.replicas) == 2 and w.replicas[0] == victim.url and w.replicas[1] in survivors
        assert len(w.in_doubt) <= 1
        assert any(url == victim.url for _, _, url in w.acked)  # some writes were acknowledged by the victim
    assert all(len(w.acked) == WRITES for w in writers)

    # every acknowledged write reads back through a replica other than the one that acknowledged it
    acked = [(node_id, url) for w in writers for _, node_id, url in w.acked]

    async def read_back() -> dict[str, set[str]]:
        found = {}
        for reader in survivors:
            async with mcp_session(reader, key) as session:
                found[reader] = await _found(session, [node_id for node_id, url in acked if url != reader])
        return found

    found = asyncio.run(read_back())
    for reader in survivors:
        assert found[reader] == {node_id for node_id, url in acked if url != reader}
    assert {node_id for node_id, _ in acked} <= set().union(*found.values())

    # in the graph: every fact of every writer, and nothing but them; only a fact whose call was
    # cut off by the kill may be there twice (sent again, its first try may have committed)
    rows = db.read("MATCH (f:Fact {accountId: $acc}) RETURN f.text AS text", acc=account.account_id)
    facts = [r["text"] for r in rows]
    assert set(facts) == {w.fact(n) for w in writers for n in range(WRITES)}
    doubled = {f for f in facts if facts.count(f) > 1}
    assert doubled <= {f for w in on_victim for f in w.in_doubt}
    assert [fleet.problems(i) for i in (0, 2)] == [[], []]


# -- stateless replicas: console sessions, a client spread over all three, one sweep per round ---
SWEEP_INTERVAL_S = 0.5
ROUND_LINE = re.compile(r"\[lease\] round name=negotiation-sweep round=(\d+) holder=(\S+)")


async def _spread_calls(urls: list[str], key: str) -> tuple[list[Any], Alternating]:
    """One MCP client whose every request goes to the next replica: a write, then reads of it."""
    transport = Alternating(urls)
    async with (
        httpx2.AsyncClient(
            transport=transport, headers={"x-api-key": key}, timeout=httpx2.Timeout(30, read=120)
        ) as http,
        streamable_http_client(f"{urls[0]}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        node = await _write(session, "the spread client's fact, written on one replica")
        return [await session.call_tool("memory-get", {"nodeIds": [node], "hops": 0}) for _ in urls], transport


def _console_on_every_replica(urls: list[str], db: Any, account_id: str, key_id: str) -> None:
    """Log in on the first replica; the cookie works on the others; logging out on the last ends it everywhere."""
    with httpx.Client(timeout=60) as browser:
        link = f"{urls[0]}/console/login?token={mint_login(db, account_id, key_id)}"
        assert open_link(browser, link).status_code == 303
        cookie = browser.cookies[COOKIE]
        for url in urls[1:]:
            assert browser.get(f"{url}/console/search").status_code == 200, url
        page = browser.get(f"{urls[-1]}/console/status")
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
        out = browser.post(f"{urls[-1]}/console/logout", data={"csrf": csrf}, headers={"origin": urls[-1]})
        assert out.status_code == 200
    for url in urls:
        with httpx.Client(timeout=60) as again:
            again.cookies.set(COOKIE, cookie, path="/console")
            assert again.get(f"{url}/console/search").status_code == 401, url


@pytest.mark.parametrize(
    "fleet", [{"env": {"MAXY_SWEEP_INTERVAL_S": str(SWEEP_INTERVAL_S)}, "args": ["--stateless"]}], indirect=True
)
def test_stateless_replicas_share_sessions_spread_calls_and_sweep_once_a_round(
    fleet: Replicas, db, account, data_root: Path
) -> None:
    key, record = create_api_key(data_root, account.account_id, role="admin")
    _console_on_every_replica(fleet.urls, db, account.account_id, record.key_id)

    answers, transport = asyncio.run(_spread_calls(fleet.urls, key))
    for answer in answers:
        assert not answer.is_error, text(answer)
        assert "the spread client's fact" in str(answer.structured_content)
    posts = Counter(port for port, method in transport.served if method == "POST")
    assert set(posts) == {r.port for r in fleet.replicas}  # every replica answered part of one client's calls

    # the sweep: every replica runs its loop; each round is run, and logged, by one replica only
    holders = {}  # replica index -> its holder id, from its own log lines
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        logged = [ROUND_LINE.findall(r.log.read_text(errors="replace")) for r in fleet.replicas]
        if sum(map(len, logged)) >= 8:
            break
        time.sleep(SWEEP_INTERVAL_S)
    rounds: Counter[int] = Counter()
    for replica, lines in zip(fleet.replicas, logged, strict=True):
        for number, holder in lines:
            rounds[int(number)] += 1
            assert holder.split(":")[1] == str(replica.process.pid)  # a replica logs only its own rounds
            holders[replica.index] = holder
    assert sum(rounds.values()) >= 8 and set(rounds.values()) == {1}  # no round ran twice
    recorded = db.read(
        "MATCH (r:LeaseRound {name: 'negotiation-sweep'}) WHERE r.round IN $numbers "
        "RETURN r.round AS round, r.holder AS holder, r.outcome AS outcome",
        numbers=list(rounds),
    )
    assert {r["round"] for r in recorded} == set(rounds)  # each logged round has its one record
    assert {r["holder"] for r in recorded} <= set(holders.values())
    assert {r["outcome"] for r in recorded} == {"done"}

    revoke_api_key(data_root, record.key_id)
    refused = [httpx2.post(url + "/mcp", headers={"x-api-key": key}, json={}, timeout=30) for url in fleet.urls]
    assert [r.status_code for r in refused] == [401, 401, 401]
    assert all("[mcp-http] heap-settled frozen=" in r.log.read_text() for r in fleet.replicas)  # maxy serve settled
    assert [fleet.problems(r.index) for r in fleet.replicas] == [[], [], []]
