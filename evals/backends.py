"""A fresh memory database for every run: a temporary SQLite file, or a new Postgres database."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["ENV_POSTGRES", "Backend", "PostgresBackend", "SqliteBackend", "backend_from"]

ENV_POSTGRES = "JUNIOR_EVALS_POSTGRES_URL"
DEFAULT_POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


class Backend:
    """Makes one empty database per run and removes it afterwards."""

    name = "backend"

    @contextmanager
    def database(self) -> Iterator[str]:
        raise NotImplementedError
        yield ""

    def close(self) -> None:
        """Release what the backend holds across runs."""


class SqliteBackend(Backend):
    """A SQLite file in a temporary directory per run."""

    name = "sqlite"

    @contextmanager
    def database(self) -> Iterator[str]:
        directory = tempfile.mkdtemp(prefix="junior-evals-")
        try:
            yield f"sqlite:///{directory}/memory.sqlite3"
        finally:
            shutil.rmtree(directory, ignore_errors=True)


class PostgresBackend(Backend):
    """One database created for the session on the server ``url`` points at; every run starts empty.

    Creating a database per run costs about a second on Postgres, so runs share one: after each run every
    table except migration version tables is emptied, and the next run finds the schema migrated and no
    rows. ``url`` names any database the role can connect to; the role needs CREATEDB.
    """

    name = "postgres"

    def __init__(self, url: str) -> None:
        from sqlalchemy import create_engine
        from sqlalchemy.engine import make_url

        self.url = make_url(url)
        self.admin = create_engine(self.url, isolation_level="AUTOCOMMIT", pool_size=1)
        self.name_in_server: str | None = None
        self._engine: Any = None

    def _create(self) -> str:
        from sqlalchemy import create_engine, text

        if self.name_in_server is None:
            name = f"junior_evals_{uuid.uuid4().hex[:12]}"
            with self.admin.connect() as conn:
                conn.execute(text(f'CREATE DATABASE "{name}"'))
            self.name_in_server = name
            self._engine = create_engine(self.url.set(database=name), isolation_level="AUTOCOMMIT", pool_size=1)
        return self.url.set(database=self.name_in_server).render_as_string(hide_password=False)

    def _empty(self) -> None:
        from sqlalchemy import text

        with self._engine.connect() as conn:
            tables = [
                row[0]
                for row in conn.execute(text("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"))
                if not row[0].endswith("alembic_version")
            ]
            # DELETE, not TRUNCATE: for a handful of rows it is several times faster (no new relation files).
            for table in tables:
                conn.execute(text(f'DELETE FROM "{table}"'))

    @contextmanager
    def database(self) -> Iterator[str]:
        url = self._create()
        try:
            yield url
        finally:
            self._empty()

    def close(self) -> None:
        from sqlalchemy import text

        if self._engine is not None:
            self._engine.dispose()
        if self.name_in_server is not None:
            with self.admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{self.name_in_server}" WITH (FORCE)'))
            self.name_in_server = None
        self.admin.dispose()


def backend_from(postgres: bool | str | None) -> Backend:
    """SQLite, unless ``postgres`` is a URL or True (then ``$JUNIOR_EVALS_POSTGRES_URL`` or the local default)."""
    if isinstance(postgres, str) and postgres:
        return PostgresBackend(postgres)
    if postgres is True:
        return PostgresBackend(os.environ.get(ENV_POSTGRES, "").strip() or DEFAULT_POSTGRES)
    env = os.environ.get(ENV_POSTGRES, "").strip()
    if postgres is None and env:
        return PostgresBackend(env)
    return SqliteBackend()
