"""Neo4j down, killed or hung: every call fails in bounded time with one clear line.

A refused port stands for a stopped server; a TCP proxy in front of the real server
(tests/tcp_proxy.py) stands for a killed one (every connection reset, the port closed) and a
hung one (connections open, nothing answers). The shared server itself is never touched.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator

import pytest
from maxy.config import Settings
from maxy.db import SERVER_GRACE_S as GRACE_S
from maxy.db import Database
from maxy.errors import DatabaseUnavailable
from maxy.neo4j import Neo4jRuntime

from tests.cli_inprocess import maxy
from tests.plugins_fixture.helpers import CLI, REPO, child_env
from tests.tcp_proxy import TcpProxy

pytestmark = pytest.mark.alone  # times its calls against bounds, one beside a second server

QUERY_TIMEOUT_S = 2.0


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again on exit: connecting is refused


def _timed(call) -> tuple[float, str]:
    started = time.monotonic()
    with pytest.raises(DatabaseUnavailable) as info:
        call()
    return time.monotonic() - started, str(info.value)


@pytest.fixture()
def proxy(neo4j_ready: Settings) -> Iterator[TcpProxy]:
    with TcpProxy(neo4j_ready.neo4j_host_port[1], neo4j_ready.neo4j_host_port[0]) as p:
        yield p


@pytest.fixture()
def proxied(proxy: TcpProxy, neo4j_ready: Settings) -> Iterator[Database]:
    settings = neo4j_ready.model_copy(update={"NEO4J_URI": proxy.uri, "NEO4J_QUERY_TIMEOUT_S": QUERY_TIMEOUT_S})
    with Database(settings) as db:
        assert db.read("RETURN 1 AS one") == [{"one": 1}]  # a pooled connection, through the proxy
        yield db


@pytest.mark.parametrize("scheme", ["bolt", "neo4j"])
def test_refused_port_fails_at_once_with_one_line(neo4j_ready: Settings, scheme: str) -> None:
    uri = f"{scheme}://127.0.0.1:{_closed_port()}"
    with Database(neo4j_ready.model_copy(update={"NEO4J_URI": uri})) as db:
        for call in (lambda: db.read("RETURN 1"), lambda: db.write_tx(lambda tx: tx.run("RETURN 1").data())):
            waited, message = _timed(call)
            assert waited < 2.0
            assert "\n" not in message
            assert message.startswith(f"Neo4j is not reachable at {uri} (") and "Connection refused" in message
        assert db.failure is not None and "not reachable" in db.failure


def test_cli_with_neo4j_stopped_prints_one_line_quickly(account, data_root, neo4j_ready: Settings) -> None:
    uri = f"bolt://127.0.0.1:{_closed_port()}"
    env = child_env(data_root, ACCOUNT_ID=account.account_id, NEO4J_URI=uri)
    started = time.monotonic()
    proc = maxy(["search", "anything"], env)
    waited = time.monotonic() - started
    assert proc.returncode != 0
    errors = [line for line in proc.stderr.splitlines() if not line.startswith("[")]  # log lines aside
    assert errors == [
        f"error: Neo4j is not reachable at {uri} ([Errno 111] Connection refused): "
        "start the local server with `maxy neo4j start`"
    ], proc.stderr
    assert "retried" not in proc.stderr and "Traceback" not in proc.stderr
    assert waited < 2.0 + _cli_start_s(env), proc.stderr


def _cli_start_s(env: dict[str, str]) -> float:
    started = time.monotonic()
    subprocess.run([*CLI, "--help"], env=env, cwd=REPO, capture_output=True, timeout=60, check=True)
    return time.monotonic() - started


def test_killed_server_fails_the_next_call_at_once(proxy: TcpProxy, proxied: Database) -> None:
    proxy.kill()  # the pooled connection is reset, reconnecting is refused
    for call in (lambda: proxied.read("RETURN 1"), lambda: proxied.write("RETURN 1")):
        waited, message = _timed(call)
        assert waited < 2.0
        assert "not reachable" in message and "Connection refused" in message


def test_hung_server_is_given_up_on_after_the_query_timeout(proxy: TcpProxy, proxied: Database) -> None:
    proxy.freeze()  # the server stops answering on the connection the pool holds
    waited, message = _timed(lambda: proxied.read("RETURN 1"))
    assert QUERY_TIMEOUT_S <= waited < QUERY_TIMEOUT_S + GRACE_S + 1.0
    assert "did not answer" in message and "NEO4J_QUERY_TIMEOUT_S=2" in message and "\n" not in message
    assert proxied.failure == message

    # a write transaction and a fresh connection (accepted, never answered) are bounded the same way
    waited, message = _timed(lambda: proxied.write_tx(lambda tx: tx.run("RETURN 1").data()))
    assert waited < QUERY_TIMEOUT_S + GRACE_S + 1.0 and "did not answer" in message
    waited, message = _timed(lambda: proxied.ping())
    assert waited < 1.0 + GRACE_S + 1.0 and "did not answer" in message

    proxy.resume()  # the server is back: calls succeed and the failure is cleared
    assert proxied.read("RETURN 1 AS one") == [{"one": 1}]
    assert proxied.failure is None


def test_a_query_longer_than_the_timeout_is_stopped_by_the_server(neo4j_ready: Settings) -> None:
    with Database(neo4j_ready.model_copy(update={"NEO4J_QUERY_TIMEOUT_S": 1.0})) as db:
        started = time.monotonic()
        with pytest.raises(DatabaseUnavailable) as info:
            db.read("UNWIND range(1, 10000000000) AS x WITH x WHERE x < 0 RETURN count(*) AS n")
        assert time.monotonic() - started < 1.0 + GRACE_S
        assert "stopped a query that ran longer than NEO4J_QUERY_TIMEOUT_S=1s" in str(info.value)
        # a longer timeout for one call, as schema apply's index wait uses
        assert db.read("RETURN 1 AS one", timeout_=60) == [{"one": 1}]


@pytest.mark.slow  # starts a second Neo4j server (a JVM)
def test_a_second_real_server_frozen_then_killed(tmp_path, neo4j_ready: Settings) -> None:
    """The same faults on a real Neo4j of this test's own (its own home and port): SIGSTOP, then
    SIGCONT, then kill -9."""
    password = "maxy-faults-" + os.urandom(6).hex()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    runtime = Neo4jRuntime(tmp_path / "home", port, password, heap="256m", pagecache="64m")
    runtime.install()
    pid = runtime.start(timeout=180).pid
    settings = neo4j_ready.model_copy(
        update={"NEO4J_URI": runtime.uri, "NEO4J_PASSWORD": password, "NEO4J_QUERY_TIMEOUT_S": QUERY_TIMEOUT_S}
    )
    try:
        with Database(settings) as db:
            assert db.read("RETURN 1 AS one") == [{"one": 1}]
            os.kill(pid, signal.SIGSTOP)
            try:
                waited, message = _timed(lambda: db.write("CREATE (:MaxyFaultTest)"))
            finally:
                os.kill(pid, signal.SIGCONT)
            assert QUERY_TIMEOUT_S <= waited < QUERY_TIMEOUT_S + GRACE_S + 1.0
            assert "did not answer" in message
            assert db.read("RETURN 1 AS one") == [{"one": 1}]  # back after SIGCONT

            os.kill(pid, signal.SIGKILL)
            time.sleep(0.5)  # the kernel closes its sockets
            waited, message = _timed(lambda: db.read("RETURN 1"))
            assert waited < 2.0 and "not reachable" in message and "Connection refused" in message
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        runtime.stop(timeout=30)
