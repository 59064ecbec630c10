"""Shared fixtures: the real local Neo4j (started by the project's own code when needed),
one fresh account per test under a temporary DATA_ROOT, cleaned up afterwards; the fake
Messages API and settings with and without a key, for the model stages."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from maxy.accounts import ValidatedAccount, create_account, validate_account
from maxy.config import Settings, load_settings
from maxy.logs import configure

from tests import hypothesis_profile  # noqa: F401  (loads the profile MAXY_HYPOTHESIS names)
from tests.fake_anthropic import FakeAnthropic
from tests.parallel import exclusive, suite_lock

# The suite is the application: it turns the library's [component] lines on, at LOG_LEVEL or
# every line, as Maxy's own entry points do (the library alone stays silent).
configure()

SLOW = {
    line.strip()
    for line in (Path(__file__).parent / "slow_tests.txt").read_text().splitlines()
    if line.strip() and not line.startswith("#")
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests listed in slow_tests.txt ``slow`` (the JVM-starting ones carry the marker
    in their files): ``-m 'not slow'`` is the fast lane.

    Then order the files for the two workers: first the files holding an ``alone`` test (so
    while one waits for the lock, the other is running short tests, not a minute-long one),
    then the files with the most slow tests (so the run does not end with one worker idle
    beside another's long file); the tests of a file keep their order."""
    for item in items:
        test = item.nodeid.split("[")[0]
        if test in SLOW or test.split("::")[0] in SLOW:
            item.add_marker(pytest.mark.slow)
    alone: set[str] = set()
    slow: dict[str, int] = {}
    for item in items:
        path = item.nodeid.split("::")[0]
        if item.get_closest_marker("alone"):
            alone.add(path)
        slow[path] = slow.get(path, 0) + (item.get_closest_marker("slow") is not None)
    items.sort(key=lambda item: (item.nodeid.split("::")[0] not in alone, -slow[item.nodeid.split("::")[0]]))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    """Each test holds the suite's lock while it runs (tests/parallel.py): exclusively when
    marked ``alone``."""
    with suite_lock(item.get_closest_marker("alone") is not None):
        return (yield)


@pytest.fixture(scope="session")
def settings() -> Settings:
    return load_settings()


@pytest.fixture(scope="session")
def neo4j_ready(settings: Settings) -> Settings:
    if settings.neo4j_is_managed:
        from maxy.neo4j.runtime import ensure_running

        ensure_running(settings)
    return settings


@pytest.fixture(scope="session")
def embedder(settings: Settings):
    from maxy.embeddings import get_embedder

    return get_embedder(settings)


@pytest.fixture(scope="session")
def db(neo4j_ready: Settings, embedder) -> Iterator:
    from maxy.db import Database
    from maxy.graph.schema import apply_schema

    database = Database(neo4j_ready)
    with exclusive("schema"):  # one worker at a time creates what is missing
        apply_schema(database, embedder.dimensions, embedder=embedder)
    yield database
    database.close()


@pytest.fixture()
def data_root(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    root.mkdir()
    return root


def purge_account(db, account_id: str) -> None:
    db.autocommit(
        "MATCH (n:Node {accountId: $acc}) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 2000 ROWS",
        acc=account_id,
    )


@pytest.fixture()
def account(db, data_root: Path) -> Iterator[ValidatedAccount]:
    created = create_account(data_root, f"test-{uuid.uuid4().hex[:6]}")
    validated = validate_account(data_root, created.account_id)
    yield validated
    purge_account(db, validated.account_id)


@pytest.fixture()
def make_account(db, data_root: Path) -> Iterator:
    made: list[str] = []

    def factory(name: str = "extra") -> ValidatedAccount:
        acc = create_account(data_root, name)
        made.append(acc.account_id)
        return validate_account(data_root, acc.account_id)

    yield factory
    for account_id in made:
        purge_account(db, account_id)


@pytest.fixture(autouse=True)
def _maxy_log_level() -> Iterator[None]:
    """A command run in-process sets the ``maxy`` logger's level for its process (LOG_LEVEL,
    --quiet, --verbose); put it back so the next test sees every line it logs."""
    logger = logging.getLogger("maxy")
    level = logger.level
    yield
    logger.setLevel(level)


@pytest.fixture()
def fake_messages(monkeypatch) -> Iterator[FakeAnthropic]:
    """The fake Messages API (tests/fake_anthropic.py), ``ANTHROPIC_BASE_URL`` pointing at it."""
    with FakeAnthropic() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        yield server


@pytest.fixture()
def keyed() -> Settings:
    """Settings with an Anthropic key (pair with ``fake_messages``)."""
    return load_settings(ANTHROPIC_API_KEY="test-key")


@pytest.fixture()
def nokey(monkeypatch) -> Settings:
    """Settings without an Anthropic key, the environment's included."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    return load_settings(ANTHROPIC_API_KEY="")
