"""Run a real local Neo4j Community server, owned by maxy: install, start, stop and status.
Its configuration is :mod:`.conf`, its class-data sharing :mod:`.cds`, how processes are
found and probed :mod:`.processes`.

The server is Neo4j's own entry point (``org.neo4j.server.Neo4jCommunity``) started directly
with ``java -cp <cache>/neo4j/<version>/lib/*`` - no tarball, no Docker, no ``bin/neo4j``
script. Layout under ``home`` (``settings.neo4j_home`` = ``<config dir>/neo4j``)::

    conf/neo4j.conf          generated (conf/neo4j-extra.conf, if present, is appended)
    data/                    databases + transaction logs (survive restarts)
    logs/console.log         the JVM's stdout/stderr (Neo4j's user log in console mode)
    logs/neo4j.log, debug.log
    run/maxy-neo4j.pid       pid of the running server
    plugins/, import/

Nothing here launches a process when ``settings.neo4j_is_managed`` is false (remote server,
cluster, Aura): use :func:`ensure_running`, which then only checks connectivity.
"""

from __future__ import annotations

import fcntl
import logging
import os
import secrets
import signal
import subprocess
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maxy.logs import log_line
from maxy.neo4j.cds import ClassDataSharing
from maxy.neo4j.conf import Folders, jvm_options, render_conf
from maxy.neo4j.fetch import ensure_neo4j_jars
from maxy.neo4j.footprint import describe_disk, disk_footprint, memory_fit
from maxy.neo4j.java import JavaInfo, Neo4jRuntimeError, find_java
from maxy.neo4j.memory import MemoryPlan, conf_memory, format_bytes, plan_memory, read_machine_memory
from maxy.neo4j.processes import CHILDREN, ProbeResult, bracketed, pid_alive, port_listener, probe_bolt, read_cmdline

if TYPE_CHECKING:
    from maxy.config import Settings

DEFAULT_VERSION = "2026.08.1"
ENTRY_POINT = "org.neo4j.server.Neo4jCommunity"
ADMIN_TOOL = "org.neo4j.cli.AdminTool"
PID_FILE = "maxy-neo4j.pid"
CONSOLE_LOG = "console.log"
CONSOLE_LOG_ROTATE_BYTES = 20_000_000


class Neo4jStartError(Neo4jRuntimeError):
    pass


class Neo4jAuthError(Neo4jRuntimeError):
    pass


class PortInUseError(Neo4jRuntimeError):
    pass


class ExternallyManagedError(Neo4jRuntimeError):
    pass


@dataclass(frozen=True)
class StartResult:
    pid: int
    port: int
    uri: str
    ms: int
    already_running: bool
    java: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class StopResult:
    was_running: bool
    clean: bool  # exited on SIGTERM within the timeout (False only when SIGKILL was needed)
    killed: bool
    pid: int | None
    ms: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class InstallResult:
    lib: Path
    conf_changed: bool
    password_set: bool
    ms: int


def _ms(since: float) -> int:
    return int((time.monotonic() - since) * 1000)


