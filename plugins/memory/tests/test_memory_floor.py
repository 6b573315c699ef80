"""Search and forget without strangers: the floor, matched words, who sees each memory, empty answers that inform."""

from __future__ import annotations

from typing import Any

import pytest
from memory_helpers import ALICE, BOB, PRIVATE, PUBLIC, ctx, err, ok

from junior_core import Conversation, Runtime, ToolContext

# Memories that share one common word (or stem) with a query they do not answer...
STRANGERS = {
    "lisbon": ("I'm on the Lisbon office schedule", "preference"),
    "pinging": ("Keep pinging the on-call channel until someone answers", "procedure"),
    "data_pipeline": ("The data-pipeline repo runs the nightly ETL jobs", "knowledge"),
    "tue_thu": ("Deploys go out only on Tuesdays and Thursdays", "procedure"),
    "pr_policy": ("Every PR needs an approval from the team that owns the code", "procedure"),
}
# ...and memories that hold the query's telling words: these must still be found.
CONTROLS = {
    "passwords": ("Admin passwords rotate every 90 days, on the first Monday of the quarter", "procedure"),
    "dave": ("Dave has read-only DB access to the analytics replica", "knowledge"),
    "jenkins": ("The Jenkins pipeline for the web app runs on every merge", "knowledge"),
    "freeze": ("No deploys on Fridays: the deploy freeze starts Friday at noon", "procedure"),
}
SEARCHES = [
    ("admin password rotation schedule", "passwords"),
    ("ping Dave DB access", "dave"),
    ("Jenkins pipeline", "jenkins"),
    ("Friday deploy freeze", "freeze"),
]


def remember(rt: Runtime, content: str, kind: str, context: ToolContext | None = None) -> dict[str, Any]:
    return ok(rt.execute_tool("memory__remember", {"content": content, "kind": kind}, context or ctx()))


def search(rt: Runtime, query: str, context: ToolContext | None = None, **extra: Any) -> dict[str, Any]:
    return ok(rt.execute_tool("memory__search", {"query": query, **extra}, context or ctx()))


@pytest.fixture
def seeded(make_runtime: Any) -> Runtime:
    rt: Runtime = make_runtime(embedder=False)
    for content, kind in [*STRANGERS.values(), *CONTROLS.values()]:
        remember(rt, content, kind)
    return rt


@pytest.mark.parametrize(("query", "control"), SEARCHES)
def test_a_search_returns_what_holds_its_telling_words_and_no_stranger(seeded: Runtime, query: str,
                                                                       control: str) -> None:
    found = [m["content"] for m in search(seeded, query)["memories"]]
    assert found == [CONTROLS[control][0]], (query, found)


def test_each_result_says_which_query_words_it_holds_and_who_sees_it(seeded: Runtime) -> None:
    (admin,) = search(seeded, "admin password rotation schedule")["memories"]
    assert admin["matched"] == ["admin", "password", "rotation"]
    assert admin["visible_to"] == "everyone in this workspace's public channels"
    assert "similarity" not in admin  # keyword search: no similarity to report
    (lisbon,) = search(seeded, "Lisbon office")["memories"]
    assert (lisbon["matched"], lisbon["visible_to"]) == (["lisbon", "office"], "only the person who said it")


def test_a_single_word_still_finds_every_memory_holding_it(seeded: Runtime) -> None:
    found = {m["content"] for m in search(seeded, "pipeline")["memories"]}
    assert found == {STRANGERS["data_pipeline"][0], CONTROLS["jenkins"][0]}


def test_a_rare_word_outweighs_a_common_one_it_travels_with(make_runtime: Any) -> None:
    rt: Runtime = make_runtime(embedder=False)
    for n in range(6):
        remember(rt, f"Deploy step {n} is checked by the release captain", "procedure")
    remember(rt, "Grafana dashboards live in the ops folder", "knowledge")
    # "deploy" is in most memories here, "grafana" in one: the Grafana note holds the query's telling word.
    assert [m["content"] for m in search(rt, "grafana deploy")["memories"]] == [
        "Grafana dashboards live in the ops folder"]


