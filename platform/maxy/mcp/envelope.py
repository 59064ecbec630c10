"""Envelope warnings for the graph proxy: after a read tool's response, plan its query again
with ``EXPLAIN`` and put Neo4j's "does not exist" warnings in front of the result.

A read that names a misspelt property, label or relationship type comes back as ``[]`` with
no hint why. Neo4j says why in the query's GQL statuses (``01N50`` label, ``01N51``
relationship type, ``01N52`` property key, and the rest of ``^0[12]N5\\d$``), which an upstream
such as ``mcp-neo4j-cypher`` drops. The probe plans the same query with the same parameters
(``EXPLAIN`` never runs it), and when any of those statuses come back the response gets one
more text block, first: ``Neo4j warnings:`` and one line per warning. One
``[mcp:graph] probe warnings=N ms=..`` line per probe; a probe that fails for any reason
leaves the response byte for byte as the upstream sent it and logs
``[mcp:graph] probe-error reason=..``. That line never quotes the agent's query (a Neo4j error
is logged by its code, GQL status and position) nor a password inside a URI.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from neo4j import READ_ACCESS, GraphDatabase, Query
from neo4j.exceptions import (
    AuthError,
    CypherSyntaxError,
    DriverError,
    GqlError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
)

from ..db import went_silent
from ..logs import log_line

READ_TOOL = "read_neo4j_cypher"  # mcp-neo4j-cypher's read tool (its NEO4J_NAMESPACE prefixes it)
QUERY_ARG = "query"
PARAMS_ARG = "params"
PROBE_TIMEOUT_S = 2.0
WARNING_STATUS = re.compile(r"0[12]N5[0-9]")  # matched whole: ^0[12]N5\d$
BLOCK_TITLE = "Neo4j warnings:"
EXPLAIN = "EXPLAIN "
# The driver logs every notification at WARNING on its own logger; the probe reports them itself.
logging.getLogger("neo4j.notifications").setLevel(logging.CRITICAL)


# -- the probe's text -------------------------------------------------------------------
_SKIP = re.compile(r"(?:\s+|//[^\n]*|/\*.*?\*/)*", re.S)  # blanks and comments between words
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_VERSION = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_OPTION = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\s*=\s*[A-Za-z0-9_]+")


def _skip(query: str, at: int) -> int:
    return _SKIP.match(query, at).end()  # type: ignore[union-attr]  # matches the empty string too


def explain_text(query: str) -> str:
    """``query`` planned, never run: ``EXPLAIN`` goes first, and a ``PROFILE`` among the leading
    pre-parser words (which would run it) becomes ``EXPLAIN``. Neo4j takes ``EXPLAIN EXPLAIN``
    and ``EXPLAIN CYPHER 25 ...`` alike, and refuses ``EXPLAIN`` with ``PROFILE``, so whatever
    the query starts with, the probe cannot execute it."""
    chars = list(query)
    at = 0
    while True:
        at = _skip(query, at)
        word = _WORD.match(query, at)
        if word is None:
            break
        keyword = word.group().upper()
        if keyword == "PROFILE":
            chars[word.start() : word.end()] = "EXPLAIN"  # the same length: positions hold
        elif keyword == "CYPHER":
            at = _skip(query, word.end())
            version = _VERSION.match(query, at)
            if version is not None:
                at = _skip(query, version.end())
            while (option := _OPTION.match(query, at)) is not None:
                at = _skip(query, option.end())
            continue
        elif keyword != "EXPLAIN":
            break
        at = word.end()
    return EXPLAIN + "".join(chars)


# -- what comes back --------------------------------------------------------------------
@dataclass(frozen=True)
class GraphWarning:
    status: str
    description: str
    line: int | None = None
    column: int | None = None

    def text(self) -> str:
        where = f" (line {self.line}, column {self.column})" if self.line is not None else ""
        return f"- {self.status}{where}: {self.description}"


def is_envelope_status(status: object) -> TypeGuard[str]:
    return isinstance(status, str) and WARNING_STATUS.fullmatch(status) is not None


def source_position(line: int, column: int) -> tuple[int, int]:
    """A position in the probe's text as a position in the agent's query (the prefix is on line 1)."""
    if line == 1 and column > len(EXPLAIN):
        return line, column - len(EXPLAIN)
    return line, column


def envelope_warnings(statuses: Iterable[Any]) -> list[GraphWarning]:
    """The GQL status objects of ``^0[12]N5\\d$``, once each, in the server's order, placed in
    the agent's query."""
    found: list[GraphWarning] = []
    for status in statuses:
        code = getattr(status, "gql_status", None)
        if not is_envelope_status(code):
            continue
        position = getattr(status, "position", None)
        line = column = None
        if position is not None:
            line, column = source_position(position.line, position.column)
        warning = GraphWarning(code, " ".join(str(status.status_description).split()), line, column)
        if warning not in found:
            found.append(warning)
    return found


