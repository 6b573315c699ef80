"""A fresh memory database for every run: a temporary SQLite file, or a new Postgres database."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

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
    """``CREATE DATABASE`` per run on the server ``url`` points at, dropped afterwards.

    ``url`` names any database the role can connect to; the role needs CREATEDB.
    """

    name = "postgres"

    def __init__(self, url: str) -> None:
        from sqlalchemy import create_engine
        from sqlalchemy.engine import make_url

        self.url = make_url(url)
        self.admin = create_engine(self.url, isolation_level="AUTOCOMMIT", pool_size=1)

    @contextmanager
    def database(self) -> Iterator[str]:
        from sqlalchemy import text

        name = f"junior_evals_{uuid.uuid4().hex[:12]}"
        with self.admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        try:
            yield self.url.set(database=name).render_as_string(hide_password=False)
        finally:
            with self.admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))

    def close(self) -> None:
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