def test_an_empty_search_says_how_many_memories_are_visible_here_and_never_what_others_hold(rt: Runtime) -> None:
    remember(rt, "The on-call rota is in the ops wiki", "knowledge", ctx(ALICE, PUBLIC))
    remember(rt, "I prefer tabs for indentation", "preference", ctx(ALICE, PUBLIC))
    remember(rt, "The payroll export goes to Ines every Friday", "knowledge", ctx(BOB, PRIVATE))
    empty = search(rt, "payroll export", ctx(ALICE, PUBLIC))
    assert empty["memories"] == [] and empty["visible_here"] == 2
    assert "other conversations" in empty["note"] and "not visible here" in empty["note"]
    assert "payroll" not in empty["note"].lower() and "Ines" not in empty["note"]
    assert "2 memories" in empty["note"]
    # Bob sees one memory (the private channel's); where nothing is visible at all, the answer says so.
    assert search(rt, "on-call rota", ctx(BOB, PRIVATE))["visible_here"] == 1
    elsewhere = Conversation("slack", "T1", "GELSEWHERE", thread_ts="1700000900.000100", visibility="private")
    nobody = search(rt, "anything", ctx(BOB, elsewhere))
    assert (nobody["memories"], nobody["visible_here"]) == ([], 0)
    assert "No memory is visible in this conversation yet" in nobody["note"]


def test_recall_injects_no_stranger(seeded: Runtime) -> None:
    (block,) = seeded.prompt_context(ctx(), "what is the Friday deploy freeze?", host=False)
    assert "freeze starts Friday" in block and "Tuesdays" not in block
    (admin,) = seeded.prompt_context(ctx(), "who can rotate the admin password?", host=False)
    assert "rotate every 90 days" in admin and "Lisbon" not in admin


def test_forget_by_words_never_offers_a_memory_that_shares_one_common_word(make_runtime: Any) -> None:
    rt: Runtime = make_runtime(embedder=False)
    policy = remember(rt, *STRANGERS["pr_policy"])
    remember(rt, *CONTROLS["freeze"])
    missing = err(rt.execute_tool("memory__forget", {"query": "Marco owns data-pipeline repo"}, ctx()), "not_found")
    assert "nothing was forgotten" in missing["message"]
    assert [m["id"] for m in ok(rt.execute_tool("memory__list", {}, ctx()))["memories"]].count(policy["id"]) == 1


def test_forget_candidates_say_which_words_they_hold(seeded: Runtime) -> None:
    refused = err(seeded.execute_tool("memory__forget", {"query": "Marco owns data-pipeline repo"}, ctx()),
                  "ambiguous")
    assert [(c["content"], c["matched"]) for c in refused["candidates"]] == [
        (STRANGERS["data_pipeline"][0], ["data", "pipeline", "repo"])]
    assert "matched" in refused["message"]
    forgotten = ok(seeded.execute_tool("memory__forget", {"query": "Jenkins pipeline merge"}, ctx()))["forgotten"]
    assert forgotten["content"] == CONTROLS["jenkins"][0]
    assert forgotten["visible_to"] == "everyone in this workspace's public channels"


