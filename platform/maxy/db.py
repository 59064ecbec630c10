"""The Neo4j driver, with reads routed as reads and writes as writes, and every wait bounded.

Works the same against the local managed server (``bolt://``), a cluster or Aura
(``neo4j://`` / ``neo4j+s://`` routing URIs). ``read`` runs a read transaction (a cluster may
answer it from any member), ``write``, ``write_tx`` and ``autocommit`` run on the leader; all of
them share one bookmark manager, so a read sees every write made before it through the same
``Database``.

Failing fast: a server that refuses the connection, cannot be resolved or does not accept
it within ``NEO4J_CONNECT_TIMEOUT_S`` fails the call at once with one line; only transient
errors (deadlocks, a cluster changing leader, a pooled connection the server closed) are
retried. Every query and transaction carries ``NEO4J_QUERY_TIMEOUT_S`` to the server, which
stops one that runs longer; a server that stops answering altogether (hung, frozen) is given
up on a little after that time. ``CALL {...} IN TRANSACTIONS`` batch jobs (``autocommit``)
run as long as they need.
"""

from __future__ import annotations

import contextvars
import logging
import queue
import random
import socket
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import neo4j
from neo4j import GraphDatabase, RoutingControl
from neo4j.exceptions import (
    AuthError,
    ConnectionAcquisitionTimeoutError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
)

from .config import Settings, env_file, get_settings
from .errors import ConfigError, DatabaseUnavailable
from .logs import log_line

T = TypeVar("T")

RETRY_TIME_S = 10.0  # transient errors are retried for this long
PING_TIMEOUT_S = 1.0  # /health's round trip
SERVER_GRACE_S = 3.0  # Neo4j checks transaction timeouts every 2 s: past this, the server is not answering
_inside = threading.local()  # set in the thread that runs a bounded call: nested calls run inline
# The pool logs "Unable to retrieve routing information" before raising what Database reports in one line.
logging.getLogger("neo4j.pool").setLevel(logging.CRITICAL)


