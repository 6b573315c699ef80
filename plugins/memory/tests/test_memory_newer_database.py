"""A database stamped by a newer junior-memory: one line saying so, for the model and the operator; data untouched."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from junior_memory import MemoryPlugin
from memory_helpers import ctx, err, ok

from junior_core import Runtime

JUNIOR = str(Path(sys.executable).parent / "junior")
NEWER = "9999_from_the_future"
LINE = f"this database was written by a newer junior-memory (revision {NEWER}); upgrade junior-memory"
TABLES = ("junior_memory_memories", "junior_memory_events", "junior_memory_alembic_version")


@pytest.fixture
def newer(db_url: str, rows: Any) -> dict[str, list[dict[str, Any]]]:
    """A database with one memory, then stamped with a revision this junior-memory does not know."""
    with Runtime(plugins=[MemoryPlugin(url=db_url)]) as rt:
        ok(rt.execute_tool("memory__remember", {"content": "Deploys need two approvals", "kind": "procedure"}, ctx()))
    from sqlalchemy import create_engine, text

    engine = create_engine(db_url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE junior_memory_alembic_version SET version_num = :v"), {"v": NEWER})
    engine.dispose()
    return snapshot(rows)


def snapshot(rows: Any) -> dict[str, list[dict[str, Any]]]:
    return {table: sorted((r for r in rows(f"SELECT * FROM {table}")), key=repr) for table in TABLES}


def junior(db_url: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("JUNIOR_")}
    env.update(JUNIOR_MEMORY_URL=db_url, JUNIOR_LOAD_PLUGINS="memory", XDG_DATA_HOME=str(tmp_path / "data"))
    return subprocess.run([JUNIOR, *args], env=env, capture_output=True, text=True, timeout=120)


def test_every_tool_answers_unavailable_with_the_one_line(
    db_url: str, newer: dict[str, Any], rows: Any, caplog: pytest.LogCaptureFixture
) -> None:
    calls = [
        ("memory__remember", {"content": "Standup is at 9:30", "kind": "knowledge"}),
        ("memory__list", {}),
        ("memory__search", {"query": "deploys"}),
        ("memory__forget", {"query": "Deploys need two approvals"}),
    ]
    with caplog.at_level(logging.INFO), Runtime(plugins=[MemoryPlugin(url=db_url)]) as rt:
        for name, arguments in calls:
            error = err(rt.execute_tool(name, arguments, ctx()), "unavailable")
            assert LINE in error["message"], error
            assert "upgrades junior-memory; do not retry" in error["message"]
        assert rt.prompt_context(ctx(), "how do deploys work?", host=False) == []
    assert f"memory recall skipped: {LINE}" in caplog.text
    assert "Traceback" not in caplog.text and "Can't locate revision" not in caplog.text
    assert snapshot(rows) == newer


@pytest.mark.slow
@pytest.mark.parametrize("command", [["memory", "migrate"], ["memory", "list"], ["memory", "stats"],
                                     ["memory", "show", "abcd"]])
def test_the_operator_gets_one_line_and_the_data_stays(
    db_url: str, tmp_path: Path, newer: dict[str, Any], rows: Any, command: list[str]
) -> None:
    done = junior(db_url, tmp_path, *command)
    assert done.returncode == 1, done
    assert done.stderr.strip().splitlines() == [f"Error: {LINE}"], done.stderr
    assert snapshot(rows) == newer


@pytest.mark.slow
def test_info_names_the_newer_revision(db_url: str, tmp_path: Path, newer: dict[str, Any]) -> None:
    done = junior(db_url, tmp_path, "memory", "info")
    assert done.returncode == 1
    assert f"revision: {NEWER}" in done.stdout and f"error: {LINE}" in done.stdout
    assert "Traceback" not in done.stderr
