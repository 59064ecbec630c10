"""Finding and probing processes: whether Bolt answers on a URI with these credentials, what
listens on a port, a process's command line and whether it is alive (a zombie is not)."""

from __future__ import annotations

import os
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ProbeResult:
    reachable: bool  # Bolt answered a real query with these credentials
    auth_failed: bool
    error: str | None = None
    version: str | None = None
    edition: str | None = None


# Popen handles of servers started by this Python process, so a stop() from any runtime
# object can reap them (otherwise a killed child stays a zombie and still "exists").
CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


def bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def probe_bolt(
    uri: str,
    user: str,
    password: str | None,
    database: str | None = None,
    timeout: float = 3.0,
    details: bool = False,
) -> ProbeResult:
    """Run ``RETURN 1`` (and ``dbms.components()`` when ``details``) over Bolt; never raises."""
    import neo4j
    from neo4j.exceptions import AuthError, ClientError, DriverError, Neo4jError

    try:
        driver = neo4j.GraphDatabase.driver(
            uri,
            auth=(user, password or ""),
            connection_timeout=timeout,
            connection_acquisition_timeout=timeout,
            max_connection_pool_size=2,
            notifications_min_severity="OFF",
            warn_notification_severity="OFF",
        )
    except (DriverError, ValueError) as exc:
        return ProbeResult(False, False, f"{exc.__class__.__name__}: {exc}")
    try:
        with driver.session(database=database) as session:
            session.run("RETURN 1").consume()
            version = edition = None
            if details:
                for record in session.run("CALL dbms.components() YIELD name, versions, edition"):
                    if record["name"] == "Neo4j Kernel":
                        version = (record["versions"] or [None])[0]
                        edition = record["edition"]
        return ProbeResult(True, False, None, version, edition)
    except AuthError as exc:
        return ProbeResult(False, True, f"authentication failed: {exc.message or exc}")
    except ClientError as exc:
        if "Security" in (exc.code or ""):
            return ProbeResult(False, True, f"{exc.code}: {exc.message}")
        return ProbeResult(False, False, f"{exc.code}: {exc.message}")
    except (Neo4jError, DriverError, OSError) as exc:
        return ProbeResult(False, False, f"{exc.__class__.__name__}: {' '.join(str(exc).split())}")  # one line
    finally:
        driver.close()


def port_listener(host: str, port: int) -> str | None:
    """None if nothing accepts connections on host:port, else a short description of it."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # Binding is the real question (can Neo4j listen there?). Connecting alone can be fooled by
    # TCP self-connect on ephemeral ports once a server died.
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
            return None
        except OSError:
            pass
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.settimeout(1.0)
        if sock.connect_ex((host, port)) != 0:
            return "a process that has bound it (not accepting connections)"
        try:  # Bolt handshake: magic + 4 version proposals; a Bolt server answers 4 bytes
            sock.sendall(b"\x60\x60\xb0\x17" + b"\x00\x00\x01\xff" + b"\x00\x08\x08\x05" + b"\x00" * 8)
            reply = sock.recv(4)
        except OSError:
            reply = b""
    if len(reply) == 4 and reply[:2] == b"\x00\x00":
        return "a Bolt server (another Neo4j?)"
    return "a process that is not a Bolt server"


def read_cmdline(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except FileNotFoundError:
        return None
    except OSError:
        pass
    try:  # macOS / no procfs
        out = subprocess.run(
            ["ps", "-o", "command=", "-p", str(pid)],
            check=False,
            capture_output=True,
            text=True,
            timeout=5,
        ).stdout.strip()
        return out or None
    except (OSError, subprocess.TimeoutExpired):
        return None


def pid_alive(pid: int) -> bool:
    child = CHILDREN.get(pid)
    if child is not None:
        if child.poll() is None:
            return True
        CHILDREN.pop(pid, None)
        return False
    return process_alive(pid)


def process_alive(pid: int) -> bool:
    """Whether a process of this machine runs under ``pid`` (another user's counts; a zombie
    does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie still answers kill(0)
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True