class Database:
    def __init__(self, settings: Settings | None = None):
        self.settings = settings or get_settings()
        if not self.settings.NEO4J_PASSWORD:
            raise ConfigError(
                f"NEO4J_PASSWORD is not set (looked in the environment and {env_file()}): "
                "run `maxy setup` to install the local server and generate one, or export NEO4J_PASSWORD"
            )
        self.uri = self.settings.NEO4J_URI
        self.database = self.settings.NEO4J_DATABASE or None
        self.query_timeout: float | None = self.settings.NEO4J_QUERY_TIMEOUT_S or None
        #: The last call's error while the server is unreachable or hung; None once a call succeeds.
        self.failure: str | None = None
        self.driver = GraphDatabase.driver(
            self.uri,
            auth=(self.settings.NEO4J_USER, self.settings.NEO4J_PASSWORD),
            max_connection_pool_size=50,
            connection_timeout=self.settings.NEO4J_CONNECT_TIMEOUT_S,
            # a free pooled connection, or the handshake of a server that accepted and went silent
            connection_acquisition_timeout=self.query_timeout or 60.0,
            max_transaction_retry_time=0,  # retried here, transient errors only: a refused connection is not one
            notifications_min_severity="OFF",
        )

    # -- plain queries -------------------------------------------------------------------
    def read(self, query: str, *, timeout_: float | None = None, **params: Any) -> list[dict[str, Any]]:
        """Rows of a read query; ``timeout_`` (seconds) replaces NEO4J_QUERY_TIMEOUT_S for this one."""
        return self._run(query, params, RoutingControl.READ, timeout_)

    def read_packed(self, query: str, columns: tuple[str, ...], **params: Any) -> list[dict[str, Any]]:
        """Rows of a read query that returns them packed into one, ``RETURN collect([a, b, ...])
        AS rows``, named by ``columns``; the values must be plain (no node, relationship or
        path). The driver builds a Python record per row, which costs more than the query for a
        few hundred rows; one record holding a list is decoded in bulk, several times cheaper."""
        return [dict(zip(columns, row, strict=True)) for row in self.read_rows(query, **params)]

    def read_rows(self, query: str, **params: Any) -> list[list[Any]]:
        """``read_packed``'s rows as the lists the query packed, in its column order (no dict per
        row: a search's paths read hundreds of rows, each row an object the process allocates)."""

        def call() -> list[list[Any]]:
            records, _, _ = self.driver.execute_query(
                neo4j.Query(query, timeout=self.query_timeout),
                params,
                routing_=RoutingControl.READ,
                database_=self.database,
            )
            return records[0]["rows"] if records else []

        return self._call(call, self.query_timeout)

    def write(self, query: str, *, timeout_: float | None = None, **params: Any) -> list[dict[str, Any]]:
        """Rows of a write query; ``timeout_`` (seconds) replaces NEO4J_QUERY_TIMEOUT_S for this one."""
        return self._run(query, params, RoutingControl.WRITE, timeout_)

    def _run(
        self, query: str, params: dict[str, Any], routing: RoutingControl, timeout: float | None
    ) -> list[dict[str, Any]]:
        limit = timeout or self.query_timeout
        bounded = neo4j.Query(query, timeout=limit)

        def call() -> list[dict[str, Any]]:
            records, _, _ = self.driver.execute_query(bounded, params, routing_=routing, database_=self.database)
            return [_row(r) for r in records]

        return self._call(call, limit)

    # -- managed transactions (transient errors retried) ---------------------------------
    def write_tx(self, work: Callable[[neo4j.ManagedTransaction], T]) -> T:
        limit = self.query_timeout

        @neo4j.unit_of_work(timeout=limit)
        def unit(tx: neo4j.ManagedTransaction) -> T:
            return work(tx)

        def call() -> T:
            with self._session() as session:
                return session.execute_write(unit)

        return self._call(call, limit)

    def autocommit(self, query: str, **params: Any) -> list[dict[str, Any]]:
        """For ``CALL {...} IN TRANSACTIONS``, which cannot run inside a managed transaction.

        Batch jobs run as long as they need (no query timeout); a dead server is still noticed."""

        def call() -> list[dict[str, Any]]:
            with self._session() as session:
                return [r.data() for r in session.run(query, params)]

        return self._call(call, None)

    def _session(self) -> neo4j.Session:
        """A write session (a cluster sends it to the leader) that shares the bookmarks of
        ``read``/``write``: a read after a ``write_tx`` or ``autocommit`` waits, on whichever
        member answers it, until that member has the write (causal consistency)."""
        return self.driver.session(
            database=self.database,
            default_access_mode=neo4j.WRITE_ACCESS,
            bookmark_manager=self.driver.execute_query_bookmark_manager,
        )

    def server_info(self) -> dict[str, Any]:
        rows = self.read("CALL dbms.components() YIELD name, versions, edition RETURN name, versions, edition")
        kernel = next((r for r in rows if r["name"] == "Neo4j Kernel"), rows[0] if rows else {})
        return {"version": (kernel.get("versions") or ["?"])[0], "edition": kernel.get("edition")}

    def ping(self, timeout: float = PING_TIMEOUT_S) -> float:
        """Milliseconds for one round trip; raises DatabaseUnavailable within ``timeout`` + SERVER_GRACE_S."""
        started = time.perf_counter()
        self.read("RETURN 1 AS ok", timeout_=timeout)
        return round((time.perf_counter() - started) * 1000, 1)

    def close(self) -> None:
        self.driver.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- bounded, retried calls ----------------------------------------------------------
    def _call(self, call: Callable[[], T], limit: float | None) -> T:
        """``call`` with transient errors retried, given up on a little after ``limit`` seconds."""
        try:
            result = self._bounded(lambda: self._retried(call), limit)
        except DatabaseUnavailable as err:
            self.failure = str(err)
            raise
        self.failure = None
        return result

    def _retried(self, call: Callable[[], T]) -> T:
        give_up = time.monotonic() + RETRY_TIME_S
        delay = 0.1
        fresh_connection_tried = False
        reason: Exception
        while True:
            try:
                return call()
            except (ServiceUnavailable, SessionExpired) as err:
                if went_silent(err):
                    raise self._silent(None) from err
                if fresh_connection_tried or cannot_connect(err):
                    raise self._unavailable(err) from err
                fresh_connection_tried = True  # a pooled connection the server closed (a restart): one more try
                reason = err
            except ConnectionAcquisitionTimeoutError as err:  # every pooled connection busy, none could open
                raise self._silent(None) from err
            except AuthError as err:
                raise self._auth(err) from err
            except Neo4jError as err:
                if "TransactionTimedOut" in (err.code or ""):
                    raise self._timed_out(err) from err
                if not err.is_retryable() or time.monotonic() + delay > give_up:
                    raise
                reason = err
                time.sleep(delay * random.uniform(0.5, 1.5))  # writers that collided do not retry in step
                delay = min(delay * 2, 1.0)
            log_line("db", "retry", error=type(reason).__name__, detail=one_line(reason)[:160])

    def _bounded(self, call: Callable[[], T], limit: float | None) -> T:
        """Run ``call`` in a daemon thread and stop waiting for it a grace period after ``limit``:
        the driver cannot time out a read from a server that went silent mid-query."""
        if limit is None or getattr(_inside, "active", False):
            return call()
        wait = limit + SERVER_GRACE_S  # a live server stops the query itself before this
        box: dict[str, Any] = {}
        done = threading.Event()

        def run() -> None:
            try:
                box["value"] = call()
            except BaseException as err:  # noqa: BLE001 - handed to the waiting caller
                box["error"] = err
            finally:
                done.set()

        _WORKERS.submit(contextvars.copy_context(), run)
        if not done.wait(wait):
            raise self._silent(wait)
        if "error" in box:
            raise box["error"]
        return box["value"]

    # -- one-line errors -----------------------------------------------------------------
    def _hint(self) -> str:
        if self.settings.neo4j_is_managed:
            return "start the local server with `maxy neo4j start`"
        return "check that the server is up and NEO4J_URI is right"

    def _unavailable(self, err: Exception) -> DatabaseUnavailable:
        return DatabaseUnavailable(f"Neo4j is not reachable at {self.uri} ({root_reason(err)}): {self._hint()}")

    def _silent(self, waited: float | None) -> DatabaseUnavailable:
        where = "`maxy neo4j status` and `maxy neo4j logs`" if self.settings.neo4j_is_managed else "the server"
        within = f"within {waited:g}s " if waited is not None else ""
        return DatabaseUnavailable(
            f"Neo4j at {self.uri} did not answer {within}(NEO4J_QUERY_TIMEOUT_S="
            f"{self.settings.NEO4J_QUERY_TIMEOUT_S:g}): it is hung or overloaded; check {where}, "
            "or raise NEO4J_QUERY_TIMEOUT_S"
        )

    def _timed_out(self, err: Neo4jError) -> DatabaseUnavailable:
        return DatabaseUnavailable(
            f"Neo4j at {self.uri} stopped a query that ran longer than NEO4J_QUERY_TIMEOUT_S="
            f"{self.settings.NEO4J_QUERY_TIMEOUT_S:g}s: raise NEO4J_QUERY_TIMEOUT_S, or narrow the request"
        )

    def _auth(self, err: Exception) -> DatabaseUnavailable:
        return DatabaseUnavailable(
            f"Neo4j at {self.uri} refused the credentials for user {self.settings.NEO4J_USER!r}: "
            f"check NEO4J_PASSWORD in the environment or {env_file()} ({one_line(err)})"
        )


