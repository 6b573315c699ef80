"""The event log that keeps a Slack retry from running a second turn, on SQLite and on Postgres."""

from __future__ import annotations

import os
import stat
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from junior_slack import EventLog
from junior_slack import events as events_module
from junior_slack.events import default_url
from sqlalchemy import Column, DateTime, MetaData, String, Table, create_engine, select


def table() -> Table:
    """The table as a reader sees it, declared here rather than taken from the code under test."""
    return Table("junior_slack_events", MetaData(), Column("event_id", String), Column("team_id", String),
                 Column("received_at", DateTime))


def rows(url: str) -> list[tuple[str, str | None, datetime]]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            found = conn.execute(select(table()).order_by(table().c.event_id))
            return [(r[0], r[1], r[2]) for r in found]
    finally:
        engine.dispose()


def test_an_event_id_is_claimed_once_and_its_row_says_when_and_which_team(db_url: str) -> None:
    log = EventLog(db_url)
    try:
        before = datetime.now(UTC).replace(tzinfo=None)
        assert log.claim("Ev0000000001", "T0TEAM001") is True
        assert log.claim("Ev0000000001", "T0TEAM001") is False  # the retry
        assert log.claim("Ev0000000001") is False  # whatever it says about its team
        assert log.claim("Ev0000000002", "T0TEAM002") is True
    finally:
        log.close()
    (first, second) = rows(db_url)
    assert (first[0], first[1], second[0], second[1]) == ("Ev0000000001", "T0TEAM001", "Ev0000000002", "T0TEAM002")
    assert before - timedelta(seconds=5) <= first[2] <= datetime.now(UTC).replace(tzinfo=None) + timedelta(seconds=5)


def test_replicas_on_one_database_claim_each_event_exactly_once(db_url: str) -> None:
    """Eight logs with engines of their own (replicas behind a load balancer), all starting on an empty database:
    the table is created by whichever is first, and each event is claimed by exactly one of them."""
    replicas = [EventLog(db_url) for _ in range(8)]
    start = threading.Barrier(len(replicas))

    def deliver(log: EventLog) -> list[bool]:
        start.wait()
        return [log.claim(f"Ev{n:010d}", "T0TEAM001") for n in range(10)]

    try:
        with ThreadPoolExecutor(len(replicas)) as pool:
            results = list(pool.map(deliver, replicas))
    finally:
        for log in replicas:
            log.close()
    for n in range(10):
        assert sum(result[n] for result in results) == 1, f"event {n}: {[r[n] for r in results]}"
    assert [r[0] for r in rows(db_url)] == [f"Ev{n:010d}" for n in range(10)]


def test_rows_older_than_a_day_are_pruned_as_claims_go_on(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(events_module, "PRUNE_EVERY", 3)
    log = EventLog(db_url)
    try:
        assert log.claim("Ev0FRESH001") is True  # creates the table
        engine = create_engine(db_url)
        now = datetime.now(UTC).replace(tzinfo=None)
        with engine.begin() as conn:
            for event_id, age in (("Ev0OLD00001", timedelta(days=2)), ("Ev0HOURS001", timedelta(hours=20))):
                conn.execute(table().insert().values(event_id=event_id, received_at=now - age))
        engine.dispose()
        assert log.claim("Ev0FRESH002") is True
        assert {r[0] for r in rows(db_url)} == {"Ev0FRESH001", "Ev0FRESH002", "Ev0OLD00001", "Ev0HOURS001"}
        assert log.claim("Ev0FRESH003") is True  # the third claim prunes
        assert {r[0] for r in rows(db_url)} == {"Ev0FRESH001", "Ev0FRESH002", "Ev0FRESH003", "Ev0HOURS001"}
        assert log.claim("Ev0OLD00001") is True  # pruned: a delivery two days late would run again
    finally:
        log.close()


def test_the_default_database_is_the_slack_url_then_memory_url_then_the_user_data_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("JUNIOR_SLACK_URL", "postgresql+psycopg://db.example/slack")
    monkeypatch.setenv("JUNIOR_MEMORY_URL", "postgresql+psycopg://db.example/memory")
    assert default_url() == "postgresql+psycopg://db.example/slack"
    monkeypatch.setenv("JUNIOR_SLACK_URL", "  ")
    assert default_url() == "postgresql+psycopg://db.example/memory"
    monkeypatch.delenv("JUNIOR_MEMORY_URL")
    assert default_url() == f"sqlite:///{tmp_path / 'data' / 'junior' / 'slack.sqlite3'}"
    log = EventLog()
    try:
        assert log.claim("Ev0DEFAULT1") is True
    finally:
        log.close()
    made = tmp_path / "data" / "junior"
    assert (made / "slack.sqlite3").is_file()
    if os.name == "posix":
        assert stat.S_IMODE(made.stat().st_mode) == 0o700  # other local users cannot read who talked when
