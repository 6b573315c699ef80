"""memory__remember with replaces: supersession in one transaction, scoped like forget, on SQLite and Postgres."""

from __future__ import annotations

import json
from typing import Any

import click
import pytest
from click.testing import CliRunner
from junior_memory import Candidate, MemoryPlugin
from memory_helpers import ALICE, BOB, PRIVATE, PUBLIC, ScriptedExtractor, ctx, err, ok

from junior_core import Message, Runtime, ToolContext

ACTIVE = "SELECT id, content FROM junior_memory_memories WHERE archived_at IS NULL ORDER BY content"


def remember(rt: Runtime, content: str, kind: str = "preference", context: ToolContext | None = None,
             **extra: Any) -> dict[str, Any]:
    return rt.execute_tool("memory__remember", {"content": content, "kind": kind, **extra}, context or ctx())


def contents(rt: Runtime, tool: str, arguments: dict[str, Any], context: ToolContext | None = None) -> list[str]:
    return [m["content"] for m in ok(rt.execute_tool(tool, arguments, context or ctx()))["memories"]]


@pytest.mark.parametrize("how", ["id", "prefix", "words"])
def test_replace_archives_the_old_memory_and_only_the_new_one_is_read(rt: Runtime, rows: Any, how: str) -> None:
    old = ok(remember(rt, "I want answers in English"))
    ok(remember(rt, "I like dark mode"))
    target = {"id": old["id"], "prefix": old["id"][:6], "words": "answers in English"}[how]
    new = ok(remember(rt, "I want answers in German", replaces=target, context=ctx(call="call-replace")))
    assert new["created"] is True
    assert new["replaced"] == {k: old[k] for k in ("id", "content", "kind", "visible_to", "created_at")}

    (row,) = rows("SELECT * FROM junior_memory_memories WHERE id = :id", id=old["id"])
    assert (row["archive_reason"], row["superseded_by"]) == ("superseded", new["id"])
    assert row["archived_at"] is not None
    assert [r["content"] for r in rows(ACTIVE)] == ["I like dark mode", "I want answers in German"]
    events = rows("SELECT memory_id, event, reason, tool_call_id FROM junior_memory_events "
                  "WHERE event IN ('superseded', 'created') AND memory_id IN (:a, :b) ORDER BY id",
                  a=old["id"], b=new["id"])
    assert events[-2:] == [
        {"memory_id": new["id"], "event": "created", "reason": f"replaces:{old['id']}", "tool_call_id": "call-replace"},
        {"memory_id": old["id"], "event": "superseded", "reason": f"superseded_by:{new['id']}",
         "tool_call_id": "call-replace"},
    ]

    assert contents(rt, "memory__list", {}) == ["I want answers in German", "I like dark mode"]
    assert contents(rt, "memory__search", {"query": "answers English German"}) == ["I want answers in German"]
    (block,) = rt.prompt_context(ctx(), "which language should answers be in?", host=False)
    assert "German" in block and "English" not in block
    # The old version is history now: it cannot be replaced or forgotten again.
    err(rt.execute_tool("memory__forget", {"id": old["id"]}, ctx()), "not_found")


def test_a_retried_replacement_returns_the_first_answer_and_writes_nothing_more(rt: Runtime, rows: Any) -> None:
    old = ok(remember(rt, "Deploys happen on Tuesdays", "knowledge"))
    first = ok(remember(rt, "Deploys happen on Thursdays", "knowledge", ctx(call="call-r1"), replaces=old["id"]))
    again = ok(remember(rt, "Deploys happen on Thursdays", "knowledge", ctx(call="call-r1"), replaces=old["id"]))
    assert (again["id"], again["created"]) == (first["id"], False)
    assert [r["content"] for r in rows(ACTIVE)] == ["Deploys happen on Thursdays"]
    assert len(rows("SELECT * FROM junior_memory_events WHERE event = 'superseded'")) == 1