def test_list_pages_past_the_limit_with_a_total_and_who_sees_each(rt: Runtime) -> None:
    made = [remember(rt, f"Fact number {n} about the build", "knowledge") for n in range(5)]
    remember(rt, "I prefer short answers", "preference")
    remember(rt, "Bob's own note", "preference", ctx(BOB, PUBLIC))
    seen: list[str] = []
    cursor = None
    pages = 0
    while pages < 10:
        page = ok(rt.execute_tool("memory__list", {"limit": 2, **({"cursor": cursor} if cursor else {})}, ctx()))
        pages += 1
        assert page["total"] == 6
        assert all(m["visible_to"] for m in page["memories"])
        seen += [m["content"] for m in page["memories"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert pages == 3 and len(seen) == 6 == len(set(seen))
    assert set(seen) == {m["content"] for m in made} | {"I prefer short answers"}
    whole = ok(rt.execute_tool("memory__list", {}, ctx()))
    assert (whole["total"], whole["next_cursor"], len(whole["memories"])) == (6, None, 6)
    assert {m["visible_to"] for m in whole["memories"]} == {
        "only the person who said it", "everyone in this workspace's public channels"}


def test_a_cursor_it_did_not_make_is_a_clear_error(rt: Runtime) -> None:
    for cursor in ("not-a-cursor", "MjAyNnxub3Bl", ""):
        bad = err(rt.execute_tool("memory__list", {"cursor": cursor}, ctx()), "invalid_arguments")
        assert "memory__list without cursor" in bad["message"]


def test_matches_are_ordered_by_how_telling_the_words_they_hold_are(rt: Runtime) -> None:
    # "deploy" is in many memories here, "rollback" in one: the memory holding the rare word comes first, though
    # the other repeats the common words (which full-text ranks favour, and ts_rank weighs alike however rare).
    for i in range(6):
        remember(rt, f"Deploy checklist item {i}: tag the deploy", "procedure")
    common = remember(rt, "Deploy plan: deploy, deploy again, then the deploy plan review", "procedure")
    rare = remember(rt, "Rollback plan: revert the release tag", "procedure")
    found = search(rt, "deploy rollback plan")["memories"]
    ids = [m["id"] for m in found]
    assert rare["id"] in ids and common["id"] in ids
    assert ids.index(rare["id"]) < ids.index(common["id"]), [m["content"] for m in found]
    assert found[0]["matched"] == ["rollback", "plan"]


def test_the_words_the_database_leaves_out_weigh_nothing(seeded: Runtime, db_url: str, rows: Any) -> None:
    # "did" and "after" are stop words of Postgres's english configuration: it searches for "Ines" alone, so the
    # floor weighs "Ines" alone too, on every backend (counted as held by no memory, they would outweigh her name).
    remember(seeded, "Ines booked the offsite venue", "knowledge")
    found = search(seeded, "What did Ines do after that?")["memories"]
    assert [(m["content"], m["matched"]) for m in found] == [("Ines booked the offsite venue", ["ines"])]
    if db_url.startswith("postgresql"):
        from junior_memory.rules import SNOWBALL_STOP_WORDS

        lexemes = rows("SELECT w, ts_lexize('english_stem', w) AS lexemes FROM unnest(CAST(:words AS text[])) AS w",
                       words=sorted(SNOWBALL_STOP_WORDS))
        assert len(lexemes) == len(SNOWBALL_STOP_WORDS) and all(r["lexemes"] == [] for r in lexemes), lexemes


def test_the_visible_count_counts_each_scope_once_from_the_live_memories_index(rt: Runtime) -> None:
    from junior_memory.content import utcnow
    from junior_memory.scope import read_scopes

    remember(rt, "Alice prefers tea over coffee", "preference")
    remember(rt, "The VPN guide lives in the IT wiki", "knowledge")
    remember(rt, "Standup is at 9:30", "procedure")
    gone = remember(rt, "The old office closes in May", "knowledge")
    ok(rt.execute_tool("memory__forget", {"id": gone["id"]}, ctx()))
    ok(rt.execute_tool("memory__remember", {"content": "The sale ends tomorrow", "kind": "knowledge",
                                            "expires_at": "2999-01-01T00:00:00Z"}, ctx()))
    store = rt.plugin("memory").store()
    personal, workspace = read_scopes(ctx())
    assert store.count([personal, workspace]) == 4  # the forgotten memory is not counted, the unexpired one is
    # A scope named twice counts once; each scope alone adds up to both.
    assert store.count([workspace, personal, workspace, personal]) == 4
    assert (store.count([personal]), store.count([workspace])) == (1, 3)
    # Each scope's count reads the index of current memories by scope and expiry, never the rows.
    statement = store.sql.count_visible(2).compile(store.engine)
    params = store.sql.scope_params([personal, workspace], utcnow())
    with store.engine.connect() as conn:
        if store.backend == "postgresql":
            conn.exec_driver_sql("SET enable_seqscan = off")
            conn.exec_driver_sql("SET enable_bitmapscan = off")
            plan = "\n".join(r[0] for r in conn.exec_driver_sql(f"EXPLAIN {statement}", params).all())
            assert plan.count("Index Only Scan using ix_junior_memory_memories_live") == 2, plan
        else:
            values = statement.construct_params(params)
            args = tuple(str(values[name]) for name in statement.positiontup or ())  # the plan needs no real values
            plan = "\n".join(str(r[-1]) for r in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", args).all())
            assert plan.count("COVERING INDEX ix_junior_memory_memories_live") == 2, plan
