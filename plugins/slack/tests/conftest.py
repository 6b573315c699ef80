"""junior-slack fixtures: a database per test on SQLite and on Postgres (its own schema), and the bot on HTTP.

Postgres comes from ``JUNIOR_TEST_POSTGRES_URL``; without a reachable server its tests skip, unless
``JUNIOR_REQUIRE_POSTGRES=1`` (CI), where they fail.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))

from slack_helpers import POSTGRES_URL

pytest.importorskip("slack_bolt")
pytest.importorskip("openai")


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[str]:
    """One empty database for memory and the event log: a SQLite file, or a fresh Postgres schema."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'junior.sqlite3'}"
        return
    from sqlalchemy.engine import make_url

    try:
        import psycopg

        admin = make_url(POSTGRES_URL).set(drivername="postgresql").render_as_string(hide_password=False)
        conn = psycopg.connect(admin, autocommit=True, connect_timeout=3)
    except Exception as exc:  # noqa: BLE001 - any reason Postgres is not usable is reported the same way
        if os.environ.get("JUNIOR_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"JUNIOR_REQUIRE_POSTGRES=1 and Postgres at {POSTGRES_URL} is not reachable: {exc}")
        pytest.skip(f"Postgres at {POSTGRES_URL} is not reachable: {exc}")
    schema = f"js_{uuid.uuid4().hex[:12]}"
    with conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
        try:
            url = make_url(POSTGRES_URL).update_query_dict({"options": f"-csearch_path={schema}"})
            yield url.render_as_string(hide_password=False)
        finally:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