def warning_block(warnings: list[GraphWarning]) -> dict[str, str]:
    return {"type": "text", "text": "\n".join([BLOCK_TITLE, *(w.text() for w in warnings)])}


def is_success(result: Any) -> bool:
    """A tool result the block can go in front of: content blocks, not flagged an error."""
    return isinstance(result, dict) and result.get("isError") is not True and isinstance(result.get("content"), list)


def stitch(result: dict[str, Any], warnings: list[GraphWarning]) -> None:
    result["content"].insert(0, warning_block(warnings))


# -- where the probe goes ---------------------------------------------------------------
@dataclass(frozen=True)
class ProbeTarget:
    uri: str
    user: str
    password: str = field(repr=False)
    database: str | None


UPSTREAM_VARIABLES = ("NEO4J_URL", "NEO4J_URI", "NEO4J_USERNAME", "NEO4J_PASSWORD", "NEO4J_DATABASE")


def probe_target(env: Mapping[str, str]) -> ProbeTarget:
    """The Neo4j the upstream talks to. When its environment sets any of ``UPSTREAM_VARIABLES``,
    those alone: ``NEO4J_URL`` or ``NEO4J_URI``, ``NEO4J_USERNAME`` and ``NEO4J_PASSWORD`` are
    required, ``NEO4J_DATABASE`` is optional (the server's default). When it sets none, Maxy's own
    settings. Never a mix, which would send Maxy's password to a server the upstream names, or plan
    as Maxy's user instead of the upstream's. Raises a MaxyError saying what is missing."""
    from ..config import NEO4J_SCHEMES, load_settings
    from ..errors import ConfigError

    given = [name for name in UPSTREAM_VARIABLES if env.get(name)]
    if given:
        uri = env.get("NEO4J_URL") or env.get("NEO4J_URI") or ""
        user, password = env.get("NEO4J_USERNAME") or "", env.get("NEO4J_PASSWORD") or ""
        database = env.get("NEO4J_DATABASE") or None
        required = (("NEO4J_URL or NEO4J_URI", uri), ("NEO4J_USERNAME", user), ("NEO4J_PASSWORD", password))
        missing = [name for name, value in required if not value]
        if missing:
            raise ConfigError(
                f"the upstream's environment sets {', '.join(given)} but lacks {', '.join(missing)}: "
                "set those too, or none of them to probe Maxy's own Neo4j"
            )
        named = "NEO4J_URL" if env.get("NEO4J_URL") else "NEO4J_URI"
    else:
        settings = load_settings()
        uri, user, password = settings.NEO4J_URI, settings.NEO4J_USER, settings.NEO4J_PASSWORD or ""
        database, named = settings.NEO4J_DATABASE or None, "NEO4J_URI"
        if not password:
            raise ConfigError(
                "Maxy's settings hold no NEO4J_PASSWORD: set it (`maxy setup`), "
                "or give the upstream its own NEO4J_* variables"
            )
    scheme = uri.partition("://")[0].lower()
    if scheme not in NEO4J_SCHEMES:
        raise ConfigError(
            f"{named} {without_credentials(uri)!r} is not a Bolt URI: use one of {', '.join(NEO4J_SCHEMES)}"
        )
    return ProbeTarget(uri, user, password, database)


class ProbeFailed(Exception):
    def __init__(self, reason: str, detail: str):
        self.reason = reason
        self.detail = detail
        super().__init__(f"{reason}: {detail}")


_URI_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s'\"]*@")  # to the last @: a password may hold one


def without_credentials(text: str) -> str:
    """``text`` with the ``user:password@`` of every URI in it replaced by ``***@``."""
    return _URI_CREDENTIALS.sub(r"\1***@", text)


def error_detail(err: BaseException, limit: int | None = 160) -> str:
    """An error on one line for the log, without URI credentials, cut at ``limit`` characters."""
    return without_credentials(" ".join(str(err).split()))[:limit] or type(err).__name__


