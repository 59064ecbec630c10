"""The Neo4j driver, with reads routed as reads and writes as writes.

Works the same against the local managed server (``bolt://``), a cluster or Aura
(``neo4j://`` / ``neo4j+s://`` routing URIs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import neo4j
from neo4j import GraphDatabase, RoutingControl
from neo4j.exceptions import AuthError, ServiceUnavailable, SessionExpired

from .config import Settings, env_file, get_settings
from .errors import ConfigError, DatabaseUnavailable

T = TypeVar("T")


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
        self.driver = GraphDatabase.driver(
            self.uri,
            auth=(self.settings.NEO4J_USER, self.settings.NEO4J_PASSWORD),
            max_connection_pool_size=50,
            connection_acquisition_timeout=30,
            connection_timeout=5.0,  # an unreachable server is reported in seconds, not minutes
            max_transaction_retry_time=10.0,
            notifications_min_severity="OFF",
        )

    # -- plain queries -------------------------------------------------------------------
    def read(self, query: str, **params: Any) -> list[dict[str, Any]]:
        return self._run(query, params, RoutingControl.READ)

    def write(self, query: str, **params: Any) -> list[dict[str, Any]]:
        return self._run(query, params, RoutingControl.WRITE)

    def _run(self, query: str, params: dict[str, Any], routing: RoutingControl) -> list[dict[str, Any]]:
        try:
            records, _, _ = self.driver.execute_query(query, params, routing_=routing, database_=self.database)
        except (ServiceUnavailable, SessionExpired) as err:
            raise self._unavailable(err) from err
        except AuthError as err:
            raise self._auth(err) from err
        return [r.data() for r in records]

    # -- managed transactions (retried by the driver on transient errors) ----------------
    def write_tx(self, work: Callable[[neo4j.ManagedTransaction], T]) -> T:
        try:
            with self.driver.session(database=self.database, default_access_mode=neo4j.WRITE_ACCESS) as session:
                return session.execute_write(work)
        except (ServiceUnavailable, SessionExpired) as err:
            raise self._unavailable(err) from err
        except AuthError as err:
            raise self._auth(err) from err

    def autocommit(self, query: str, **params: Any) -> list[dict[str, Any]]:
        """For ``CALL {...} IN TRANSACTIONS``, which cannot run inside a managed transaction."""
        try:
            with self.driver.session(database=self.database, default_access_mode=neo4j.WRITE_ACCESS) as session:
                return [r.data() for r in session.run(query, params)]
        except (ServiceUnavailable, SessionExpired) as err:
            raise self._unavailable(err) from err
        except AuthError as err:
            raise self._auth(err) from err

    def server_info(self) -> dict[str, Any]:
        rows = self.read("CALL dbms.components() YIELD name, versions, edition RETURN name, versions, edition")
        kernel = next((r for r in rows if r["name"] == "Neo4j Kernel"), rows[0] if rows else {})
        return {"version": (kernel.get("versions") or ["?"])[0], "edition": kernel.get("edition")}

    def close(self) -> None:
        self.driver.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _unavailable(self, err: Exception) -> DatabaseUnavailable:
        hint = (
            "start the local server with `maxy neo4j start`"
            if self.settings.neo4j_is_managed
            else "check that the server is up and NEO4J_URI is right"
        )
        return DatabaseUnavailable(f"Neo4j is not reachable at {self.uri}: {hint} ({err})")

    def _auth(self, err: Exception) -> DatabaseUnavailable:
        return DatabaseUnavailable(
            f"Neo4j at {self.uri} refused the credentials for user {self.settings.NEO4J_USER!r}: "
            f"check NEO4J_PASSWORD in the environment or {env_file()} ({err})"
        )
