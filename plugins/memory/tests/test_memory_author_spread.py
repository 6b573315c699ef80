"""Author spread: one author's volume cannot fill another person's recall or search (SQLite and Postgres).

An attacker writes hundreds of workspace notes repeating the words a victim will ask about; the victim's own
matching notes still reach the recall block and the search answer, and one author takes at most half of the
places while others match (all of them when no one else does). By keywords alone and fused with an embedder's
nearest memories, each on SQLite and Postgres.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from junior_memory import MemoryPlugin
from junior_memory.scope import conversation_scope
from memory_helpers import BOB, PUBLIC, ConceptEmbedder, ctx, ok

from junior_core import Actor, Runtime

MALLORY = Actor("slack", "T1", "UMALLORY")
VICTIM_NOTES = ("The release notes for 4.2 go out on Thursday after the freeze",
                "Release notes are drafted by the docs team in the shared folder")
ATTACK_NOTES = 220


def flood(rt: Runtime, plugin: MemoryPlugin, *, victim: bool = True) -> None:
    """The victim's notes first (older), then the attacker's, each repeating the asked-for words."""
    store = plugin.store()
    scope = conversation_scope(PUBLIC)
    if victim:
        for note in VICTIM_NOTES:
            ok(rt.execute_tool("memory__remember", {"content": note, "kind": "knowledge"}, ctx(BOB, PUBLIC)))
    for i in range(ATTACK_NOTES):
        store.remember(content=f"Release notes, release notes, release notes: item {i} of the release notes list",
                       kind="knowledge", scope=scope, actor_key=MALLORY.key, source_key=PUBLIC.source_key,
                       origin="api")
    assert store.flush_vectors(60)  # semantic: every vector written before the search


@pytest.fixture(params=["keyword", "semantic"])
def flooded(db_url: str, request: pytest.FixtureRequest) -> Iterator[tuple[Runtime, MemoryPlugin]]:
    """A runtime searching by keywords only, or fusing them with a (deterministic) embedder's nearest memories."""
    plugin = MemoryPlugin(url=db_url, embedder=ConceptEmbedder() if request.param == "semantic" else False)
    rt = Runtime(plugins=[plugin])
    yield rt, plugin
    rt.close()


def authors(memories: list[dict[str, Any]], rows: Any) -> list[str]:
    by_id = {row["id"]: row["actor_key"] for row in rows("SELECT id, actor_key FROM junior_memory_memories")}
    return [by_id[memory["id"]] for memory in memories]


def test_recall_shows_the_victims_notes_among_an_attackers_flood(flooded: Any) -> None:
    rt, plugin = flooded
    flood(rt, plugin)
    (block,) = rt.prompt_context(ctx(BOB, PUBLIC), "what do we have about the release notes?", host=False)
    for note in VICTIM_NOTES:
        assert note in block
    assert block.count("item ") == 3  # the attacker keeps at most ceil(5 / 2) of the five places


def test_search_shows_the_victims_notes_and_caps_the_attackers_share(flooded: Any, rows: Any) -> None:
    rt, plugin = flooded
    flood(rt, plugin)
    found = ok(rt.execute_tool("memory__search", {"query": "release notes", "limit": 10}, ctx(BOB, PUBLIC)))
    by = authors(found["memories"], rows)
    assert by.count(BOB.key) == 2
    assert by.count(MALLORY.key) == 5 and len(by) == 7  # at most ceil(10 / 2): the rest would only be the attacker's


def test_one_author_alone_still_fills_the_answer(flooded: Any) -> None:
    rt, plugin = flooded
    flood(rt, plugin, victim=False)
    found = ok(rt.execute_tool("memory__search", {"query": "release notes", "limit": 10}, ctx(BOB, PUBLIC)))
    assert len(found["memories"]) == 10
    (block,) = rt.prompt_context(ctx(BOB, PUBLIC), "the release notes", host=False)
    assert block.count("item ") == 5


def test_the_share_is_configurable(flooded: Any, rows: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "junior.toml"
    config.write_text("[plugins.memory]\nauthor_share = 0.2\n")
    monkeypatch.setenv("JUNIOR_CONFIG", str(config))
    rt, plugin = flooded
    flood(rt, plugin)
    found = ok(rt.execute_tool("memory__search", {"query": "release notes", "limit": 10}, ctx(BOB, PUBLIC)))
    by = authors(found["memories"], rows)
    assert by.count(BOB.key) == 2 and by.count(MALLORY.key) == 2


def test_a_share_out_of_range_is_a_setup_error_naming_the_key(
    flooded: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    config = tmp_path / "junior.toml"
    config.write_text("[plugins.memory]\nauthor_share = 2\n")
    monkeypatch.setenv("JUNIOR_CONFIG", str(config))
    rt, _ = flooded
    answer = rt.execute_tool("memory__search", {"query": "release notes"}, ctx(BOB, PUBLIC))
    assert answer["ok"] is False and answer["error"]["code"] == "tool_failed", answer
    assert "[plugins.memory] author_share: must be a number above 0 and at most 1" in caplog.text
