"""Per-actor write limits through memory__remember on a real runtime: rate per hour (on the runtime's clock)
and current memories per actor (counted in the database), both from [plugins.memory] of junior.toml."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from junior_memory import MemoryPlugin
from memory_helpers import ALICE, BOB, PUBLIC, ctx, err, ok

from junior_core import Runtime
from junior_core.testing import ManualClock


@pytest.fixture
def limited(db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Runtime]]:
    made: list[Runtime] = []

    def make(per_hour: int, total: int, clock: ManualClock) -> Runtime:
        config = tmp_path / "junior.toml"
        config.write_text(f"[plugins.memory]\nwrites_per_hour = {per_hour}\nmemories_per_actor = {total}\n")
        monkeypatch.setenv("JUNIOR_CONFIG", str(config))
        runtime = Runtime(plugins=[MemoryPlugin(url=db_url)], clock=clock)
        made.append(runtime)
        return runtime

    yield make
    for runtime in made:
        runtime.close()


def remember(rt: Runtime, text: str, actor: Any = ALICE, call: str | None = None) -> dict[str, Any]:
    return rt.execute_tool("memory__remember", {"content": text, "kind": "knowledge"}, ctx(actor, PUBLIC, call=call))


def test_one_actor_is_refused_past_the_hourly_rate_and_others_are_not(limited: Any, rows: Any) -> None:
    clock = ManualClock()
    rt = limited(5, 0, clock)
    for i in range(5):
        ok(remember(rt, f"Release note {i} is about the billing service", call=f"c{i}"))
        clock.advance(60)
    error = err(remember(rt, "Release note 5 is about the billing service"), "rejected")
    assert "5 memories in the last hour" in error["message"] and error["limit"] == "writes_per_hour"
    ok(remember(rt, "The victim's note about release notes", actor=BOB))  # another actor is not limited
    # A retry of a call that wrote a memory is not a new write: answered as before, never refused.
    assert ok(remember(rt, "Release note 0 is about the billing service", call="c0"))["created"] is False
    clock.advance(3600 - 5 * 60 + 1)  # the first write leaves the window
    ok(remember(rt, "Release note 5 is about the billing service"))
    assert len(rows("SELECT id FROM junior_memory_memories WHERE actor_key = :a", a=ALICE.key)) == 6


def test_one_actor_is_refused_past_the_total_and_forgetting_makes_room(limited: Any, rows: Any) -> None:
    clock = ManualClock()
    rt = limited(0, 3, clock)
    ids = [ok(remember(rt, f"Runbook step {i} restarts the ingest worker"))["id"] for i in range(3)]
    error = err(remember(rt, "Runbook step 3 restarts the ingest worker"), "rejected")
    assert "already has 3 memories" in error["message"] and error["limit"] == "memories_per_actor"
    ok(rt.execute_tool("memory__forget", {"id": ids[0]}, ctx(ALICE, PUBLIC)))
    ok(remember(rt, "Runbook step 3 restarts the ingest worker"))
    live = rows("SELECT id FROM junior_memory_memories WHERE actor_key = :a AND archived_at IS NULL", a=ALICE.key)
    assert len(live) == 3


def test_a_limit_that_is_not_a_whole_number_is_a_setup_error_naming_the_key(
    limited: Any, rows: Any, caplog: pytest.LogCaptureFixture
) -> None:
    rt = limited(-1, 3, ManualClock())
    err(remember(rt, "The ingest worker restarts at midnight"), "tool_failed")
    assert "[plugins.memory] writes_per_hour: must be a whole number, 0 or more" in caplog.text
    assert rows("SELECT id FROM junior_memory_memories") == []


def test_the_environment_overrides_the_config_file(limited: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = ManualClock()
    monkeypatch.setenv("JUNIOR_MEMORY_WRITES_PER_HOUR", "1")
    rt = limited(0, 0, clock)
    ok(remember(rt, "The ingest worker restarts at midnight"))
    assert err(remember(rt, "The ingest worker logs to the ops bucket"), "rejected")["allowed"] == 1