def test_an_ambiguous_replace_answers_the_candidates_and_saves_nothing(rt: Runtime, rows: Any) -> None:
    a = ok(remember(rt, "Deploys of the API happen on Tuesdays", "procedure"))
    b = ok(remember(rt, "Deploys of the web app happen on Tuesdays", "procedure"))
    before = rows(ACTIVE)
    refused = err(remember(rt, "Deploys happen on Thursdays", "procedure", replaces="deploys tuesdays"), "ambiguous")
    assert sorted(c["id"] for c in refused["candidates"]) == sorted([a["id"], b["id"]])
    assert "memory__remember" in refused["message"] and "replaces" in refused["message"]
    assert "nothing was saved" in refused["message"]
    # Words that only partly match are a question too, never a guess.
    partly = err(remember(rt, "Deploys happen on Thursdays", "procedure", replaces="API deploys on Mondays"),
                 "ambiguous")
    assert [(c["id"], c["matched"]) for c in partly["candidates"]] == [(a["id"], ["api", "deploys"])]
    assert rows(ACTIVE) == before


def test_replacing_another_persons_memory_is_not_found_and_changes_nothing(rt: Runtime, rows: Any) -> None:
    alice = ok(remember(rt, "I want answers in English", context=ctx(ALICE, PUBLIC)))
    before = rows("SELECT * FROM junior_memory_memories")
    for target in (alice["id"], alice["id"][:8], "answers in English"):
        missing = err(remember(rt, "I want answers in German", context=ctx(BOB, PUBLIC), replaces=target), "not_found")
        assert set(missing) == {"code", "message"} and "Nothing was saved" in missing["message"]
    # Exactly what a made-up id answers: nothing tells Bob the memory exists.
    invented = err(remember(rt, "I want answers in German", context=ctx(BOB, PUBLIC), replaces="0123456789abcdef"),
                   "not_found")
    assert invented["message"].replace("0123456789abcdef", alice["id"]) == err(
        remember(rt, "I want answers in German", context=ctx(BOB, PUBLIC), replaces=alice["id"]), "not_found"
    )["message"]
    assert rows("SELECT * FROM junior_memory_memories") == before


def test_a_memory_is_replaced_only_within_the_scope_the_new_one_goes_to(rt: Runtime, rows: Any) -> None:
    shared = ok(remember(rt, "Standups are at 9:30", "procedure", ctx(ALICE, PUBLIC)))
    private = ok(remember(rt, "Standups are at 9:45", "procedure", ctx(ALICE, PRIVATE)))
    # A preference is personal: it cannot archive the workspace's procedure, even one the speaker can see.
    err(remember(rt, "I skip standups", "preference", ctx(ALICE, PUBLIC), replaces=shared["id"]), "not_found")
    # The private thread's procedure is invisible from the public channel, and the other way round.
    err(remember(rt, "Standups are at 10:00", "procedure", ctx(ALICE, PUBLIC), replaces=private["id"]), "not_found")
    err(remember(rt, "Standups are at 10:00", "procedure", ctx(BOB, PRIVATE), replaces=shared["id"]), "not_found")
    assert [r["id"] for r in rows(ACTIVE)] == [shared["id"], private["id"]]
    # Another member of the workspace may update the workspace's procedure.
    ok(remember(rt, "Standups are at 10:00", "procedure", ctx(BOB, PUBLIC), replaces=shared["id"]))
    assert [r["content"] for r in rows(ACTIVE)] == ["Standups are at 10:00", "Standups are at 9:45"]