def neo4j_detail(err: Neo4jError) -> str:
    """What a Neo4j error is, without its message (which quotes the query, literals and all):
    its code, its most specific GQL status and where in the agent's query it points."""
    status, position = None, None
    cause: BaseException | None = err
    while isinstance(cause, GqlError):  # the chain goes from the general status to the specific
        status = cause.gql_status or status
        position = cause.diagnostic_record.get("_position") or position
        cause = cause.__cause__
    detail = str(err.code or type(err).__name__) + (f" (GQL {status})" if status else "")
    line, column = (position or {}).get("line"), (position or {}).get("column")
    if isinstance(line, int) and isinstance(column, int) and line > 0:  # line 0: the query as a whole
        line, column = source_position(line, column)
        detail += f" at line {line}, column {column}"
    return detail


def _failure(err: BaseException) -> ProbeFailed:
    if isinstance(err, AuthError):
        return ProbeFailed("auth", error_detail(err))
    if isinstance(err, CypherSyntaxError):
        return ProbeFailed("syntax", neo4j_detail(err))
    if went_silent(err):  # accepted the connection, never answered: a hung server
        return ProbeFailed("timeout", error_detail(err))
    if isinstance(err, ServiceUnavailable | SessionExpired | OSError):
        return ProbeFailed("unreachable", error_detail(err))
    if isinstance(err, Neo4jError):
        return ProbeFailed("neo4j", neo4j_detail(err))
    return ProbeFailed("error", f"{type(err).__name__}: {error_detail(err)}")


class EnvelopeProbe:
    """One driver for the proxy's lifetime; each probe waits at most ``timeout`` seconds."""

    def __init__(self, env: Mapping[str, str] | None = None, *, timeout: float = PROBE_TIMEOUT_S):
        self.timeout = timeout
        self.problem: str | None = None
        self.database: str | None = None
        self.driver: Any = None
        self._given_up: list[threading.Thread] = []  # probes past their timeout, maybe holding a connection
        try:
            target = probe_target(env if env is not None else os.environ)
            self.database = target.database
            self.driver = GraphDatabase.driver(
                target.uri,
                auth=(target.user, target.password),
                connection_timeout=timeout,
                connection_acquisition_timeout=timeout,
                max_transaction_retry_time=0,
                notifications_min_severity="WARNING",  # the envelope statuses are warnings
                warn_notification_severity="OFF",
            )
        except Exception as err:  # noqa: BLE001 - the proxy relays without probes; each read says why
            self.problem = error_detail(err, limit=None)

    def warnings(self, query: str, params: Mapping[str, Any]) -> list[GraphWarning]:
        """The envelope warnings of ``query``; raises ProbeFailed (never anything else)."""
        if self.problem is not None:
            raise ProbeFailed("config", self.problem)
        box: dict[str, Any] = {}
        done = threading.Event()

        def run() -> None:
            try:
                box["value"] = self._explain(query, params)
            except BaseException as err:  # noqa: BLE001 - handed to the waiting relay
                box["error"] = err
            finally:
                done.set()

        # a daemon thread: a server that went silent mid-probe must not hold the relay or the exit
        thread = threading.Thread(target=run, name="mcp-probe", daemon=True)
        thread.start()
        if not done.wait(self.timeout):
            self._given_up = [t for t in self._given_up if t.is_alive()] + [thread]
            raise ProbeFailed("timeout", f"no answer within {self.timeout:g}s")
        if "error" in box:
            raise _failure(box["error"])
        return box["value"]

    def _explain(self, query: str, params: Mapping[str, Any]) -> list[GraphWarning]:
        with self.driver.session(database=self.database, default_access_mode=READ_ACCESS) as session:
            result = session.run(Query(explain_text(query), timeout=self.timeout), dict(params))
            summary = result.consume()
        return envelope_warnings(summary.gql_status_objects)

    def annotate(self, result: Any, query: str, params: Mapping[str, Any]) -> bool:
        """Probe a read tool's ``result`` and stitch the block in front of its content; True when
        it changed. An error result is left as it is, unprobed."""
        if not is_success(result):
            return False
        started = time.perf_counter()
        try:
            found = self.warnings(query, params)
        except ProbeFailed as err:
            log_line("mcp:graph", "probe-error", reason=err.reason, detail=err.detail)
            return False
        ms = round((time.perf_counter() - started) * 1000, 1)
        log_line("mcp:graph", "probe", warnings=len(found), ms=ms, statuses=[w.status for w in found])
        if found:
            stitch(result, found)
        return bool(found)

    def close(self) -> None:
        if self.driver is not None and not any(t.is_alive() for t in self._given_up):  # closing would wait for them
            try:
                self.driver.close()
            except (DriverError, OSError):
                pass