_GRAPH_TYPES = (neo4j.graph.Node, neo4j.graph.Relationship, neo4j.graph.Path)


def _row(record: neo4j.Record) -> dict[str, Any]:
    """A record as a dict. The driver's ``Record.data()`` rebuilds every nested list and map to
    turn nodes, relationships and paths into plain values, which costs more than the query
    itself for a few hundred rows of properties: it is used only when the row holds one."""
    values = record.values()
    if any(_holds_graph(v) for v in values):
        return record.data()
    return dict(zip(record.keys(), values, strict=True))


_PLAIN_TYPES = (str, int, float, bool, type(None))


def _holds_graph(value: Any) -> bool:
    if isinstance(value, list):
        return any(_holds_graph(v) for v in value if not isinstance(v, _PLAIN_TYPES))
    if isinstance(value, dict):
        return any(_holds_graph(v) for v in value.values() if not isinstance(v, _PLAIN_TYPES))
    return isinstance(value, _GRAPH_TYPES)


class _Workers:
    """Daemon threads for bounded calls, reused: a call stuck on a silent server keeps its thread
    (until the driver gives up on the socket) and never holds up the process's exit."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[contextvars.Context, Callable[[], None]]] = queue.SimpleQueue()
        self._idle = 0
        self._lock = threading.Lock()

    def submit(self, context: contextvars.Context, job: Callable[[], None]) -> None:
        with self._lock:
            spawn = self._idle == 0
            if not spawn:
                self._idle -= 1
        if spawn:
            threading.Thread(target=self._serve, name="neo4j-call", daemon=True).start()
        self._jobs.put((context, job))

    def _serve(self) -> None:
        _inside.active = True
        while True:
            context, job = self._jobs.get()
            context.run(job)
            with self._lock:
                self._idle += 1


_WORKERS = _Workers()


def _causes(err: BaseException) -> list[BaseException]:
    """``err``, its causes and, for an exception group (routing), every sub-exception's."""
    seen: list[BaseException] = []
    todo = [err]
    while todo:
        current = todo.pop(0)
        if current in seen:
            continue
        seen.append(current)
        if isinstance(current, BaseExceptionGroup):
            todo.extend(current.exceptions)
        follow = current.__cause__ or current.__context__
        if follow is not None:
            todo.append(follow)
    return seen


def cannot_connect(err: BaseException) -> bool:
    """True when no connection could be made at all (refused, unknown host, no answer in time):
    trying again at once would only fail again."""
    for cause in _causes(err):
        if isinstance(cause, ConnectionRefusedError | socket.gaierror | TimeoutError):
            return True
        text = str(cause)
        if "establish connection" in text or "DNS resolve" in text:
            return True
    return False


def went_silent(err: BaseException) -> bool:
    """True when the server accepted the connection but never answered the handshake: it is hung
    or overloaded, not gone."""
    return any("handshake" in str(c) for c in _causes(err))


def one_line(err: BaseException) -> str:
    return " ".join(str(err).split())


def root_reason(err: BaseException) -> str:
    """The innermost message (``[Errno 111] Connection refused``), on one line."""
    causes = [c for c in _causes(err) if str(c) and not isinstance(c, BaseExceptionGroup)]
    return one_line(causes[-1] if causes else err)