def test_a_failure_between_the_two_writes_leaves_the_old_memory_current(
    rt: Runtime, rows: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sqlalchemy import text

    old = ok(remember(rt, "I want answers in English"))
    plugin = rt.plugin("memory")
    store = plugin.store()
    # The archive of the old memory fails (a CHECK constraint) after the new memory was inserted in the same
    # transaction.
    monkeypatch.setattr(store.sql, "supersede", text("UPDATE junior_memory_memories SET scope = 'nobody' WHERE id = :mid"))
    err(remember(rt, "I want answers in German", replaces=old["id"]), "tool_failed")
    assert rows(ACTIVE) == [{"id": old["id"], "content": "I want answers in English"}]
    assert rows("SELECT * FROM junior_memory_events WHERE event <> 'created' OR memory_id <> :id", id=old["id"]) == []


def test_a_target_archived_after_the_lookup_rolls_the_new_memory_back(rt: Runtime, rows: Any) -> None:
    from junior_memory.scope import personal_scope
    from junior_memory.store import ReplaceTargetGone

    old = ok(remember(rt, "I want answers in English"))
    ok(rt.execute_tool("memory__forget", {"id": old["id"]}, ctx()))
    store = rt.plugin("memory").store()
    with pytest.raises(ReplaceTargetGone):
        store.remember(content="I want answers in German", kind="preference", scope=personal_scope(ALICE.key),
                       actor_key=ALICE.key, source_key=None, origin="api", replaces=old["id"])
    assert rows(ACTIVE) == []
    assert rows("SELECT * FROM junior_memory_memories WHERE content = 'I want answers in German'") == []


def test_replacing_with_the_same_words_keeps_the_memory(rt: Runtime, rows: Any) -> None:
    old = ok(remember(rt, "I want answers in English"))
    same = ok(remember(rt, "I want answers in English.", replaces=old["id"]))
    assert (same["id"], same["created"]) == (old["id"], False) and "replaced" not in same
    assert rows(ACTIVE) == [{"id": old["id"], "content": "I want answers in English"}]


def test_history_shows_the_chain_oldest_first(rt: Runtime, db_url: str) -> None:
    first = ok(remember(rt, "I want answers in English"))
    second = ok(remember(rt, "I want answers in German", replaces=first["id"]))
    third = ok(remember(rt, "I want answers in French", replaces="answers in German"))

    @click.group()
    def junior() -> None:
        pass

    MemoryPlugin(url=db_url).register_commands(cli=junior)
    for ident in (first["id"], second["id"][:8], third["id"]):
        result = CliRunner().invoke(junior, ["memory", "history", ident, "--json"], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        versions = json.loads(result.output)["versions"]
        assert [(v["id"], v["superseded_by"], v["archive_reason"]) for v in versions] == [
            (first["id"], second["id"], "superseded"),
            (second["id"], third["id"], "superseded"),
            (third["id"], None, None),
        ]
        assert [e["event"] for e in versions[0]["events"]] == ["created", "superseded"]
    text = CliRunner().invoke(junior, ["memory", "history", third["id"]], catch_exceptions=False).output
    assert text.index("English") < text.index("German") < text.index("French")
    assert f"replaced by {second['id']}" in text and "current" in text


def test_extraction_may_replace_the_speakers_own_preference_through_the_gate(make_runtime: Any, rows: Any) -> None:
    turn = [Message("user", "Actually, answer me in German from now on", actor=ALICE)]
    rt = make_runtime()
    old = ok(remember(rt, "Prefers answers in English", context=ctx(ALICE, PUBLIC)))
    bob = ok(remember(rt, "Prefers answers in English", context=ctx(BOB, PUBLIC)))
    shared = ok(remember(rt, "Answers in this workspace are in English", "knowledge", ctx(ALICE, PUBLIC)))
    extractor = ScriptedExtractor([
        Candidate("Prefers answers in German", "preference", [0], about_speaker=True, replaces="answers in English"),
        # Dropped by the gate: only a preference may replace, and only the speaker's own.
        Candidate("Answers in this workspace are in German", "knowledge", [0], replaces=shared["id"]),
        Candidate("Prefers answers in Dutch", "preference", [0], about_speaker=True, replaces=bob["id"]),
    ])
    make_runtime(extractor=extractor).after_turn(ctx(ALICE, PUBLIC), turn)
    active = {r["id"]: r["content"] for r in rows(ACTIVE)}
    assert old["id"] not in active and bob["id"] in active and shared["id"] in active
    assert sorted(active.values()) == [
        "Answers in this workspace are in English", "Prefers answers in English", "Prefers answers in German",
    ]
    (new,) = rows("SELECT id, origin FROM junior_memory_memories WHERE content = 'Prefers answers in German'")
    assert new["origin"] == "extraction"
    assert rows("SELECT superseded_by FROM junior_memory_memories WHERE id = :id", id=old["id"]) == [
        {"superseded_by": new["id"]}
    ]
