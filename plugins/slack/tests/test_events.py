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


class Clock:
    """A clock the test moves: no sleeping."""

    def __init__(self) -> None:
        self.now = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def test_an_unfinished_claim_is_refused_until_its_lease_ends_and_then_taken_once(db_url: str) -> None:
    clock = Clock()
    log = EventLog(db_url, lease=timedelta(minutes=4), clock=clock)
    try:
        assert log.claim("Ev0LEASE001", "T0TEAM001") is True  # the turn starts, and its process dies
        clock.now += timedelta(minutes=3, seconds=59)
        assert log.claim("Ev0LEASE001", "T0TEAM001") is False  # a retry while the turn may still be running
        clock.now += timedelta(seconds=1)
        assert log.claim("Ev0LEASE001", "T0TEAM001") is True  # the lease ran out unfinished: this retry answers
        assert log.claim("Ev0LEASE001", "T0TEAM001") is False  # and holds a new lease of its own
        clock.now += timedelta(minutes=3)
        assert log.claim("Ev0LEASE001", "T0TEAM001") is False
        log.finish("Ev0LEASE001")
        clock.now += timedelta(hours=20)
        assert log.claim("Ev0LEASE001", "T0TEAM001") is False  # finished: never again
        assert log.claim("Ev0LEASE002", "T0TEAM001") is True  # another event is its own
    finally:
        log.close()


def test_a_finished_event_is_never_taken_again(db_url: str) -> None:
    clock = Clock()
    log = EventLog(db_url, lease=timedelta(minutes=4), clock=clock)
    try:
        assert log.claim("Ev0DONE0001") is True
        log.finish("Ev0DONE0001")
        for later in (timedelta(0), timedelta(minutes=4), timedelta(hours=23)):
            clock.now = datetime(2026, 3, 1, 12, 0, tzinfo=UTC) + later
            assert log.claim("Ev0DONE0001") is False, later
    finally:
        log.close()


def test_replicas_racing_for_an_expired_lease_take_it_exactly_once(db_url: str) -> None:
    clock = Clock()
    first = EventLog(db_url, lease=timedelta(minutes=4), clock=clock)
    try:
        assert all(first.claim(f"Ev{n:010d}") for n in range(10))  # a replica that died mid-turn on each
    finally:
        first.close()
    clock.now += timedelta(minutes=5)
    replicas = [EventLog(db_url, lease=timedelta(minutes=4), clock=clock) for _ in range(8)]
    start = threading.Barrier(len(replicas))

    def deliver(log: EventLog) -> list[bool]:
        start.wait()
        return [log.claim(f"Ev{n:010d}") for n in range(10)]

    try:
        with ThreadPoolExecutor(len(replicas)) as pool:
            results = list(pool.map(deliver, replicas))
    finally:
        for log in replicas:
            log.close()
    for n in range(10):
        assert sum(result[n] for result in results) == 1, f"event {n}: {[r[n] for r in results]}"


def test_a_table_made_before_leases_gains_them_and_its_rows_count_as_finished(db_url: str) -> None:
    engine = create_engine(db_url)
    try:
        # The table as the first release made it, with an event taken then.
        old = Table("junior_slack_events", MetaData(), Column("event_id", String(128), primary_key=True),
                    Column("team_id", String(64)), Column("received_at", DateTime(), nullable=False, index=True))
        old.metadata.create_all(engine)
        with engine.begin() as conn:
            conn.execute(old.insert().values(event_id="Ev0BEFORE01", team_id="T0TEAM001",
                                             received_at=datetime(2026, 3, 1, 11, 0)))
    finally:
        engine.dispose()
    clock = Clock()
    logs = [EventLog(db_url, lease=timedelta(minutes=4), clock=clock) for _ in range(2)]
    try:
        # Two replicas upgrading it at once.
        with ThreadPoolExecutor(2) as pool:
            assert list(pool.map(lambda log: log.claim("Ev0BEFORE01"), logs)) == [False, False]
        clock.now += timedelta(minutes=30)
        assert logs[0].claim("Ev0BEFORE01") is False  # long past any lease: still finished
        assert logs[0].claim("Ev0AFTER001") is True
        clock.now += timedelta(minutes=4)
        assert logs[1].claim("Ev0AFTER001") is True  # new rows get leases
    finally:
        for log in logs:
            log.close()
    assert [r[0] for r in rows(db_url)] == ["Ev0AFTER001", "Ev0BEFORE01"]


def test_a_finish_the_database_refuses_is_logged_not_raised(caplog: pytest.LogCaptureFixture,
                                                             tmp_path: Path) -> None:
    log = EventLog(f"sqlite:///{tmp_path / 'events.sqlite3'}")
    try:
        assert log.claim("Ev0BROKEN01") is True
        engine = create_engine(f"sqlite:///{tmp_path / 'events.sqlite3'}")
        with engine.begin() as conn:
            conn.exec_driver_sql("DROP TABLE junior_slack_events")
        engine.dispose()
        log.finish("Ev0BROKEN01")
    finally:
        log.close()
    assert "event Ev0BROKEN01 could not be marked finished" in caplog.text
