"""The four memory tools through Runtime.execute_tool, with real ToolContexts, on SQLite and Postgres."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from junior_memory.tools import SOURCE
from memory_helpers import ALICE, BOB, PRIVATE, PRIVATE_OTHER, PUBLIC, PUBLIC_OTHER_THREAD, ctx, err, ok

from junior_core import Conversation, Runtime, ToolContext

ACTIVE = "SELECT * FROM junior_memory_memories WHERE archived_at IS NULL"


def remember(rt: Runtime, content: str, kind: str = "preference", context: ToolContext | None = None,
             **extra: Any) -> dict[str, Any]:
    return rt.execute_tool("memory__remember", {"content": content, "kind": kind, **extra}, context or ctx())


def test_explicit_preference_is_one_active_personal_row_for_the_speaker(rt: Runtime, rows: Any) -> None:
    context = ctx(ALICE, PUBLIC, "call-pref-1")
    result = ok(remember(rt, "I prefer terse PR summaries", context=context))
    assert result["created"] is True
    assert result["kind"] == "preference"
    # Compact: observed_at equal to created_at and a null expires_at are left out; who sees it is said once.
    assert set(result) == {"id", "content", "kind", "visible_to", "created", "created_at"}
    assert "UALICE" not in str(result) and "scope_key" not in result

    active = rows(ACTIVE)
    assert len(active) == 1
    row = active[0]
    assert (row["scope"], row["scope_key"], row["subject_type"], row["subject_key"]) == (
        "personal", "slack:T1:UALICE", "actor", "slack:T1:UALICE",
    )
    assert row["actor_key"] == "slack:T1:UALICE"
    assert row["source_key"] == "slack:T1:CPUBLIC:1700000000.000100"
    assert (row["origin"], row["tool_call_id"]) == ("tool", "call-pref-1")
    assert row["idempotency_key"] == "tool:slack:T1:CPUBLIC:1700000000.000100:call-pref-1"
    events = rows("SELECT event, actor_key FROM junior_memory_events WHERE memory_id = :id", id=row["id"])
    assert events == [{"event": "created", "actor_key": "slack:T1:UALICE"}]


def test_procedure_in_a_public_channel_is_workspace_scoped_and_not_personal(rt: Runtime, rows: Any) -> None:
    ok(remember(rt, "Releases need two approvals before merge", "procedure", ctx(ALICE, PUBLIC)))
    active = rows(ACTIVE)
    assert [(r["scope"], r["scope_key"], r["subject_type"]) for r in active] == [
        ("conversation", "slack:T1", "workspace")
    ]
    assert rows(ACTIVE + " AND scope = 'personal'") == []
    # Anyone in another public channel of the workspace sees it; nobody in a private thread does.
    assert len(ok(rt.execute_tool("memory__list", {}, ctx(BOB, PUBLIC_OTHER_THREAD)))["memories"]) == 1
    assert ok(rt.execute_tool("memory__list", {}, ctx(BOB, PRIVATE)))["memories"] == []


def test_knowledge_in_a_private_channel_belongs_to_the_channel(rt: Runtime, rows: Any) -> None:
    result = ok(remember(rt, "The staging database is rebuilt every Sunday", "knowledge", ctx(ALICE, PRIVATE)))
    assert result["visible_to"] == "everyone in this private conversation"
    active = rows(ACTIVE)
    assert [(r["scope"], r["scope_key"], r["subject_type"], r["source_key"]) for r in active] == [
        ("conversation", "slack:T1:GPRIVATE", "channel", "slack:T1:GPRIVATE:1700000100.000300")
    ]
    # Another thread and a top-level message of the same private channel see it; other conversations do not.
    assert len(ok(rt.execute_tool("memory__list", {}, ctx(BOB, PRIVATE)))["memories"]) == 1
    assert len(ok(rt.execute_tool("memory__list", {}, ctx(ALICE, PRIVATE_OTHER)))["memories"]) == 1
    top_level = Conversation("slack", "T1", "GPRIVATE", message_ts="1700000300.000100", visibility="private")
    assert len(ok(rt.execute_tool("memory__list", {}, ctx(BOB, top_level)))["memories"]) == 1
    other_private = Conversation("slack", "T1", "GOTHER", thread_ts="1700000100.000300", visibility="private")
    assert ok(rt.execute_tool("memory__list", {}, ctx(ALICE, other_private)))["memories"] == []
    assert ok(rt.execute_tool("memory__list", {}, ctx(ALICE, PUBLIC)))["memories"] == []


def test_a_procedure_saved_in_a_dm_is_there_at_the_next_dm_message(rt: Runtime, rows: Any) -> None:
    first = Conversation("slack", "T1", "D0ALICE", message_ts="1700000400.000100", visibility="private")
    result = ok(remember(rt, "Deploys go out through the release channel", "procedure", ctx(ALICE, first)))
    assert result["visible_to"] == "everyone in this direct message" and "scope" not in result
    following = Conversation("slack", "T1", "D0ALICE", message_ts="1700000460.000200", visibility="private")
    listed = ok(rt.execute_tool("memory__list", {}, ctx(ALICE, following)))["memories"]
    assert [m["content"] for m in listed] == ["Deploys go out through the release channel"]
    another_dm = Conversation("slack", "T1", "D0BOB", message_ts="1700000460.000200", visibility="private")
    assert ok(rt.execute_tool("memory__list", {}, ctx(ALICE, another_dm)))["memories"] == []
    assert ok(rt.execute_tool("memory__list", {}, ctx(ALICE, PUBLIC)))["memories"] == []
    assert [r["scope_key"] for r in rows(ACTIVE)] == ["slack:T1:D0ALICE"]


def test_retry_with_the_same_tool_call_id_makes_one_row(rt: Runtime, rows: Any) -> None:
    first = ok(remember(rt, "I like dark mode", context=ctx(call="retry-1")))
    again = ok(remember(rt, "I like dark mode", context=ctx(call="retry-1")))
    assert (again["id"], again["created"]) == (first["id"], False)
    # The same call id with other words is not a retry: refused, and the first memory is not shown.
    reworded = err(remember(rt, "I like dark mode a lot", context=ctx(call="retry-1")), "rejected")
    assert "new" in reworded["message"] and "dark mode" not in str(reworded)
    assert len(rows(ACTIVE)) == 1


def test_another_speaker_reusing_a_tool_call_id_gets_nothing_of_the_first_memory(rt: Runtime, rows: Any) -> None:
    alice_said = "I prefer reviews from Carol on Fridays"
    first = ok(remember(rt, alice_said, context=ctx(ALICE, PUBLIC, "call-shared")))
    (before,) = rows(ACTIVE)
    refused = err(remember(rt, "I prefer long summaries", context=ctx(BOB, PUBLIC, "call-shared")), "rejected")
    assert "tool_call_id" in refused["message"]
    assert "Carol" not in str(refused) and first["id"] not in str(refused)
    # Bob's identical wording of Alice's memory is not a replay either: his preference is his own scope.
    err(remember(rt, alice_said, context=ctx(BOB, PUBLIC, "call-shared")), "rejected")
    assert rows(ACTIVE) == [before]
    again = ok(remember(rt, alice_said, context=ctx(ALICE, PUBLIC, "call-shared")))
    assert (again["id"], again["created"]) == (first["id"], False)


def test_same_content_in_the_same_scope_and_kind_is_deduplicated(rt: Runtime, rows: Any) -> None:
    first = ok(remember(rt, "I prefer tabs over spaces."))
    second = ok(remember(rt, "  i PREFER   tabs over spaces  "))
    assert (second["id"], second["created"]) == (first["id"], False)
    assert "already remembered" in second["note"]
    assert len(rows(ACTIVE)) == 1
    events = [e["event"] for e in rows("SELECT event FROM junior_memory_events ORDER BY id")]
    assert events == ["created", "deduplicated"]
    # Same words, other kind: a separate memory.
    assert ok(remember(rt, "I prefer tabs over spaces", "procedure"))["created"] is True


def test_forget_archives_and_hides_from_list_search_and_recall(rt: Runtime, rows: Any) -> None:
    memory = ok(remember(rt, "I prefer terse PR summaries"))
    other = ok(remember(rt, "Deploy on Tuesdays only", "procedure"))
    assert rt.prompt_context(ctx(), "write a PR summary", host=False)
    forgotten = ok(rt.execute_tool("memory__forget", {"id": memory["id"]}, ctx(call="forget-1")))["forgotten"]
    assert forgotten["id"] == memory["id"]
    assert forgotten["archive_reason"] == "tool_removed"

    (row,) = rows("SELECT * FROM junior_memory_memories WHERE id = :id", id=memory["id"])
    assert row["archived_at"] is not None and row["archive_reason"] == "tool_removed"
    listed = ok(rt.execute_tool("memory__list", {}, ctx()))["memories"]
    assert [m["id"] for m in listed] == [other["id"]]
    assert ok(rt.execute_tool("memory__search", {"query": "terse PR summaries"}, ctx()))["memories"] == []
    assert rt.prompt_context(ctx(), "write a PR summary", host=False) == []
    events = rows("SELECT event, reason, tool_call_id FROM junior_memory_events WHERE memory_id = :id ORDER BY id",
                  id=memory["id"])
    assert events[-1] == {"event": "archived", "reason": "tool_removed", "tool_call_id": "forget-1"}
    # Remembering it again after forgetting makes a new, active memory.
    again = ok(remember(rt, "I prefer terse PR summaries"))
    assert again["created"] is True and again["id"] != memory["id"]


def test_forget_by_unique_prefix_and_by_query(rt: Runtime) -> None:
    memory = ok(remember(rt, "I prefer answers in British English"))
    ok(rt.execute_tool("memory__forget", {"id": memory["id"][:8].upper()}, ctx()))
    ok(remember(rt, "The on-call rota lives in the ops wiki", "knowledge"))
    forgotten = ok(rt.execute_tool("memory__forget", {"query": "on-call rota"}, ctx()))["forgotten"]
    assert forgotten["content"] == "The on-call rota lives in the ops wiki"
    assert ok(rt.execute_tool("memory__list", {}, ctx()))["memories"] == []


def test_forget_with_several_matches_returns_candidates_and_archives_nothing(rt: Runtime) -> None:
    ok(remember(rt, "Deploys to staging need a ticket", "procedure"))
    ok(remember(rt, "Deploys to production need two approvals", "procedure"))
    error = err(rt.execute_tool("memory__forget", {"query": "deploys need"}, ctx()), "ambiguous")
    assert len(error["candidates"]) == 2
    assert {"id", "content", "kind"} <= set(error["candidates"][0])
    assert "memory__forget again with the id" in error["message"]
    assert len(ok(rt.execute_tool("memory__list", {}, ctx()))["memories"]) == 2


def test_forget_never_archives_on_a_partial_match(rt: Runtime) -> None:
    ok(remember(rt, "I prefer dark mode in every editor"))
    error = err(rt.execute_tool("memory__forget", {"query": "light mode preference"}, ctx()), "ambiguous")
    assert [c["content"] for c in error["candidates"]] == ["I prefer dark mode in every editor"]
    assert len(ok(rt.execute_tool("memory__list", {}, ctx()))["memories"]) == 1


def test_forget_needs_exactly_one_of_id_or_query(rt: Runtime) -> None:
    err(rt.execute_tool("memory__forget", {}, ctx()), "invalid_arguments")
    err(rt.execute_tool("memory__forget", {"id": "abcd", "query": "x"}, ctx()), "invalid_arguments")
    err(rt.execute_tool("memory__forget", {"query": "nothing like this"}, ctx()), "not_found")
    err(rt.execute_tool("memory__forget", {"id": "not-hex!"}, ctx()), "not_found")


def test_another_actor_can_never_reach_a_personal_memory(rt: Runtime, rows: Any) -> None:
    secret = ok(remember(rt, "I prefer to be called Ally", context=ctx(ALICE, PUBLIC)))
    as_bob = ctx(BOB, PUBLIC)
    assert ok(rt.execute_tool("memory__list", {}, as_bob))["memories"] == []
    assert ok(rt.execute_tool("memory__search", {"query": "called Ally"}, as_bob))["memories"] == []
    assert rt.prompt_context(as_bob, "what should I call Ally", host=False) == []
    missing = err(rt.execute_tool("memory__forget", {"id": secret["id"]}, as_bob), "not_found")
    assert "Ally" not in missing["message"]
    err(rt.execute_tool("memory__forget", {"id": secret["id"][:6]}, as_bob), "not_found")
    err(rt.execute_tool("memory__forget", {"query": "called Ally"}, as_bob), "not_found")
    assert rows(ACTIVE)[0]["id"] == secret["id"]
    # Alice still sees it, from any conversation.
    assert len(ok(rt.execute_tool("memory__list", {}, ctx(ALICE, PRIVATE)))["memories"]) == 1


def test_sql_metacharacters_and_unicode_are_stored_verbatim(rt: Runtime, rows: Any) -> None:
    content = "Robert'); DROP TABLE junior_memory_memories;-- likes 100% _wild_ cards, \"quotes\" \\ and 日本語 ✓ 🚀"
    result = ok(remember(rt, content, "knowledge"))
    assert result["content"] == content
    assert rows(ACTIVE)[0]["content"] == content
    found = ok(rt.execute_tool("memory__search", {"query": "DROP TABLE 日本語"}, ctx()))["memories"]
    assert [m["content"] for m in found] == [content]
    ok(rt.execute_tool("memory__search", {"query": "'; -- % _ \" OR 1=1"}, ctx()))


def test_a_label_suffixed_thread_ts_is_refused_never_rekeyed(rt: Runtime, rows: Any) -> None:
    with pytest.raises(ValueError, match="17000000.memory-explicit"):
        Conversation("slack", "T1", "C1", thread_ts="17000000.memory-explicit", visibility="public")
    # Even a conversation that slipped past validation is refused by the tool, not keyed to something else.
    bad = Conversation("slack", "T1", "C1", thread_ts="1700000000.000100", visibility="public")
    object.__setattr__(bad, "thread_ts", "17000000.memory-explicit")
    for kind in ("preference", "procedure"):
        error = err(remember(rt, "I prefer tea", kind, ToolContext(ALICE, bad, "c1")), "rejected")
        assert "timestamp" in error["message"]
    assert rows("SELECT id FROM junior_memory_memories") == []


@pytest.mark.parametrize(
    "extra",
    [{"user_id": "UBOB"}, {"actor": "slack:T1:UBOB"}, {"scope": "personal"}, {"scope_key": "slack:T1"}],
)
def test_identity_in_arguments_is_invalid(rt: Runtime, rows: Any, extra: dict[str, str]) -> None:
    error = err(remember(rt, "I prefer tea", **extra), "invalid_arguments")
    assert any(next(iter(extra)) in d["message"] for d in error["details"])
    assert rows("SELECT id FROM junior_memory_memories") == []


def test_a_preference_without_an_actor_is_rejected(rt: Runtime, rows: Any) -> None:
    error = err(remember(rt, "I prefer tea", context=ctx(None, PUBLIC)), "rejected")
    assert "no known speaker" in error["message"]
    # Team knowledge needs no actor.
    ok(remember(rt, "Tea is in the second cupboard", "knowledge", ctx(None, PUBLIC)))
    assert len(rows(ACTIVE)) == 1


def test_the_tool_keeps_a_memory_through_the_date_it_was_given(rt: Runtime) -> None:
    day = (datetime.now(UTC) + timedelta(days=10)).date()
    saved = ok(rt.execute_tool("memory__remember", {"content": "The lobby is closed for painting",
                                                     "kind": "knowledge", "expires_at": day.isoformat()}, ctx()))
    assert saved["expires_at"] == f"{day + timedelta(days=1)}T00:00:00Z"


def test_expired_memories_are_hidden_from_every_read(rt: Runtime, rows: Any) -> None:
    soon = (datetime.now(UTC) + timedelta(days=2)).isoformat()
    result = ok(remember(rt, "The office is closed for the offsite", "knowledge", expires_at=soon))
    assert result["expires_at"] is not None
    err(remember(rt, "Old news", "knowledge", expires_at="2001-01-01"), "rejected")
    err(remember(rt, "Bad date", "knowledge", expires_at="next tuesday"), "invalid_arguments")
    assert len(ok(rt.execute_tool("memory__list", {}, ctx()))["memories"]) == 1
    store = rt.plugin("memory").store()
    later = datetime.now(UTC) + timedelta(days=3)
    from junior_memory.scope import read_scopes

    scopes = read_scopes(ctx())
    assert store.visible(scopes, now=later) == []
    assert store.search(scopes, "office offsite", now=later) == []
    assert len(store.search(scopes, "office offsite")) == 1


def test_list_and_search_limits_and_order(rt: Runtime) -> None:
    for i in range(7):
        ok(remember(rt, f"Service number {i} is owned by team {i}", "knowledge"))
    listed = ok(rt.execute_tool("memory__list", {"limit": 3}, ctx()))["memories"]
    assert [m["content"] for m in listed] == [f"Service number {i} is owned by team {i}" for i in (6, 5, 4)]
    err(rt.execute_tool("memory__list", {"limit": 51}, ctx()), "invalid_arguments")
    found = ok(rt.execute_tool("memory__search", {"query": "service owned", "limit": 2}, ctx()))["memories"]
    assert len(found) == 2
    # Equal relevance: newest first.
    assert [m["content"] for m in found] == [f"Service number {i} is owned by team {i}" for i in (6, 5)]


def test_search_ranks_by_relevance(rt: Runtime) -> None:
    ok(remember(rt, "Reviews happen on Fridays", "procedure"))
    ok(remember(rt, "PR reviews need a summary; terse PR summaries are preferred for PR reviews", "procedure"))
    ok(remember(rt, "Lunch is at noon", "knowledge"))
    found = ok(rt.execute_tool("memory__search", {"query": "PR summaries reviews"}, ctx()))["memories"]
    assert found[0]["content"].startswith("PR reviews need a summary")
    assert "Lunch is at noon" not in [m["content"] for m in found]


def test_memory_tools_are_found_by_search_without_a_source(rt: Runtime) -> None:
    top = [t["tool_name"] for t in rt.search_tools("remember that I prefer terse PR summaries")["tools"][:3]]
    assert "memory__remember" in top
    top = [t["tool_name"] for t in rt.search_tools("forget that preference")["tools"][:3]]
    assert "memory__forget" in top
    for request, tool in (
        ("What did I tell you about how I like code reviews?", "memory__search"),
        ("Show me everything you have stored about me.", "memory__list"),
        ("That rule about two deploy approvals is no longer true, please delete it.", "memory__forget"),
    ):
        assert tool in [t["tool_name"] for t in rt.search_tools(request)["tools"][:3]], request
    listed = rt.search_tools(None, source="memory", max_results=10)
    assert sorted(t["tool_name"] for t in listed["tools"]) == [
        "memory__forget", "memory__list", "memory__remember", "memory__search",
    ]
    assert listed["sources"] == [{"id": "memory", "description": SOURCE.description}]


def test_tools_are_deferred_with_strict_schemas(rt: Runtime) -> None:
    names = [t["name"] for t in rt.model_tools()]
    assert not any(name.startswith("memory__") for name in names)
    for entry in rt.catalog_tools():
        assert entry.tool.exposure == "deferred"
        assert entry.tool.input_schema["additionalProperties"] is False


KIND_FILTER = {
    "type": "array", "items": {"type": "string", "enum": ["preference", "procedure", "knowledge"]}, "minItems": 1,
    "maxItems": 3, "description": "Only memories of these kinds, e.g. [\"preference\"] for what you know about the "
    "speaker or [\"procedure\"] for how the team does things; default every kind.",
}


def test_the_schemas_come_from_the_signatures_as_they_were_written_by_hand() -> None:
    from junior_memory.tools import MemoryTools

    schemas = {tool.name: tool.input_schema for tool in MemoryTools(lambda: None).tools()}  # type: ignore[arg-type, return-value]
    assert schemas == {
        "remember": {
            "type": "object",
            "properties": {
                "content": {"type": "string",
                            "description": "One self-contained statement that names who or what it is about, as read "
                            "later by someone else: 'Dana prefers terse PR summaries', 'Deploys need two approvals' "
                            "(not 'I prefer...'). At most 4,000 characters."},
                "kind": {"type": "string", "enum": ["preference", "procedure", "knowledge"],
                         "description": "Decides who sees it. preference (about the speaker): only the person who "
                         "said it. procedure (how the team does a task) or knowledge (a durable fact about the shared "
                         "environment): in a public channel, everyone in this workspace's public channels; in a "
                         "direct message, everyone in this direct message; in a private channel, everyone in this "
                         "private conversation."},
                "expires_at": {"type": "string", "description": "When the memory stops being used: 'never' "
                               "(default); a date alone, '2027-03-31', meaning through the end of that day (UTC); or "
                               "a date and time, '2027-03-31T17:00:00Z' (no offset means UTC). Today's date is in "
                               "your instructions."},
                "replaces": {"type": "string", "description": "The id, an id prefix, or words of the memory this one "
                             "replaces; it is archived."},
            },
            "required": ["content", "kind"],
            "additionalProperties": False,
        },
        "forget": {
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "The memory's id, or a unique prefix of at least 4 characters."},
                "query": {"type": "string",
                          "description": "Words from the memory to forget, when you do not have its id."},
            },
            "additionalProperties": False,
        },
        "list": {
            "type": "object",
            "properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 50,
                                     "description": "At most 50; default 20.", "default": 20},
                           "cursor": {"type": "string", "maxLength": 200, "description": "next_cursor from the "
                                      "previous page, to see the memories after it."},
                           "kind": KIND_FILTER},
            "additionalProperties": False,
        },
        "search": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "maxLength": 1000, "description": "The words to look for: a name, a topic, a few telling words."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50, "description": "At most 50; default 10.",
                          "default": 10},
                "kind": KIND_FILTER,
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    }


def test_hook_register_sources(rt: Runtime) -> None:
    assert rt.sources == [{"id": "memory", "description": SOURCE.description}]
    assert sorted(entry.tool_name for entry in rt.catalog_tools()) == [
        "memory__forget", "memory__list", "memory__remember", "memory__search",
    ]
    annotations = {entry.tool_name: entry.tool.annotations for entry in rt.catalog_tools()}
    assert annotations["memory__list"]["readOnlyHint"] is True
    assert annotations["memory__forget"]["destructiveHint"] is True


def test_hook_shutdown(db_url: str) -> None:
    from junior_memory import MemoryPlugin

    plugin = MemoryPlugin(url=db_url)
    rt = Runtime(plugins=[plugin])
    ok(rt.execute_tool("memory__list", {}, ctx()))
    pool = plugin.store().engine.pool
    assert pool.checkedin() >= 1
    rt.close()
    assert plugin.store().engine.pool is not pool  # disposed: the old pool's connections are closed


@pytest.mark.parametrize(
    "url", ["notadb://x", "notadb://app:s3cret@h/x", "postgresql+nosuchdriver://u@h/d", "mysql+pymysql://u@h/d"]
)
def test_a_bad_database_url_is_a_configuration_error_not_unavailable(
    url: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import importlib.util

    from junior_memory import MemoryPlugin

    if "pymysql" in url and importlib.util.find_spec("pymysql") is not None:
        pytest.skip("pymysql is installed, so this URL is not missing its driver")

    monkeypatch.setenv("JUNIOR_MEMORY_URL", url)
    with Runtime(plugins=[MemoryPlugin()]) as rt, caplog.at_level("ERROR", logger="junior.memory"):
        failed = err(remember(rt, "I prefer terse PR summaries"), "tool_failed")
        assert "unreachable" not in failed["message"]
        assert rt.prompt_context(ctx(), "write a PR summary", host=False) == []
    logged = [r.getMessage() for r in caplog.records if r.name == "junior.memory"]
    assert any("JUNIOR_MEMORY_URL" in m and url.split(":")[0] in m for m in logged), logged
    assert "s3cret" not in caplog.text


def test_a_replayed_tool_call_id_with_another_kind_is_rejected(rt: Runtime, rows: Any) -> None:
    first = ok(remember(rt, "Deploys happen on Tuesdays", "knowledge", ctx(call="call-kind")))
    # Same words, same workspace scope, other kind: a different request, not a retry of the first.
    refused = err(remember(rt, "Deploys happen on Tuesdays", "procedure", ctx(call="call-kind")), "rejected")
    assert "new tool_call_id" in refused["message"] and first["id"] not in str(refused)
    assert [(r["id"], r["kind"]) for r in rows(ACTIVE)] == [(first["id"], "knowledge")]


@pytest.mark.parametrize("content", ["Kettle lives on floor 2 \ud83d", "\udfff"])
def test_a_lone_surrogate_never_reaches_the_database(rt: Runtime, rows: Any, content: str) -> None:
    err(remember(rt, content, "knowledge"), "invalid_arguments")
    assert rows(ACTIVE) == []


def test_each_summary_reads_whole_and_says_who_will_see_the_result() -> None:
    from junior_memory.tools import MemoryTools

    from junior_core._discovery.analysis import SUMMARY_LIMIT, summarize

    tools = {tool.name: tool for tool in MemoryTools(lambda: None).tools()}  # type: ignore[arg-type, return-value]
    for name, tool in tools.items():
        first = " ".join(tool.description.strip().split("\n\n")[0].split())
        assert len(first) <= SUMMARY_LIMIT and summarize(tool.description) == first, name
    # One vocabulary: the summaries and the kind description use the words a memory's visible_to answers with.
    assert "only the person who said it" in summarize(tools["remember"].description)
    assert "who sees it" in summarize(tools["list"].description)
    assert "who sees it" in summarize(tools["search"].description)
    assert "everyone who saw it" in summarize(tools["forget"].description)
    kind = tools["remember"].input_schema["properties"]["kind"]["description"]
    for words in ("only the person who said it", "everyone in this workspace's public channels",
                  "everyone in this direct message", "everyone in this private conversation"):
        assert words in kind
    for name in ("remember", "forget", "list", "search"):
        assert "long-term memory" in summarize(tools[name].description), name
    assert "Dana prefers" in tools["remember"].input_schema["properties"]["content"]["description"]
    assert SOURCE.description.startswith("This workspace's long-term memory")


def test_entries_leave_out_what_equals_another_field_or_its_default(rt: Runtime) -> None:
    from junior_memory.rules import MemoryRecord
    from junior_memory.tools import entry

    later = (datetime.now(UTC) + timedelta(days=3)).date().isoformat()
    ok(remember(rt, "The office is closed for the offsite", "knowledge", expires_at=later))
    ok(remember(rt, "Deploys need two approvals", "procedure"))
    listed = {m["content"]: m for m in ok(rt.execute_tool("memory__list", {}, ctx()))["memories"]}
    plain = listed["Deploys need two approvals"]
    assert set(plain) == {"id", "content", "kind", "visible_to", "created_at"}
    assert listed["The office is closed for the offsite"]["expires_at"].startswith(
        (datetime.fromisoformat(later) + timedelta(days=1)).date().isoformat()
    )
    assert "observed_at" not in str(ok(rt.execute_tool("memory__search", {"query": "approvals"}, ctx())))

    at = datetime(2026, 3, 1, tzinfo=UTC)
    imported = MemoryRecord(
        id="ab" * 16, scope="personal", scope_key="slack:T1:UALICE", kind="preference", subject_type="actor",
        subject_key="slack:T1:UALICE", content="x", actor_key=None, source_key=None, origin="api", tool_call_id=None,
        created_at=at + timedelta(days=1), observed_at=at, expires_at=None, archived_at=None, archive_reason=None,
        superseded_by=None,
    )
    assert entry(imported)["observed_at"] == "2026-03-01T00:00:00Z"  # kept when it says something of its own
