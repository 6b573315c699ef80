"""A database that stops answering (frozen, as in a network partition) costs each call a few seconds, never more.

The watchdog's deadline is read from the runtime's clock: the first tests move a ``ManualClock`` by hand on the
shared server. The slow ones start a private cluster and freeze it with SIGSTOP (the shared one is never
touched), where the connect timeout, the kernel and the server's own statement timeout act on the real clock.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest
from junior_memory import MemoryPlugin, MemoryStore, MemoryUnavailable
from junior_memory.scope import read_scopes
from memory_helpers import ThrowawayPostgres, ctx, err, ok, schema_url, within

from junior_core import Runtime
from junior_core.testing import ManualClock

# Generous next to the 1 s deadline under test, and below the runtime's own 30 s tool timeout, which is what a
# hung call reached before (answering `timeout`, with its worker thread still stuck).
GUARD = 20


def _sleep_on_the_server(clock: ManualClock, seconds: float, late_by: float) -> Callable[[Any], Any]:
    """A unit of work that moves the clock ``late_by`` seconds, then keeps the server busy ``seconds`` (real)."""
    def work(conn: Any) -> Any:
        clock.advance(late_by)
        return conn.exec_driver_sql(f"SELECT pg_sleep({seconds})").all()

    return work


@pytest.mark.parametrize("backend", ["postgres"])
def test_a_unit_of_work_past_its_deadline_on_the_runtime_clock_is_cut_off(
    backend: str, postgres_schema: str
) -> None:
    clock = ManualClock()
    # A minute: the server's own statement_timeout (real seconds) stays out of the way of the watchdog's.
    with Runtime(plugins=[MemoryPlugin(url=schema_url(postgres_schema), timeout=60)], clock=clock) as rt:
        store = rt.plugin("memory").store()
        store.ensure_schema()
        # The watchdog leaves the server a second past the deadline to enforce its own timeout first.
        assert within(GUARD, lambda: store.db.run(_sleep_on_the_server(clock, 0.05, 60.5), write=False))
        with pytest.raises(MemoryUnavailable, match="did not answer within 60 s"):
            within(GUARD, lambda: store.db.run(_sleep_on_the_server(clock, 600, 61), write=False))
        # The connection it cut off is gone from the pool; the next unit of work gets a fresh one.
        assert within(GUARD, lambda: store.db.run(_sleep_on_the_server(clock, 0, 0), write=False))


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["postgres"])
def test_a_frozen_database_answers_unavailable_and_recall_is_skipped_with_one_line(
    backend: str, throwaway_postgres: ThrowawayPostgres, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("JUNIOR_MEMORY_TIMEOUT", "1")
    url = throwaway_postgres.url
    with Runtime(plugins=[MemoryPlugin(url=url)]) as rt:
        saved = ok(rt.execute_tool("memory__remember", {"content": "I like green tea", "kind": "preference"}, ctx()))
        with throwaway_postgres.frozen():
            # A pooled connection whose server stopped answering mid-query.
            error = err(within(GUARD, lambda: rt.execute_tool("memory__list", {}, ctx())), "unavailable")
            assert "try again later" in error["message"]
            caplog.clear()
            with caplog.at_level(logging.INFO, logger="junior.memory"):
                assert within(GUARD, lambda: rt.prompt_context(ctx(), "green tea", host=False)) == []
            lines = [r for r in caplog.records if r.name == "junior.memory"]
            assert len(lines) == 1, [r.getMessage() for r in lines]
            assert lines[0].levelno == logging.WARNING and lines[0].exc_info is None
            assert lines[0].getMessage().startswith("memory recall skipped: ")
            err(within(GUARD, lambda: rt.execute_tool(
                "memory__remember", {"content": "I like black tea", "kind": "preference"}, ctx())), "unavailable")
            # A new connection to the frozen server: the connect timeout answers.
            fresh = MemoryStore(url)
            try:
                with pytest.raises(MemoryUnavailable, match="unavailable"):
                    within(GUARD, lambda: fresh.visible(read_scopes(ctx())))
            finally:
                fresh.close()
        # Nothing is cached about the outage: once the server answers again, so does memory.
        listed = ok(within(GUARD, lambda: rt.execute_tool("memory__list", {}, ctx())))
        assert [m["id"] for m in listed["memories"]] == [saved["id"]]


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["postgres"])
def test_the_server_enforces_the_statement_deadline_too(
    backend: str, throwaway_postgres: ThrowawayPostgres, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUNIOR_MEMORY_TIMEOUT", "1")
    store = MemoryStore(throwaway_postgres.url)
    try:
        store.ensure_schema()
        settings = store.db.run(
            lambda conn: conn.exec_driver_sql(
                "SELECT current_setting('statement_timeout'), current_setting('lock_timeout')"
            ).one(),
            write=False,
        )
        assert tuple(settings) == ("1s", "1s")
        # A statement the live server keeps busy past the deadline is cancelled by the server, not waited out.
        with pytest.raises(MemoryUnavailable, match="statement timeout"):
            within(GUARD, lambda: store.db.run(lambda conn: conn.exec_driver_sql("SELECT pg_sleep(30)").all(),
                                               write=False))
    finally:
        store.close()
