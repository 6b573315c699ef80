"""Memory test fixtures: every database test runs on SQLite and on Postgres (a table of cases runs only its first
case on Postgres under ``-m "not slow"``; ``make test`` runs them all). Each test gets a database of its own,
already migrated (``db_url``) or without tables (``empty_db_url``).

Postgres comes from ``JUNIOR_TEST_POSTGRES_URL``. Without a reachable server its tests skip, unless
``JUNIOR_REQUIRE_POSTGRES=1`` (CI), where any skipped Postgres test fails the run.
"""

from __future__ import annotations

import os
import shutil
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from junior_memory import MemoryPlugin, MemoryStore

from junior_core import Runtime

# The helpers module sits next to this file; make it importable under --import-mode=importlib too.
if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))

from memory_helpers import POSTGRES_URL, ReusedSchema, ThrowawayPostgres, admin_conninfo, schema_url

REQUIRE_POSTGRES = os.environ.get("JUNIOR_REQUIRE_POSTGRES", "") == "1"


def _is_postgres(item: pytest.Item) -> bool:
    callspec = getattr(item, "callspec", None)
    return callspec is not None and "postgres" in callspec.params.values()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A table of cases runs whole on SQLite and its first case on Postgres in the edit loop (``-m "not slow"``);
    its other Postgres cases are marked slow, so ``make test`` still runs every one on both databases."""
    here = Path(__file__).parent
    seen: set[tuple[str, str]] = set()
    for item in items:
        if not _is_postgres(item) or here not in item.path.parents or len(item.callspec.params) < 2:  # type: ignore[attr-defined]
            continue
        key = (str(item.path), getattr(item, "originalname", item.name))
        if key in seen:
            item.add_marker(pytest.mark.slow)
        seen.add(key)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if REQUIRE_POSTGRES and report.skipped and _is_postgres(item):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"JUNIOR_REQUIRE_POSTGRES=1 and this Postgres test was skipped: {reason}"


def _admin_connection() -> Any:
    """An autocommit connection to the test server; fails instead of skipping under JUNIOR_REQUIRE_POSTGRES=1."""
    try:
        import psycopg

        return psycopg.connect(admin_conninfo(), autocommit=True, connect_timeout=3)
    except Exception as exc:  # noqa: BLE001 - any reason Postgres is not usable is reported the same way
        message = f"Postgres at {POSTGRES_URL} is not reachable: {exc}"
        if REQUIRE_POSTGRES:
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture
def postgres_schema() -> Iterator[str]:
    """A fresh Postgres schema, dropped afterwards."""
    schema = f"jm_{uuid.uuid4().hex[:12]}"
    with _admin_connection() as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
        try:
            yield schema
        finally:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def _migrate(url: str) -> None:
    store = MemoryStore(url)
    try:
        store.ensure_schema()
    finally:
        store.close()


@pytest.fixture(scope="session")
def _reused_schema() -> Iterator[ReusedSchema]:
    with _admin_connection() as conn:
        reused = ReusedSchema(conn, "jm")
        try:
            yield reused
        finally:
            reused.close()


@pytest.fixture(scope="session")
def _sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite database migrated once, copied for each test that wants a migrated one."""
    path = tmp_path_factory.mktemp("memory-template") / "memory.sqlite3"
    _migrate(f"sqlite:///{path}")
    return path


@pytest.fixture(scope="module")
def throwaway_postgres() -> Iterator[ThrowawayPostgres]:
    """A private Postgres cluster this test may freeze; fails instead of skipping under JUNIOR_REQUIRE_POSTGRES=1."""
    try:
        server = ThrowawayPostgres()
    except Exception as exc:  # noqa: BLE001 - any reason a cluster cannot start is reported the same way
        message = f"cannot start a throwaway Postgres cluster: {exc}"
        if REQUIRE_POSTGRES:
            pytest.fail(message)
        pytest.skip(message)
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(params=["sqlite", "postgres"])
def empty_db_url(request: pytest.FixtureRequest, tmp_path: Any) -> str:
    """A database URL for one isolated database with no tables yet: a SQLite file, or a new Postgres schema."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'memory.sqlite3'}"
    schema: str = request.getfixturevalue("postgres_schema")
    return schema_url(schema)


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, tmp_path: Any) -> str:
    """A database URL for one isolated database, migrated to head and empty: a copy of a migrated SQLite file, or
    a Postgres schema migrated once per session and emptied for each test. A test that needs the database
    before its first migration takes ``empty_db_url``."""
    if request.param == "sqlite":
        path = tmp_path / "memory.sqlite3"
        shutil.copyfile(request.getfixturevalue("_sqlite_template"), path)
        return f"sqlite:///{path}"
    reused: ReusedSchema = request.getfixturevalue("_reused_schema")
    return schema_url(reused.fresh(_migrate))


@pytest.fixture
def make_runtime(db_url: str) -> Iterator[Callable[..., Runtime]]:
    """Build runtimes with a MemoryPlugin on ``db_url`` (plus any other plugins); all closed afterwards."""
    made: list[Runtime] = []

    def make(*others: object, url: str | None = None, **plugin_kwargs: Any) -> Runtime:
        runtime = Runtime(plugins=[MemoryPlugin(url=url or db_url, **plugin_kwargs), *others])
        made.append(runtime)
        return runtime

    yield make
    for runtime in made:
        runtime.close()


@pytest.fixture
def rt(make_runtime: Callable[..., Runtime]) -> Runtime:
    return make_runtime()


@pytest.fixture
def rows(db_url: str) -> Iterator[Callable[..., list[dict[str, Any]]]]:
    """Read the memory tables directly, the way evals do: ``rows("SELECT ... WHERE x = :x", x=1)``."""
    from junior_memory import MemoryStore
    from sqlalchemy import create_engine, text

    store = MemoryStore(db_url)
    store.ensure_schema()  # so a test that wrote nothing can still read empty tables
    store.close()
    engine = create_engine(db_url)

    def query(sql: str, **params: Any) -> list[dict[str, Any]]:
        with engine.connect() as conn:
            return [dict(row._mapping) for row in conn.execute(text(sql), params)]

    yield query
    engine.dispose()