class Neo4jRuntime:
    """One local Neo4j server: its home directory, port, password, version and JVM."""

    def __init__(
        self,
        home: Path,
        port: int,
        password: str | None,
        version: str = DEFAULT_VERSION,
        heap: str | None = "1g",
        pagecache: str | None = "512m",
        java: JavaInfo | None = None,
        *,
        host: str = "127.0.0.1",
        user: str = "neo4j",
        database: str | None = None,
        managed: bool = True,
        uri: str | None = None,
    ) -> None:
        self.home = Path(home).expanduser().absolute()
        self.port = int(port)
        self.password = password
        self.version = version
        # None: chosen from the machine's available memory when the server starts (memory.py)
        self.heap_setting = heap
        self.pagecache_setting = pagecache
        self._memory: MemoryPlan | None = None
        self._java = java
        self.host = host
        self.user = user
        self.database = database
        self.managed = managed
        self.uri = uri if (uri and not managed) else f"bolt://{bracketed(host)}:{self.port}"
        self.cds = ClassDataSharing(self.run_dir)

    @classmethod
    def from_settings(cls, settings: Settings) -> Neo4jRuntime:
        host, port = settings.neo4j_host_port
        listen = "127.0.0.1" if host == "localhost" else host
        return cls(
            home=settings.neo4j_home,
            port=port,
            password=settings.NEO4J_PASSWORD,
            version=settings.NEO4J_VERSION,
            heap=settings.NEO4J_HEAP,  # None when unset: chosen from the available memory
            pagecache=settings.NEO4J_PAGECACHE,
            host=listen,
            user=settings.NEO4J_USER,
            database=settings.NEO4J_DATABASE,
            managed=settings.neo4j_is_managed,
            uri=settings.NEO4J_URI,
        )

    # -- paths ---------------------------------------------------------------------------
    @property
    def conf_dir(self) -> Path:
        return self.home / "conf"

    @property
    def conf_file(self) -> Path:
        return self.conf_dir / "neo4j.conf"

    @property
    def data_dir(self) -> Path:
        return self.home / "data"

    @property
    def logs_dir(self) -> Path:
        return self.home / "logs"

    @property
    def run_dir(self) -> Path:
        return self.home / "run"

    @property
    def plugins_dir(self) -> Path:
        return self.home / "plugins"

    @property
    def import_dir(self) -> Path:
        return self.home / "import"

    @property
    def pid_file(self) -> Path:
        return self.run_dir / PID_FILE

    @property
    def console_log(self) -> Path:
        return self.logs_dir / CONSOLE_LOG

    @property
    def initialised(self) -> bool:
        """True once the server has started at least once (the system database holds the users)."""
        return (self.data_dir / "databases" / "system").is_dir()

    # -- memory ----------------------------------------------------------------------------
    def memory(self) -> MemoryPlan:
        """The heap and page cache: the set ones; for an unset one, the size the running server's
        conf holds, else the size chosen from the memory available now (kept for this object's
        next start)."""
        if self._memory is None:
            in_effect: tuple[str | None, str | None] = (None, None)
            if self.conf_file.is_file() and self.running_pid() is not None:
                in_effect = conf_memory(self.conf_file.read_text())
            self._memory = plan_memory(self.heap_setting, self.pagecache_setting, read_machine_memory(), in_effect)
        return self._memory

    @property
    def heap(self) -> str:
        return self.memory().heap

    @property
    def pagecache(self) -> str:
        return self.memory().pagecache

    # -- java / jars / conf --------------------------------------------------------------
    @property
    def java(self) -> JavaInfo:
        if self._java is None:
            self._java = find_java()
        return self._java

    def lib_dir(self) -> Path:
        return ensure_neo4j_jars(self.version, java=self.java)

    def jvm_options(self) -> list[str]:
        return jvm_options(self.java, self.heap, self.logs_dir)

    def _folders(self) -> Folders:
        return Folders(self.data_dir, self.logs_dir, self.plugins_dir, self.run_dir, self.import_dir)

    def render_conf(self, lib: Path | None = None) -> str:
        return render_conf(self._folders(), self.conf_dir, self.host, self.port, self.heap, self.pagecache, lib)

    def cds_archive(self, lib: Path) -> Path | None:
        return self.cds.archive(self.java, lib)

    def _log_memory(self) -> None:
        plan = self.memory()
        log_line(
            "neo4j",
            "memory",
            level=logging.WARNING if plan.tight else logging.INFO,
            heap=plan.heap,
            pagecache=plan.pagecache,
            available=format_bytes(plan.available).replace(" ", ""),
            source=plan.source,
            **({"warning": "leaves-the-os-under-1GiB"} if plan.tight else {}),
        )

    def _require_managed(self, action: str) -> None:
        if not self.managed:
            raise ExternallyManagedError(
                f"NEO4J_URI={self.uri} is managed outside maxy (NEO4J_MANAGED / a non-local URI), "
                f"so maxy will not {action} it. Set NEO4J_MANAGED=true and a bolt://127.0.0.1:<port> "
                f"NEO4J_URI to let maxy run a local server."
            )

    def _require_password(self) -> str:
        if not self.password:
            raise Neo4jAuthError(
                "NEO4J_PASSWORD is not set. Run the installer (or ensure_password(settings)) to "
                "generate one into <config dir>/.env, or set NEO4J_PASSWORD yourself."
            )
        if len(self.password) < 8:
            raise Neo4jAuthError("NEO4J_PASSWORD must be at least 8 characters (Neo4j's minimum).")
        return self.password

    def _admin_env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["NEO4J_HOME"] = str(self.home)
        env["NEO4J_CONF"] = str(self.conf_dir)
        return env

    def install(self) -> InstallResult:
        """Jars (cached), directories, neo4j.conf, and the initial password before the first start.

        Idempotent: a second call rewrites nothing and takes milliseconds.
        """
        self._require_managed("install")
        password = self._require_password()
        if self.user != "neo4j":
            raise Neo4jAuthError(f"NEO4J_USER={self.user}: the managed server only provisions the 'neo4j' user.")
        started = time.monotonic()
        lib = self.lib_dir()
        try:
            self.home.mkdir(parents=True, exist_ok=True)
            os.chmod(self.home, 0o700)
            for d in (
                self.conf_dir,
                self.data_dir,
                self.logs_dir,
                self.run_dir,
                self.plugins_dir,
                self.import_dir,
            ):
                d.mkdir(parents=True, exist_ok=True)
            conf_changed = self._write_conf(lib)
        except OSError as err:
            raise self._fs_fault(err) from None
        password_set = False
        if not self.initialised:
            self._set_initial_password(lib, password)
            password_set = True
        result = InstallResult(lib, conf_changed, password_set, _ms(started))
        log_line(
            "neo4j",
            "install",
            version=self.version,
            home=self.home,
            conf_changed=conf_changed,
            password_set=password_set,
            ms=result.ms,
        )
        return result

    def _write_conf(self, lib: Path) -> bool:
        text = self.render_conf(lib)
        if self.conf_file.is_file() and self.conf_file.read_text() == text:
            return False
        tmp = self.conf_file.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, self.conf_file)
        return True

    def _set_initial_password(self, lib: Path, password: str) -> None:
        cmd = [
            str(self.java.path),
            *(["--sun-misc-unsafe-memory-access=allow"] if self.java.major >= 23 else []),
            "--enable-native-access=ALL-UNNAMED",
            "-cp",
            f"{lib}/*",
            ADMIN_TOOL,
            "dbms",
            "set-initial-password",
            "--",  # end of options: a password starting with "-" is still the password
            # picocli reads "@name" as the file name's contents even after "--"; "@@" keeps one "@"
            "@" + password if password.startswith("@") else password,
        ]
        proc = subprocess.run(
            cmd,
            check=False,
            env=self._admin_env(),
            cwd=self.home,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        if proc.returncode != 0:
            output = (proc.stdout + proc.stderr).replace(password, "***")
            # The JVM's "WARNING:" lines (native access, Unsafe) are noise, not the reason.
            lines = [ln for ln in output.splitlines() if ln.strip() and not ln.startswith("WARNING:")]
            raise Neo4jStartError(
                f"neo4j-admin dbms set-initial-password failed for {self.home} (exit {proc.returncode}): "
                f"{lines[0].strip() if lines else 'no output'}. The server has no password yet: fix the "
                f"cause, or set another NEO4J_PASSWORD (8+ characters) in the environment or "
                f"<config dir>/.env, then run `maxy neo4j start` again. neo4j-admin said:\n" + "\n".join(lines[-20:])
            )

    # -- process -------------------------------------------------------------------------
    def _is_our_process(self, pid: int) -> bool:
        cmdline = read_cmdline(pid)
        if cmdline is None:
            return False
        return ENTRY_POINT in cmdline and f" --home-dir={self.home} " in f" {cmdline.strip()} "

    def _scan_for_server(self) -> int | None:
        proc_dir = Path("/proc")
        if not proc_dir.is_dir():
            return None
        needle = f"--home-dir={self.home}".encode()
        for entry in proc_dir.iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if ENTRY_POINT.encode() in cmdline and needle + b"\0" in cmdline + b"\0":
                pid = int(entry.name)
                if pid_alive(pid):
                    return pid
        return None

    def running_pid(self) -> int | None:
        """Pid of this home's server if it is alive (from the pid file, else by scanning /proc)."""
        pid: int | None = None
        try:
            pid = int(self.pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            pid = None
        if pid is not None and pid_alive(pid) and (pid in CHILDREN or self._is_our_process(pid)):
            # (a child of ours is trusted as is: while a killed JVM tears down, /proc/<pid>/cmdline
            # is already empty but its threads still hold the port until it can be reaped)
            return pid
        found = self._scan_for_server()
        if found is not None:
            self._write_pid(found)
        return found

    def _write_pid(self, pid: int) -> None:
        tmp = self.pid_file.with_suffix(".tmp")
        try:
            self.run_dir.mkdir(parents=True, exist_ok=True)
            tmp.write_text(f"{pid}\n")
            os.replace(tmp, self.pid_file)
        except OSError as err:  # the pid file only spares a /proc scan: a read-only home still works
            log_line("neo4j", "pid-file", level=logging.WARNING, written=False, error=err.strerror or str(err))

    def _remove_stale_pid(self) -> bool:
        if self.pid_file.exists():
            try:
                stale = self.pid_file.read_text().strip()
            except OSError:
                stale = "?"
            self.pid_file.unlink(missing_ok=True)
            log_line("neo4j", "stale-pid", pid=stale, removed=True)
            return True
        return False

    def probe(self, details: bool = False, timeout: float = 3.0) -> ProbeResult:
        return probe_bolt(
            self.uri,
            self.user,
            self.password,
            self.database,
            timeout=timeout,
            details=details,
        )

    def _log_offset(self) -> int:
        try:
            return self.console_log.stat().st_size
        except FileNotFoundError:
            return 0

    def _log_since(self, offset: int, lines: int = 30) -> str:
        try:
            with open(self.console_log, "rb") as fh:
                fh.seek(offset)
                text = fh.read().decode(errors="replace")
        except FileNotFoundError:
            return "(no console log)"
        return "\n".join(text.rstrip().splitlines()[-lines:]) or "(console log is empty)"

    def _lock_file(self) -> Path:
        return self.run_dir / "maxy-neo4j.lock"

    @contextmanager
    def _lock(self) -> Iterator[None]:
        """Serialise start/stop of this home across processes (two CLIs, a CLI and a server)."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        with open(self._lock_file(), "w") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def start(self, timeout: float = 120.0) -> StartResult:
        """Start the server (or return at once if it is already running and answering).

        Waits until Bolt answers ``RETURN 1`` with the password. Raises Neo4jStartError with the
        last lines of ``logs/console.log`` if the JVM exits early or does not answer in time.
        """
        self._require_managed("start")
        self._require_password()
        try:
            self.home.mkdir(mode=0o700, parents=True, exist_ok=True)
            self.run_dir.mkdir(parents=True, exist_ok=True)
            self._lock_file().touch()
        except OSError as err:
            # A read-only or full config folder still lets a running server be reported as such.
            pid = self.running_pid()
            if pid is None:
                raise self._fs_fault(err) from None
            return self._already_running(pid, time.monotonic(), timeout)
        with self._lock():
            return self._start(timeout)

    def _fs_fault(self, err: OSError) -> Neo4jStartError:
        from maxy.fsfaults import describe

        path = Path(err.filename) if err.filename else self.home
        inside = path == self.home or self.home in path.parents
        return Neo4jStartError(describe(err, path, setting="MAXY_CONFIG_DIR" if inside else None))

    def _already_running(self, pid: int, started: float, timeout: float) -> StartResult:
        self._memory = None  # an unset size is the one the running server was started with
        if self.conf_file.is_file() and self.conf_file.read_text() != self.render_conf(self.lib_dir()):
            raise Neo4jStartError(
                f"Neo4j (pid {pid}) is running with an older {self.conf_file}; stop it and start "
                f"again to apply the new settings (port, memory, ...)."
            )
        self._wait_ready(pid, None, started, timeout, self._log_offset(), launched=False)
        result = StartResult(pid, self.port, self.uri, _ms(started), True, self.java.describe())
        log_line(
            "neo4j",
            "start",
            pid=pid,
            port=self.port,
            already_running=True,
            ms=result.ms,
        )
        return result

    def _start(self, timeout: float) -> StartResult:
        started = time.monotonic()
        pid = self.running_pid()
        if pid is not None:
            return self._already_running(pid, started, timeout)
        stale = self._remove_stale_pid()
        self.cds.publish(clean=False)  # a previous server died without a clean stop
        self._memory = None  # sized now, from the memory available at this start

        listener = port_listener(self.host, self.port)
        settle = time.monotonic() + (3.0 if stale else 0.0)  # a dead server's port frees a bit later
        while listener is not None and time.monotonic() < settle:
            time.sleep(0.2)
            listener = port_listener(self.host, self.port)
        if listener is not None:
            raise PortInUseError(
                f"Port {self.port} on {self.host} is already in use by {listener}, not by the Neo4j "
                f"that maxy manages in {self.home}. Stop that process, or choose a free port with "
                f"NEO4J_URI=bolt://127.0.0.1:<port> (in the environment or <config dir>/.env)."
            )

        install = self.install()
        java = self.java
        self._log_memory()
        cmd = [
            str(java.path),
            *self.jvm_options(),
            *self.cds.options(self.java, install.lib),
            "-cp",
            # lib first: the CDS archive records the class path and accepts appended entries only
            f"{install.lib}/*:{self.plugins_dir}/*",
            ENTRY_POINT,
            f"--home-dir={self.home}",
            f"--config-dir={self.conf_dir}",
            "--console-mode",
        ]
        self._rotate_console_log()
        offset = self._log_offset()
        with open(self.console_log, "ab") as log:
            log.write(
                f"=== maxy: starting Neo4j {self.version} at {time.strftime('%Y-%m-%dT%H:%M:%S%z')} "
                f"with {java.describe()} ===\n".encode()
            )
            log.flush()
            proc = subprocess.Popen(
                cmd,
                cwd=self.home,
                env=self._admin_env(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                close_fds=True,
            )
        CHILDREN[proc.pid] = proc
        self._write_pid(proc.pid)
        try:
            self._wait_ready(proc.pid, proc, started, timeout, offset, launched=True)
        except Neo4jRuntimeError:
            if proc.poll() is None:
                self._terminate(proc.pid, timeout=30)
            self.pid_file.unlink(missing_ok=True)
            self.cds.publish(clean=False)
            raise
        result = StartResult(proc.pid, self.port, self.uri, _ms(started), False, java.describe())
        log_line(
            "neo4j",
            "start",
            pid=proc.pid,
            port=self.port,
            java=java.major,
            ms=result.ms,
        )
        return result

    def _wait_ready(
        self,
        pid: int,
        proc: subprocess.Popen[bytes] | None,
        started: float,
        timeout: float,
        offset: int,
        launched: bool,
    ) -> None:
        deadline = started + timeout
        last_error = "no answer yet"
        while True:
            exited = (proc.poll() is not None) if proc is not None else not pid_alive(pid)
            if exited:
                code = proc.returncode if proc is not None else "?"
                raise Neo4jStartError(
                    f"Neo4j exited during start-up (exit code {code}). Last lines of {self.console_log}:\n"
                    f"{self._log_since(offset)}"
                )
            result = self.probe(timeout=2.0)
            if result.reachable:
                return
            if result.auth_failed:
                raise Neo4jAuthError(
                    f"Neo4j at {self.uri} is up but rejected the password for user '{self.user}' "
                    f"({result.error}). NEO4J_PASSWORD must be the password this server was "
                    f"initialised with (first start of {self.data_dir}); fix it in the environment "
                    f"or <config dir>/.env."
                )
            last_error = result.error or last_error
            if time.monotonic() >= deadline:
                what = "started" if launched else f"was already running (pid {pid})"
                raise Neo4jStartError(
                    f"Neo4j {what} but Bolt on {self.uri} did not answer within {timeout:.0f}s "
                    f"(last error: {last_error}). Last lines of {self.console_log}:\n"
                    f"{self._log_since(offset)}"
                )
            time.sleep(0.25)

    def _rotate_console_log(self) -> None:
        try:
            if self.console_log.stat().st_size > CONSOLE_LOG_ROTATE_BYTES:
                os.replace(self.console_log, self.console_log.with_suffix(".log.1"))
        except FileNotFoundError:
            pass

    def _terminate(self, pid: int, timeout: float) -> tuple[bool, bool]:
        """SIGTERM, wait up to ``timeout``, then SIGKILL. Returns (clean, killed)."""
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            return True, False
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not pid_alive(pid):
                return True, False
            time.sleep(0.1)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            return True, False
        for _ in range(100):
            if not pid_alive(pid):
                break
            time.sleep(0.1)
        return False, True

    def stop(self, timeout: float = 60.0) -> StopResult:
        """SIGTERM and wait for Neo4j's clean shutdown (checkpoint); SIGKILL only after ``timeout``."""
        self._require_managed("stop")
        if not self.home.is_dir():
            return StopResult(False, True, False, None, 0)
        with self._lock():
            return self._stop(timeout)

    def _stop(self, timeout: float) -> StopResult:
        started = time.monotonic()
        pid = self.running_pid()
        if pid is None:
            self._remove_stale_pid()
            result = StopResult(False, True, False, None, _ms(started))
            log_line("neo4j", "stop", running=False, ms=result.ms)
            return result
        clean, killed = self._terminate(pid, timeout)
        self.pid_file.unlink(missing_ok=True)
        CHILDREN.pop(pid, None)
        self._memory = None  # the next start sizes it again
        self.cds.publish(clean)
        result = StopResult(True, clean, killed, pid, _ms(started))
        if killed:
            # Neo4j will replay its transaction log on the next start
            log_line(
                "neo4j",
                "stop",
                pid=pid,
                clean=False,
                killed=True,
                ms=result.ms,
                level=logging.WARNING,
            )
        else:
            log_line("neo4j", "stop", pid=pid, clean=True, ms=result.ms)
        return result

    # -- introspection -------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """running, pid, bolt_reachable, version, edition, uri, home, java (+ a few extras)."""
        java_desc: str | None
        java_error: str | None = None
        try:
            java_desc = self.java.describe()
        except Neo4jRuntimeError as exc:
            java_desc, java_error = None, str(exc).splitlines()[0]
        pid = self.running_pid() if self.managed else None
        probe = self.probe(details=True) if (pid is not None or not self.managed) else None
        status: dict[str, Any] = {
            "managed": self.managed,
            "running": pid is not None if self.managed else bool(probe and probe.reachable),
            "pid": pid,
            "bolt_reachable": bool(probe and probe.reachable),
            "auth_ok": None if probe is None else (probe.reachable or not probe.auth_failed),
            "version": probe.version if probe else None,
            "edition": probe.edition if probe else None,
            "configured_version": self.version,
            "uri": self.uri,
            "port": self.port,
            "home": str(self.home),
            "java": java_desc,
            "log": str(self.console_log),
            "pid_file": str(self.pid_file),
            "cds_archive": self._cds_status(),
            "memory": self._memory_status(pid),
            "disk": self._disk_status(),
            "error": probe.error if probe else None,
        }
        if java_error:
            status["java_error"] = java_error
        return status

    def _memory_status(self, pid: int | None) -> dict[str, Any] | None:
        """The sizes the running server uses (from its conf), or those the next start would take."""
        if not self.managed:
            return None
        try:
            plan = self.memory()
        except OSError as err:  # an unreadable conf: status still reports the rest
            return {"error": str(err)}
        status = dict(plan.as_dict(), in_effect=pid is not None, text=plan.describe())
        disk = self._disk_status()
        if disk is not None and "error" not in disk:
            status["fit"] = memory_fit(disk, plan)
        return status

    def _disk_status(self) -> dict[str, Any] | None:
        """Bytes the database takes on disk, by the memory that serves each part (footprint.py)."""
        if not self.managed:
            return None
        try:
            disk = disk_footprint(self.home, self.database)
        except OSError as err:
            return {"error": str(err)}
        return None if disk is None else dict(disk, text=describe_disk(disk))

    def _cds_status(self) -> str | None:
        try:
            from maxy.neo4j.fetch import jars_ready, neo4j_lib_dir

            if not jars_ready(self.version):
                return None
            archive = self.cds_archive(neo4j_lib_dir(self.version))
        except Neo4jRuntimeError:
            return None
        return str(archive) if archive is not None and archive.is_file() else None

    def logs(self, lines: int = 100, follow: bool = False, which: str = "console") -> Iterator[str]:
        """The last ``lines`` lines of ``logs/console.log`` (or ``debug``/``neo4j``), then, with
        ``follow``, new lines as they are written (until the caller stops iterating)."""
        return _tail_lines(self.log_path(which), lines, follow)

    def log_path(self, which: str = "console") -> Path:
        return self.console_log if which == "console" else self.logs_dir / f"{which}.log"


def _tail_lines(path: Path, lines: int, follow: bool, poll: float = 0.5) -> Iterator[str]:
    position = 0
    if path.exists():
        with open(path, "rb") as fh:
            last = deque(fh, maxlen=max(lines, 0))
            position = fh.tell()
        for raw in last:
            yield raw.decode(errors="replace").rstrip("\n")
    if not follow:
        return
    pending = b""
    while True:
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            size = 0
        if size < position:  # truncated or rotated
            position = 0
        if size > position:
            with open(path, "rb") as fh:
                fh.seek(position)
                chunk = fh.read()
                position = fh.tell()
            pending += chunk
            *complete, pending = pending.split(b"\n")
            for raw in complete:
                yield raw.decode(errors="replace")
        else:
            time.sleep(poll)


# -- settings-level helpers ------------------------------------------------------------------


def ensure_password(settings: Settings) -> str:
    """NEO4J_PASSWORD, generating and storing one (``<config dir>/.env``, mode 0600) if unset."""
    from maxy.config import env_file, write_env_values

    if settings.NEO4J_PASSWORD:
        return settings.NEO4J_PASSWORD
    if not settings.neo4j_is_managed:
        raise Neo4jAuthError(
            f"NEO4J_PASSWORD is not set for the external Neo4j at NEO4J_URI={settings.NEO4J_URI}; "
            f"set it in the environment or in {env_file()}."
        )
    runtime = Neo4jRuntime.from_settings(settings)
    if runtime.initialised:
        raise Neo4jAuthError(
            f"NEO4J_PASSWORD is not set, but the Neo4j in {runtime.home} was already initialised "
            f"with a password. Put that password in {env_file()} as NEO4J_PASSWORD=... "
            f"(a new one cannot be generated for an existing database)."
        )
    password = secrets.token_urlsafe(24)
    # 1 in 64 would start with "-", which any tool it is passed to may read as an option.
    while password.startswith("-"):
        password = secrets.token_urlsafe(24)
    path = write_env_values({"NEO4J_PASSWORD": password, "NEO4J_URI": settings.NEO4J_URI})
    log_line("neo4j", "password", generated=True, env=path)
    return password


def ensure_running(settings: Settings, timeout: float = 120.0) -> dict[str, Any]:
    """Make Neo4j usable and return its status.

    Managed (local) server: generate the password if needed, install and start it.
    External server (remote, cluster, Aura; ``neo4j_is_managed`` false): launch nothing, only
    check connectivity with the driver and report it.
    """
    if not settings.neo4j_is_managed:
        started = time.monotonic()
        probe = probe_bolt(
            settings.NEO4J_URI,
            settings.NEO4J_USER,
            settings.NEO4J_PASSWORD,
            settings.NEO4J_DATABASE,
            timeout=5.0,
            details=True,
        )
        log_line(
            "neo4j",
            "external",
            uri=settings.NEO4J_URI,
            reachable=probe.reachable,
            auth_failed=probe.auth_failed,
            ms=_ms(started),
        )
        return {
            "managed": False,
            "running": probe.reachable,
            "pid": None,
            "bolt_reachable": probe.reachable,
            "auth_ok": probe.reachable or not probe.auth_failed,
            "version": probe.version,
            "edition": probe.edition,
            "uri": settings.NEO4J_URI,
            "home": None,
            "java": None,
            "error": probe.error,
            "message": (
                f"Neo4j at {settings.NEO4J_URI} is externally managed (NEO4J_MANAGED="
                f"{settings.NEO4J_MANAGED}); maxy does not start or stop it."
            ),
        }
    password = ensure_password(settings)
    if password != settings.NEO4J_PASSWORD:
        settings = settings.model_copy(update={"NEO4J_PASSWORD": password})
    runtime = Neo4jRuntime.from_settings(settings)
    result = runtime.start(timeout=timeout)
    status = runtime.status()
    status["started"] = not result.already_running
    status["start_ms"] = result.ms
    return status
